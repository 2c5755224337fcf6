//! Where recorders register, so that `swapsight mark` finds them: a private
//! per-user directory, one `rec-PID-MS` folder a recorder, holding `trace`
//! (what it records), `start` (its process start time) and the `mark` file.
//!
//! Root often runs with another user's environment (`su` without `-` keeps
//! `XDG_RUNTIME_DIR` and `TMPDIR`), and the folder such a variable names is
//! that user's to swap under us. So a candidate is used only when its parent
//! is the caller's own (or root's, and nobody else may rename in it), the
//! directory is opened once with `O_NOFOLLOW` and checked on the descriptor
//! (ours, mode 0700), and everything after works relative to that
//! descriptor (`openat`, `mkdirat`, `unlinkat`), never by path again.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Leftover mark directories of ended recorders are removed after this.
const STALE_AFTER: Duration = Duration::from_secs(24 * 3600);
/// A recorder's start looks for stale folders at most this often: a day of
/// recordings is hundreds of ended ones (kept for late writers), and
/// listing them at every start was half a millisecond at 685 of them — for
/// a test suite recording each test, more each test.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// The file whose time says when the folders were last looked through.
const SWEPT: &str = "swept";
/// Bytes read of a registration file; a path or a number fits easily.
const REGISTRATION_MAX: u64 = 64 * 1024;

fn uid() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory.
    unsafe { libc::getuid() }
}

/// `st_mode` is a `u16` on macOS, a `u32` on Linux.
#[allow(clippy::useless_conversion)]
fn mode_of(st: &rustix::fs::Stat) -> u32 {
    u32::from(st.st_mode)
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The per-user runtime directory, open.
#[derive(Debug)]
pub struct RuntimeDir {
    pub(crate) fd: OwnedFd,
    pub(crate) path: PathBuf,
}

/// Whether a folder with this owner and mode may hold our private directory:
/// the caller's own, or root's where no one else can rename entries (not
/// writable by others, or sticky like `/tmp`).
pub fn parent_is_safe(owner: u32, mode: u32, me: u32) -> bool {
    let others_write = mode & 0o022 != 0;
    let sticky = mode & 0o1000 != 0;
    owner == me || (owner == 0 && (!others_write || sticky))
}

/// Whether a directory with this owner and mode is private to `me`.
pub fn is_private(owner: u32, mode: u32, me: u32) -> bool {
    owner == me && mode & 0o077 == 0
}

/// `parent/name`, created mode 0700 if missing, opened and checked by
/// descriptor.
pub fn private_dir_in(parent: &Path, name: &str) -> io::Result<RuntimeDir> {
    let me = uid();
    let pfd = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let pst = rustix::fs::fstat(&pfd)?;
    if !parent_is_safe(pst.st_uid, mode_of(&pst), me) {
        return Err(io::Error::other(format!(
            "{} belongs to uid {}, not to this user",
            parent.display(),
            pst.st_uid
        )));
    }
    match rustix::fs::mkdirat(&pfd, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let fd = rustix::fs::openat(&pfd, name, DIR_FLAGS, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    let path = parent.join(name);
    if !is_private(st.st_uid, mode_of(&st), me) {
        return Err(io::Error::other(format!(
            "{} is not a private directory of this user (owner uid {}, mode {:o})",
            path.display(),
            st.st_uid,
            st.st_mode & 0o7777
        )));
    }
    Ok(RuntimeDir { fd, path })
}

/// The per-user directory where recorders register, the first that is
/// safe of: `$XDG_RUNTIME_DIR/swapsight`; for root, `/run/swapsight`;
/// `swapsight-UID` in `$TMPDIR` and in `/tmp`; else a private
/// `/tmp/swapsight-UID.N` (when another user made `/tmp/swapsight-UID`
/// first, to turn our marks off). A recorder and `swapsight mark` run by
/// the same user in the same environment find the same one.
pub fn runtime_dir() -> io::Result<RuntimeDir> {
    let me = uid();
    let mut tried = Vec::new();
    let mut attempt = |parent: &Path, name: &str| match private_dir_in(parent, name) {
        Ok(d) => Some(d),
        Err(e) => {
            tried.push(e.to_string());
            None
        }
    };
    if let Some(xdg) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        if xdg.is_absolute() {
            if let Some(d) = attempt(&xdg, "swapsight") {
                return Ok(d);
            }
        }
    }
    if me == 0 {
        if let Some(d) = attempt(Path::new("/run"), "swapsight") {
            return Ok(d);
        }
    }
    let own = format!("swapsight-{me}");
    let tmp = std::env::temp_dir();
    if tmp.is_absolute() && tmp != Path::new("/tmp") {
        if let Some(d) = attempt(&tmp, &own) {
            return Ok(d);
        }
    }
    if let Some(d) = attempt(Path::new("/tmp"), &own) {
        return Ok(d);
    }
    // Planted: numbered names, in order, so that `mark` finds the same.
    for n in 1..=8 {
        if let Some(d) = attempt(Path::new("/tmp"), &format!("{own}.{n}")) {
            return Ok(d);
        }
    }
    Err(io::Error::other(format!(
        "no private runtime directory: {}",
        tried.join("; ")
    )))
}

/// A running recorder found in the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// The recorder's process id.
    pub pid: u32,
    pub(crate) started_unix_ms: u64,
    /// Its `mark` file: each line written there is a mark (or a counter) in
    /// its trace.
    pub mark_path: PathBuf,
    /// The trace it writes.
    pub trace: PathBuf,
}

/// `rec-PID-MS` → (pid, ms).
pub(crate) fn parse_dir_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("rec-")?;
    let (pid, ms) = rest.split_once('-')?;
    Some((pid.parse().ok()?, ms.parse().ok()?))
}

