//! Where swapsight writes a file (a trace, an export, a plot), found so that
//! no link another user planted is ever written through.
//!
//! swapsight runs as root on shared machines, and its outputs often go to
//! `/tmp`. A path is a string another user can change under us: a symbolic
//! link planted at `/tmp/report.csv` (or at a folder on the way) would turn
//! "write the CSV here" into "replace /etc/passwd". So the path is walked one
//! component at a time from an open directory (`openat` with `O_NOFOLLOW`),
//! and a link is followed only when it belongs to this user or to root —
//! the links a user makes for themselves (`~/latest.csv → runs/5.csv`) and
//! the system's own (`/dev/stdout`, macOS's `/tmp → private/tmp`) — whatever
//! `fs.protected_symlinks` says. Everything after the walk works on the open
//! directory, never on the path again: the temp file is created in it
//! (`O_EXCL | O_NOFOLLOW`) and renamed over the name (`renameat` replaces a
//! name, it never follows one).
//!
//! A path that names one of this process's own open descriptors —
//! `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N` — is written
//! through that descriptor, as the shell handed it over. Following the link
//! to the file behind it would rename a temp file over that file (an export
//! to `/dev/stdout` appended to a file lost the file's content) or truncate
//! and chmod it (a recording to `/dev/stdout` appended to a log); and an
//! inherited descriptor is ours to write, whoever owns the file behind it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};

/// Links followed on one path, as the kernel's own limit (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The effective uid: the one whose files and links are trusted.
fn euid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

fn file_type(st: &Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

/// Whether a link or a special file with this owner may be used: ours or
/// root's. Another user's could point anywhere, or read what we write.
pub fn trusted_owner(owner: u32, me: u32) -> bool {
    owner == me || owner == 0
}

fn refuse(what: &OsStr, kind: &str, owner: u32) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is a {kind} owned by uid {owner}, neither this user nor root: \
             swapsight does not write through another user's {kind}",
            Path::new(what).display()
        ),
    )
}

/// The opened directory and the name in it where a file goes, or one of
/// this process's own descriptors.
#[derive(Debug)]
pub struct Place {
    dir: OwnedFd,
    name: OsString,
    /// What is at the name now (after following trusted links).
    existing: Option<Stat>,
    /// The open descriptor the path named (a copy of it), written as is.
    inherited: Option<OwnedFd>,
}

/// The descriptor a path names textually, if it is one of the forms that
/// name this process's own: `/dev/stdout` (1), `/dev/stderr` (2),
/// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N` and
/// `/proc/PID/fd/N` with `PID` this process's.
pub fn descriptor_named(path: &Path, own_pid: u32) -> Option<i32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
        .or_else(|| {
            let rest = text.strip_prefix("/proc/")?;
            let (pid, n) = rest.split_once("/fd/")?;
            (pid.parse::<u32>().ok()? == own_pid).then_some(n)
        })?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// A copy of our descriptor `fd` when it is open for writing.
fn writable_descriptor(fd: i32) -> Option<OwnedFd> {
    // SAFETY: F_GETFL reads the flags of a descriptor number and touches
    // no memory; a closed number answers -1 (EBADF).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return None;
    }
    // SAFETY: `fd` is open (F_GETFL answered); the copy is a new descriptor
    // owned by the returned value.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return None;
    }
    // SAFETY: `copy` is a fresh descriptor no one else owns.
    Some(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(copy) })
}

/// Finds where `path` is to be written: its folder opened by descriptor,
/// following only this user's or root's links, the last component too; or
/// the open descriptor of ours it names.
pub fn locate(path: &Path) -> io::Result<Place> {
    if let Some(fd) = descriptor_named(path, std::process::id()).and_then(writable_descriptor) {
        return Ok(Place {
            dir: open_root()?,
            name: OsString::new(),
            existing: None,
            inherited: Some(fd),
        });
    }
    let (parent, name) = split(path)?;
    let mut links = 0;
    let dir = open_dir(None, parent, &mut links)?;
    resolve_last(dir, name, &mut links)
}

fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    let name = match path.components().next_back() {
        Some(Component::Normal(n)) => n,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a file name", path.display()),
            ))
        }
    };
    let parent = path.parent().unwrap_or(Path::new(""));
    Ok((parent, name))
}

