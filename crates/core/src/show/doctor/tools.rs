//! Finding and running the OS's own tools for the doctor. A tool that is
//! missing, fails, or hangs is a finding to show, never an error.
//!
//! The doctor often runs as root, so a tool is never looked up on `$PATH`:
//! a same-named program earlier in it (a user's `~/bin/ps`, a folder another
//! user owns) would answer for the system's and run as root. Each tool is
//! taken from the absolute paths its OS installs it at ([`INSTALLED`]), and
//! only when it and every folder above it belong to root or to this user and
//! no one else may write them ([`trusted`]).
//!
//! Each run is contained: the tool gets a process group of its own, which is
//! killed once the tool ends or its time is up (a child it left in the
//! background goes with it), and on Linux a parent-death signal, so a doctor
//! killed mid-run leaves no tool behind. What the tool printed is kept as it
//! arrives, so output already read is not lost to a pipe that a leftover
//! child still holds open.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most of a tool's output that is read: `footprint`'s JSON of one process
/// and `top`'s table are far smaller.
pub const MAX_OUTPUT: u64 = 4 << 20;

/// How long a tool may take by default. `footprint` and `top -l 1` take
/// about a second.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// How long the pipes may stay open once the tool and its group are gone:
/// only a child that left the group (`setsid`) still holds them then.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// Where each tool the doctor runs is installed: macOS's own in `/usr/bin`
/// and `/usr/sbin` (`sysctl`, `ioreg`); on Linux where Debian, Ubuntu and
/// Fedora put procps (`free`, `ps`), util-linux (`swapon`) and coreutils
/// (`uname`), in `/usr` or, before the `/usr` merge, in `/bin` and `/sbin`.
pub const INSTALLED: &[(&str, &[&str])] = &[
    ("free", &["/usr/bin/free", "/bin/free"]),
    ("ps", &["/usr/bin/ps", "/bin/ps"]),
    ("swapon", &["/usr/sbin/swapon", "/sbin/swapon"]),
    ("uname", &["/usr/bin/uname", "/bin/uname"]),
    ("footprint", &["/usr/bin/footprint"]),
    ("vm_stat", &["/usr/bin/vm_stat"]),
    ("sysctl", &["/usr/sbin/sysctl"]),
    ("memory_pressure", &["/usr/bin/memory_pressure"]),
    ("top", &["/usr/bin/top"]),
    ("sw_vers", &["/usr/bin/sw_vers"]),
    ("ioreg", &["/usr/sbin/ioreg"]),
];

/// The places [`INSTALLED`] gives for `name` (none for a tool it does not
/// know).
pub fn places(name: &str) -> &'static [&'static str] {
    INSTALLED
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(&[], |(_, p)| p)
}

/// Why no trusted copy of a tool was found: each place looked at, and what
/// was wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    pub(crate) looked: Vec<(String, String)>,
}

impl NotFound {
    /// "looked at /usr/bin/free (not there), /bin/free (…)".
    pub fn describe(&self) -> String {
        if self.looked.is_empty() {
            return "no known place for it on this OS".into();
        }
        let each: Vec<String> = self
            .looked
            .iter()
            .map(|(p, why)| format!("{p} ({why})"))
            .collect();
        format!("looked at {}", each.join(", "))
    }
}

/// The first trusted copy of the tool `name` at its installed places.
pub fn find(name: &str) -> Result<PathBuf, NotFound> {
    find_in(places(name), euid())
}

/// The first of `places` that is an executable file trusted by `me`.
pub fn find_in(places: &[&str], me: u32) -> Result<PathBuf, NotFound> {
    let mut looked = Vec::new();
    for place in places {
        let path = Path::new(place);
        let why = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "not there".to_string(),
            Err(e) => e.to_string(),
            Ok(m) if !m.is_file() => "not a file".into(),
            Ok(m) if !is_executable(&m) => "not executable".into(),
            Ok(_) => match trusted(path, me) {
                Ok(real) => return Ok(real),
                Err(why) => why,
            },
        };
        looked.push((place.to_string(), why));
    }
    Err(NotFound { looked })
}

fn is_executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

fn euid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// Owner and mode of one file or folder on a tool's way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub(crate) uid: u32,
    pub(crate) mode: u32,
}

/// Whether `entry` (the tool or a folder above it) could only have been
/// put there by root or by `me`: owned by one of them and writable by no
/// one else (a sticky world-writable folder such as `/tmp` lets anyone add
/// a name, so it is refused too). `None` when trusted, else why not.
pub fn distrust(entry: Entry, me: u32) -> Option<String> {
    if !crate::util::outpath::trusted_owner(entry.uid, me) {
        return Some(format!(
            "owned by uid {}, neither root nor this user",
            entry.uid
        ));
    }
    if entry.mode & 0o022 != 0 {
        return Some(format!(
            "writable by {} (mode {:o})",
            if entry.mode & 0o002 != 0 {
                "anyone"
            } else {
                "its group"
            },
            entry.mode & 0o7777
        ));
    }
    None
}

