//! Exit codes and the one-line error format.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success (or the recorded command's own code) |
//! | 1 | error: unreadable input, a process that does not exist, I/O; `doctor --strict`: a figure is off |
//! | 2 | bad arguments (sizes, durations, flags) |
//! | 10 | guard: stopped, swap budget spent |
//! | 11 | guard: stopped, false fit flagged (`--on-false-fit stop`) |
//! | 12 | guard: gave up waiting for free memory |
//! | 13 | guard: stopped, the forecast put the budget or the floor under `--stop-before` |
//! | 14 | guard: stopped, memory pressure reached `--stop-at-pressure` |
//! | 126 | the command could not be run (not executable) |
//! | 127 | the command was not found |
//! | 128+N | the command (or swapsight) was ended by signal N |
//!
//! The guard's stop codes (10, 11, 13, 14, and 1 for a probe or trace that failed)
//! are decided with their reasons, in `swapsight::guard::StopReason::exit_code`.

use std::process::ExitCode;

pub const ERROR: u8 = 1;
pub const USAGE: u8 = 2;
pub const WAIT_TIMEOUT: u8 = 12;
pub const NOT_EXECUTABLE: u8 = 126;
pub const NOT_FOUND: u8 = 127;

/// A failure that carries its own exit code.
#[derive(Debug)]
pub struct Fail {
    pub code: u8,
    pub message: String,
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fail {}

pub fn fail(code: u8, message: impl Into<String>) -> anyhow::Error {
    Fail {
        code,
        message: message.into(),
    }
    .into()
}

/// Prints `swapsight: <error: cause: cause>` on one line.
pub fn error(e: &anyhow::Error) -> ExitCode {
    let code = e.downcast_ref::<Fail>().map_or(ERROR, |f| f.code);
    eprintln!("swapsight: {e:#}");
    ExitCode::from(code)
}

/// Clap's errors, cut to their first line; help and version print whole.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            // Everything before clap's "Usage:" block, folded onto one line
            // (a missing argument is named on the line after the first).
            let text = e.render().to_string();
            let what: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:"))
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with("tip:")
                        && !l.starts_with("For more information")
                })
                .collect();
            let what = what.join(" ");
            let what = what.strip_prefix("error: ").unwrap_or(&what);
            eprintln!("swapsight: {what} (see --help)");
            ExitCode::from(USAGE)
        }
    }
}

/// A child's exit status as our exit code: its code, or 128 + signal.
pub fn from_status(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c as u8),
        (None, Some(s)) => ExitCode::from(128u8.wrapping_add(s as u8)),
        _ => ExitCode::from(ERROR),
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
