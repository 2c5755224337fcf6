//! `swapsight mark`: mark a phase in the running recording from any shell.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use swapsight::marks::{clean_name, running, trace_key, write_mark, NotAPhase, Running};

use crate::exit;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The phase runs until the next mark or an end mark. A command run under \
`record` or `guard` can mark phases itself by writing a line to the file named in $SWAPSIGHT_MARK \
(a line \"/\" ends the phase):
  echo decode > \"$SWAPSIGHT_MARK\"
  open(os.environ[\"SWAPSIGHT_MARK\"], \"a\").write(\"decode\\n\")

Without --trace, the newest running recording of this user gets the mark.

Examples:
  swapsight mark load
  swapsight mark decode --trace run.jsonl
  swapsight mark decode --end"
)]
pub struct Args {
    /// Phase name (up to 64 characters; control characters become '?')
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The recording writing this trace, when several run
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// End the phase instead of starting it
    #[arg(long)]
    pub end: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(name) = clean_name(args.name.as_bytes()) else {
        return Err(exit::fail(exit::USAGE, "the phase name is empty"));
    };
    // A name the recorder would read as an end or a counter is refused:
    // `mark /etc` would record an end.
    match swapsight::marks::not_a_phase(&name) {
        Some(NotAPhase::End) => {
            return Err(exit::fail(
                exit::USAGE,
                format!(
                    "a phase name cannot start with '/' ({name:?}); to end a phase, use --end"
                ),
            ))
        }
        Some(NotAPhase::Counter) => {
            return Err(exit::fail(
                exit::USAGE,
                format!(
                    "a phase name cannot start with {:?} ({name:?}): that line is a counter; use swapsight counter",
                    swapsight::marks::COUNTER_PREFIX
                ),
            ))
        }
        None => {}
    }
    let target = recording(args.trace.as_deref())?;
    let line = if args.end { format!("/{name}") } else { name };
    write_mark(&target.mark_path, &line).map_err(|e| {
        exit::fail(
            exit::ERROR,
            format!("cannot mark {}: {e}", target.mark_path.display()),
        )
    })?;
    eprintln!(
        "swapsight: marked {}{} in {} (recorder pid {})",
        if args.end { "the end of " } else { "" },
        line.trim_start_matches('/'),
        target.trace.display(),
        target.pid
    );
    Ok(ExitCode::SUCCESS)
}

/// The running recording that writes `trace`, else the newest of this
/// user's; one clear line when there is none.
pub fn recording(trace: Option<&Path>) -> anyhow::Result<Running> {
    let recorders = running();
    match trace {
        Some(t) => {
            let want = trace_key(t);
            recorders
                .into_iter()
                .find(|r| r.trace == want)
                .ok_or_else(|| {
                    exit::fail(
                        exit::ERROR,
                        format!("no running recording writes {}", t.display()),
                    )
                })
        }
        None => recorders.into_iter().next().ok_or_else(|| {
            exit::fail(
                exit::ERROR,
                "no recording is running: start one with swapsight record (or guard)",
            )
        }),
    }
}