/// Whether a process `pid` exists (any user's: EPERM says it does).
pub(crate) fn pid_exists(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(raw, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether the recorder that registered as `pid` with this start time still
/// runs: the pid alone may have been handed to another process since.
pub fn recorder_alive(pid: u32, registered_start: Option<u64>) -> bool {
    if !pid_exists(pid) {
        return false;
    }
    match (registered_start, crate::probe::start_time(pid)) {
        (Some(then), Some(now)) => then == now,
        // Start times unknown on this OS: the pid is all there is.
        _ => true,
    }
}

/// A small regular file in `dir`, never through a link or from a FIFO.
pub(crate) fn read_small(dir: &OwnedFd, name: &str) -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(REGISTRATION_MAX)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Writes a new small file in `dir` (never an existing one, never a link).
pub(crate) fn write_new(dir: &OwnedFd, name: &str, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    File::from(fd).write_all(bytes)
}

/// The running recorders of this user, newest first.
pub fn running() -> Vec<Running> {
    runtime_dir().map_or_else(|_| Vec::new(), |base| running_in(&base))
}

/// The `rec-*` folders under `base`, by name.
fn registrations(base: &RuntimeDir) -> Vec<(String, u32, u64)> {
    let Ok(dir) = rustix::fs::Dir::read_from(&base.fd) else {
        return Vec::new();
    };
    dir.flatten()
        .take(10_000)
        .filter_map(|e| {
            let name = String::from_utf8_lossy(e.file_name().to_bytes()).into_owned();
            let (pid, ms) = parse_dir_name(&name)?;
            Some((name, pid, ms))
        })
        .collect()
}

/// [`running`] registered under `base`.
pub fn running_in(base: &RuntimeDir) -> Vec<Running> {
    let mut found: Vec<Running> = registrations(base)
        .into_iter()
        .filter_map(|(name, pid, ms)| {
            let dir = rustix::fs::openat(&base.fd, name.as_str(), DIR_FLAGS, Mode::empty()).ok()?;
            let trace = read_small(&dir, "trace")?;
            let start = read_small(&dir, "start")
                .and_then(|b| std::str::from_utf8(&b).ok()?.trim().parse().ok());
            recorder_alive(pid, start).then(|| Running {
                pid,
                started_unix_ms: ms,
                mark_path: base.path.join(&name).join("mark"),
                trace: PathBuf::from(OsStr::from_bytes(&trace)),
            })
        })
        .collect();
    found.sort_by_key(|r| std::cmp::Reverse(r.started_unix_ms));
    found
}

/// Removes the folders of recorders that are gone and quiet for a day,
/// unless that was looked for within [`SWEEP_EVERY`]. The folders hold only
/// flat files, removed one by one through the descriptor.
pub(crate) fn remove_stale(base: &RuntimeDir) {
    if swept_within(base, SWEEP_EVERY) {
        return;
    }
    mark_swept(base);
    let now_ms = crate::util::units::unix_now_ms();
    let young_ms = u64::try_from(STALE_AFTER.as_millis()).unwrap_or(u64::MAX);
    for (name, pid, ms) in registrations(base) {
        // Made less than a day ago (its name says when): it cannot have been
        // quiet for a day. Ended recorders leave their folder for late
        // writers, so a day of recordings is hundreds of these: they are
        // passed over without a `stat` or a signal each.
        if now_ms.saturating_sub(ms) <= young_ms {
            continue;
        }
        let Ok(st) = rustix::fs::statat(&base.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let old = age(&st).is_some_and(|age| age > STALE_AFTER);
        if !old || pid_exists(pid) {
            continue;
        }
        let Ok(dir) = rustix::fs::openat(&base.fd, name.as_str(), DIR_FLAGS, Mode::empty()) else {
            // A link or a file with a registration's name: not ours to follow.
            let _ = rustix::fs::unlinkat(&base.fd, name.as_str(), AtFlags::empty());
            continue;
        };
        if let Ok(entries) = rustix::fs::Dir::read_from(&dir) {
            for e in entries.flatten().take(1000) {
                let n = e.file_name();
                if n.to_bytes() != b"." && n.to_bytes() != b".." {
                    let _ = rustix::fs::unlinkat(&dir, n, AtFlags::empty());
                }
            }
        }
        let _ = rustix::fs::unlinkat(&base.fd, name.as_str(), AtFlags::REMOVEDIR);
    }
}

/// Whether [`SWEPT`] is a plain file written within `span` (a clock set
/// back, a time in the future: not).
fn swept_within(base: &RuntimeDir, span: Duration) -> bool {
    rustix::fs::statat(&base.fd, SWEPT, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
        FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
            && age(&st).is_some_and(|age| age < span)
    })
}

/// How long ago `st` was last written; `None` for a time in the future.
fn age(st: &rustix::fs::Stat) -> Option<Duration> {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(st.st_mtime).unwrap_or(0));
    SystemTime::now().duration_since(at).ok()
}

/// Sets [`SWEPT`]'s time to now, making it if need be (not through a link:
/// the folder is ours alone, and `O_NOFOLLOW` all the same).
fn mark_swept(base: &RuntimeDir) {
    // Non-blocking: a FIFO under the name would otherwise hold the start
    // until something read it (with no reader the open fails at once).
    let flags =
        OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if let Ok(fd) = rustix::fs::openat(&base.fd, SWEPT, flags, Mode::from_raw_mode(0o600)) {
        let _ = File::from(fd).set_modified(SystemTime::now());
    }
}

/// The trace path as the registry holds it: absolute, its folder resolved,
/// its last component as given. The same whether the file exists yet or
/// not, so that `swapsight mark --trace run.jsonl` finds a recording whose
/// `-o run.jsonl` did not exist when it registered.
pub fn trace_key(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(name),
        _ => absolute,
    }
}