/// The tool's real path when it and every folder above it pass
/// [`distrust`]; else why not, naming the culprit. Links are resolved
/// first, so a link in a trusted folder is judged by what it points at.
pub fn trusted(path: &Path, me: u32) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let real = std::fs::canonicalize(path).map_err(|e| e.to_string())?;
    for p in real.ancestors() {
        let m = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let entry = Entry {
            uid: m.uid(),
            mode: m.mode(),
        };
        if let Some(why) = distrust(entry, me) {
            return Err(if p == real {
                why
            } else {
                format!("its folder {} is {why}", p.display())
            });
        }
    }
    Ok(real)
}

/// What running a tool gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Its standard output (lossy UTF-8, capped at [`MAX_OUTPUT`]).
    Output(String),
    /// No trusted copy on this machine: where it was looked for.
    Missing(NotFound),
    /// It ran and failed, timed out or could not start: why.
    Failed(String),
}

/// Runs the installed tool `name args…` with no input, for at most
/// `timeout`; the path that answered comes back beside the outcome.
pub fn run(name: &str, args: &[&str], timeout: Duration) -> (Outcome, Option<PathBuf>) {
    match find(name) {
        Ok(path) => (run_path(name, &path, args, timeout), Some(path)),
        Err(missing) => (Outcome::Missing(missing), None),
    }
}

/// One pipe read as it fills, to the cap, then drained so the tool never
/// blocks on a full pipe; what was read is in the buffer at any moment.
struct Capture {
    buf: Arc<Mutex<Vec<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Capture {
    fn start(pipe: Option<impl Read + Send + 'static>) -> Capture {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = std::sync::mpsc::channel();
        let shared = Arc::clone(&buf);
        std::thread::spawn(move || {
            if let Some(mut p) = pipe {
                let mut chunk = [0u8; 8192];
                loop {
                    match p.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            let mut b = shared.lock().unwrap_or_else(|e| e.into_inner());
                            let room = (MAX_OUTPUT as usize).saturating_sub(b.len());
                            b.extend_from_slice(&chunk[..n.min(room)]);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            }
            let _ = tx.send(());
        });
        Capture { buf, done }
    }

    /// What was read: at end of file, or by `grace` from now.
    fn take(self, grace: Duration) -> Vec<u8> {
        let _ = self.done.recv_timeout(grace);
        let mut b = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *b)
    }
}

/// Runs `path args…` (the tool `name`) with no input, in a process group of
/// its own, for at most `timeout`.
pub fn run_path(name: &str, path: &Path, args: &[&str], timeout: Duration) -> Outcome {
    let mut cmd = Command::new(path);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The same words and decimal point whatever the user's locale.
        .env("LC_ALL", "C")
        .process_group(0);
    die_with_parent(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("cannot start {name}: {e}")),
    };
    let group = child.id() as libc::pid_t;
    let out = Capture::start(child.stdout.take());
    let err = Capture::start(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        let ended = has_ended(group);
        if ended || start.elapsed() >= timeout {
            // The group goes while its leader is still unreaped, so its id
            // cannot have been handed to another process.
            kill_group(group);
            break match child.wait() {
                Ok(s) if ended || s.code().is_some() => Ok(s),
                Ok(_) => Err(format!(
                    "{name} took more than {} and was stopped",
                    crate::util::units::format_duration(timeout)
                )),
                Err(e) => Err(format!("{name}: {e}")),
            };
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out.take(DRAIN_GRACE);
    let stderr = err.take(DRAIN_GRACE);
    match status {
        // What it printed before it was stopped is kept in the reason: a
        // table cut off mid-way is not parsed as if it were whole.
        Err(why) if stdout.is_empty() => Outcome::Failed(why),
        Err(why) => Outcome::Failed(format!(
            "{why}, after printing {} bytes: {}",
            stdout.len(),
            super::clean_text(String::from_utf8_lossy(&stdout).trim(), 120)
        )),
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

/// Whether the process `pid` (our child) has ended, without reaping it.
fn has_ended(pid: libc::pid_t) -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is valid for writes; WNOWAIT leaves the child
    // unreaped, so `Child::wait` still collects it.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: waitid filled `info` when it returned 0; si_pid is 0 while
    // the child runs (WNOHANG).
    r != 0 || unsafe { info.si_pid() } != 0
}

/// SIGKILL to every process in the group `pgid`.
fn kill_group(pgid: libc::pid_t) {
    // SAFETY: killpg touches no memory; a group already gone is ESRCH.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
}

/// On Linux, the tool is killed when the doctor dies (SIGKILL or SIGTERM
/// included): `PR_SET_PDEATHSIG`. macOS has no such signal; there a
/// doctor killed mid-run leaves the tool to end by itself (each tool it
/// runs is a one-shot reader).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only prctl and getppid, both async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the signal was armed.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("the doctor is gone"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
