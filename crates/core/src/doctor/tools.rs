//! Finding and running the OS's own tools for the doctor. A tool that is
//! missing, fails, or hangs is a finding to show, never an error: each run
//! has a timeout (then the tool is killed) and its output a cap.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Most of a tool's output that is read: `footprint`'s JSON of one process
/// and `top`'s table are far smaller.
pub const MAX_OUTPUT: u64 = 4 << 20;

/// How long a tool may take by default. `footprint` and `top -l 1` take
/// about a second.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Folders where the tools live, searched after `$PATH`: `sysctl` and
/// `swapon` are in `sbin`, which a user's `$PATH` may lack.
const SYSTEM_DIRS: [&str; 6] = [
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/local/bin",
    "/opt/homebrew/bin",
];

/// The path of the tool `name`, if there is one.
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SYSTEM_DIRS.iter().map(PathBuf::from))
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What running a tool gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Its standard output (lossy UTF-8, capped at [`MAX_OUTPUT`]).
    Output(String),
    /// Not on this machine.
    Missing,
    /// It ran and failed, timed out or could not start: why.
    Failed(String),
}

/// Runs `name args…` with no input, for at most `timeout`.
pub fn run(name: &str, args: &[&str], timeout: Duration) -> Outcome {
    let Some(path) = find(name) else {
        return Outcome::Missing;
    };
    let mut child = match Command::new(&path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The same words and decimal point whatever the user's locale.
        .env("LC_ALL", "C")
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("cannot start {name}: {e}")),
    };
    // Each pipe is read on a thread that hands back what it read; a pipe
    // still held open by something the tool left behind is given up on
    // once the tool is over, instead of waited for.
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                // Read to the cap, then drain, so the tool never blocks
                // on a full pipe.
                let mut p = p.take(MAX_OUTPUT);
                let _ = p.read_to_end(&mut buf);
                let _ = tx.send(std::mem::take(&mut buf));
                let _ = std::io::copy(&mut p.into_inner(), &mut std::io::sink());
            } else {
                let _ = tx.send(buf);
            }
        });
        rx
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!(
                    "{name} took more than {} and was stopped",
                    crate::units::format_duration(timeout)
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break Err(format!("{name}: {e}")),
        }
    };
    let grace = Duration::from_secs(1);
    let stdout = out.recv_timeout(grace).unwrap_or_default();
    let stderr = err.recv_timeout(grace).unwrap_or_default();
    match status {
        Err(why) => Outcome::Failed(why),
        Ok(s) if s.success() => Outcome::Output(String::from_utf8_lossy(&stdout).into_owned()),
        Ok(s) => {
            let said = String::from_utf8_lossy(&stderr);
            let said = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            Outcome::Failed(super::clean_text(
                &format!(
                    "{name} failed ({s}){}{said}",
                    if said.is_empty() { "" } else { ": " }
                ),
                200,
            ))
        }
    }
}
