//! Descriptors and reads for the Linux probe: `openat` under an open
//! `/proc`, whole-file reads into a buffer that only grows, and the share of
//! the open-file limit the probe may keep.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;

/// Most `/proc/PID/stat` descriptors kept open between ticks, whatever the
/// limit: a quarter of the 65,536 the probe raises the soft limit to.
pub const MAX_KEPT: usize = 16_384;

/// Largest `/proc` file read; the kernel bounds these files far below.
const READ_MAX: usize = 1 << 20;

/// Opens `rel` under the directory `dir`, read-only.
pub(super) fn open_at(dir: &File, rel: &CStr) -> io::Result<File> {
    let flags = libc::O_RDONLY | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open descriptor and `rel` a NUL-terminated path,
    // both alive for the call; openat returns a new descriptor or -1.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), rel.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Reads `f` whole into the start of `buf` (from offset 0 with `pread`
/// when `at_start`, else from where it is); the length read. A procfs file
/// smaller than the buffer comes in one read; one that fills it is read on
/// with a buffer twice as large, up to [`READ_MAX`].
pub(super) fn read_whole(f: &File, buf: &mut Vec<u8>, at_start: bool) -> io::Result<usize> {
    let mut n = 0;
    loop {
        let got = if at_start {
            f.read_at(&mut buf[n..], n as u64)?
        } else {
            (&*f).read(&mut buf[n..])?
        };
        n += got;
        if got == 0 || n < buf.len() {
            return Ok(n);
        }
        if buf.len() >= READ_MAX {
            return Err(io::Error::other(format!(
                "a /proc file longer than {READ_MAX} bytes"
            )));
        }
        buf.resize(buf.len() * 2, 0);
    }
}

pub(super) fn is_out_of_fds(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Descriptors the probe may keep under a soft open-file limit of `limit`
/// (`None`: unlimited or unknown): a quarter of it, at most [`MAX_KEPT`].
pub fn kept_cap(limit: Option<u64>) -> usize {
    let quarter = limit.map_or(u64::MAX, |l| l / 4);
    usize::try_from(quarter).map_or(MAX_KEPT, |q| q.min(MAX_KEPT))
}

/// Raises the soft limit on open files towards the hard one (capped), as
/// monitors like htop do, so that `serve` has room for connections; the
/// soft limit after that, `None` when unlimited or unknown.
pub(super) fn raise_fd_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    let want = lim.rlim_max.min(65_536);
    if lim.rlim_cur < want {
        let raised = libc::rlimit {
            rlim_cur: want,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct; raising the soft limit up to the
        // hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = want;
        }
    }
    (lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}