fn open_root() -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        "/",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens the directory `path` names, relative to `base` (the working
/// directory when `None`), one component at a time.
fn open_dir(base: Option<OwnedFd>, path: &Path, links: &mut usize) -> io::Result<OwnedFd> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = match base {
        Some(fd) => fd,
        None => rustix::fs::open(".", dir_flags, Mode::empty())?,
    };
    for component in path.components() {
        dir = match component {
            Component::RootDir => open_root()?,
            Component::CurDir | Component::Prefix(_) => dir,
            Component::ParentDir => rustix::fs::openat(&dir, "..", dir_flags, Mode::empty())?,
            Component::Normal(name) => {
                match rustix::fs::openat(&dir, name, dir_flags, Mode::empty()) {
                    Ok(next) => next,
                    // ELOOP on Linux, ENOTDIR or ELOOP elsewhere: maybe a link.
                    Err(e) if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR => {
                        let target = follow(&dir, name, links)?.ok_or(io::Error::from(e))?;
                        open_dir(Some(dir), Path::new(&target), links)?
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        };
    }
    Ok(dir)
}

/// The target of `name` in `dir` if it is a link we may follow; `None` when
/// it is not a link; an error when it is another user's.
fn follow(dir: &OwnedFd, name: &OsStr, links: &mut usize) -> io::Result<Option<OsString>> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if file_type(&st) != FileType::Symlink {
        return Ok(None);
    }
    if !trusted_owner(st.st_uid, euid()) {
        return Err(refuse(name, "symbolic link", st.st_uid));
    }
    *links += 1;
    if *links > MAX_LINKS {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    let target = rustix::fs::readlinkat(dir, name, Vec::new())?;
    Ok(Some(OsStr::from_bytes(target.as_bytes()).to_os_string()))
}

fn resolve_last(dir: OwnedFd, name: &OsStr, links: &mut usize) -> io::Result<Place> {
    let st = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT) => {
            return Ok(Place {
                dir,
                name: name.to_os_string(),
                existing: None,
                inherited: None,
            })
        }
        Err(e) => return Err(e.into()),
    };
    match file_type(&st) {
        FileType::Symlink => {
            let target = follow(&dir, name, links)?.expect("a link, just seen");
            // A trusted link to a device or a pipe (`/dev/stdout`): written in
            // place, as the link names it.
            if let Ok(t) = rustix::fs::statat(&dir, name, AtFlags::empty()) {
                if !matches!(file_type(&t), FileType::RegularFile | FileType::Directory) {
                    return special(dir, name, t);
                }
            }
            let target = Path::new(&target);
            let (parent, last) = split(target)?;
            let dir = open_dir(Some(dir), parent, links)?;
            resolve_last(dir, last, links)
        }
        FileType::Directory => Err(io::Error::other(format!(
            "{} is a directory",
            Path::new(name).display()
        ))),
        FileType::RegularFile => Ok(Place {
            dir,
            name: name.to_os_string(),
            existing: Some(st),
            inherited: None,
        }),
        _ => special(dir, name, st),
    }
}

fn special(dir: OwnedFd, name: &OsStr, st: Stat) -> io::Result<Place> {
    if !trusted_owner(st.st_uid, euid()) {
        return Err(refuse(name, "special file", st.st_uid));
    }
    Ok(Place {
        dir,
        name: name.to_os_string(),
        existing: Some(st),
        inherited: None,
    })
}

impl Place {
    /// A device, a pipe or a socket (`-o /dev/stdout`): written in place,
    /// since renaming over it would replace the node.
    pub fn is_special(&self) -> bool {
        self.inherited.is_some()
            || self
                .existing
                .as_ref()
                .is_some_and(|st| file_type(st) != FileType::RegularFile)
    }

    fn open_special(&self) -> io::Result<File> {
        if let Some(fd) = &self.inherited {
            return Ok(File::from(fd.try_clone()?));
        }
        // Trusted by `resolve_last`; a link here is ours or root's.
        let fd = rustix::fs::openat(
            &self.dir,
            &self.name,
            OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }

    /// Writes the file whole or not at all: into a temp file beside it
    /// (`.NAME.swapsight-PID.tmp`, same folder so the rename stays on one
    /// file system), synced, then renamed over the name. A failed write, a
    /// full disk or a kill leaves no partial file and any old one untouched.
    pub fn replace_with<E: From<io::Error>>(
        &self,
        write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.is_special() {
            let mut out = self.open_special()?;
            write(&mut out)?;
            return Ok(out.flush()?);
        }
        let mut tmp = OsString::from(".");
        tmp.push(&self.name);
        tmp.push(format!(".swapsight-{}.tmp", std::process::id()));
        let fd = rustix::fs::openat(
            &self.dir,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(io::Error::from)?;
        let result = (|| -> Result<(), E> {
            let mut out = BufWriter::with_capacity(256 * 1024, File::from(fd));
            write(&mut out)?;
            let file = out.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            rustix::fs::renameat(&self.dir, &tmp, &self.dir, &self.name)
                .map_err(io::Error::from)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&self.dir, &tmp, AtFlags::empty());
        }
        result
    }

    /// Opens the name for a trace written as it goes (it cannot be renamed
    /// into place: a recorder killed mid-run must leave its lines). An
    /// existing file is truncated only when it is this user's own with no
    /// other name (a hard link another user made to a file of ours would
    /// otherwise be emptied through it), and is made owner-only: a trace
    /// holds command lines. The file stays locked (`flock`, exclusive)
    /// while the returned handle is open: a second recorder to the same
    /// name (a nested `%%swapsight -o same.jsonl`, two `record -o`) is
    /// refused before it truncates the first one's lines.
    pub fn create_owner_only(&self) -> io::Result<File> {
        if self.is_special() {
            return self.open_special();
        }
        let fd = rustix::fs::openat(
            &self.dir,
            &self.name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let st = rustix::fs::fstat(&fd)?;
        let me = euid();
        if file_type(&st) != FileType::RegularFile {
            return Err(io::Error::other("not a regular file"));
        }
        if st.st_uid != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the file is owned by uid {}: swapsight does not overwrite another user's file",
                    st.st_uid
                ),
            ));
        }
        if st.st_nlink > 1 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the file has {} hard links: swapsight does not overwrite a file that has other names",
                    st.st_nlink
                ),
            ));
        }
        lock_for_writing(&fd)?;
        rustix::fs::ftruncate(&fd, 0)?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600))?;
        Ok(File::from(fd))
    }
}

/// Takes the trace's one writer's lock, or says who holds it. An `flock`
/// belongs to the open file, so a second open in this same process is
/// refused too; the kernel drops it when the last handle closes, a killed
/// recorder's included.
fn lock_for_writing(fd: &OwnedFd) -> io::Result<()> {
    use rustix::fs::{flock, FlockOperation};
    match flock(fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "another recording is writing to this trace (it holds the file's lock); \
             record to another file, or stop that recording first",
        )),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
#[path = "outpath_tests.rs"]
mod tests;
