//! The doctor's child: a process that holds a known amount of memory, every
//! page of it touched, so its footprint has a known answer.
//!
//! It is a `fork` that maps and writes the memory and then only sleeps: no
//! exec, so it needs no helper binary and its size is exactly what it
//! mapped (plus the pages it shares with the parent). Between `fork` and its
//! end the child calls only async-signal-safe functions (`mmap`, `write`,
//! `sleep`, `getppid`, `_exit`), as a fork of a threaded process must. It
//! ends when it is dropped, and by itself when its parent is gone.

use std::io;
use std::time::Duration;

/// A running child holding `size` bytes. Killed and reaped on drop.
#[derive(Debug)]
pub struct Held {
    pid: libc::pid_t,
    size: u64,
    /// The parent's resident anonymous memory just before the fork, which
    /// the child maps too (copy-on-write) and so counts in its own.
    inherited: u64,
}

impl Held {
    /// Starts a child that maps `size` bytes, writes to every page and says
    /// so; waits at most `timeout` for that.
    pub fn spawn(size: u64, timeout: Duration) -> io::Result<Held> {
        let len = usize::try_from(size)
            .ok()
            .filter(|&l| l > 0)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "bad child size"))?;
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&p| p > 0)
            .unwrap_or(4096);
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (rfd, wfd) = (fds[0], fds[1]);
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let inherited = own_anonymous_bytes();
        // SAFETY: the child runs only `hold`, which calls async-signal-safe
        // functions and never returns.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: in the fresh child; see `hold`.
            unsafe { hold(len, page, rfd, wfd, parent) }
        }
        // SAFETY: our copy of the write end; the child has its own.
        unsafe { libc::close(wfd) };
        if pid < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: the read end is ours and open.
            unsafe { libc::close(rfd) };
            return Err(e);
        }
        let held = Held {
            pid,
            size,
            inherited,
        };
        let said = wait_byte(rfd, timeout);
        // SAFETY: the read end is ours and open.
        unsafe { libc::close(rfd) };
        match said {
            Ok(b'R') => Ok(held),
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                "the child could not map its memory",
            )),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid as u32
    }

    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// The parent's resident anonymous memory at the fork, which the child
    /// holds a view of too: small for the `doctor` command, tens of MB in a
    /// test binary running many tests at once. 0 where the OS does not say.
    pub fn inherited(&self) -> u64 {
        self.inherited
    }
}

/// This process's resident anonymous and shared memory (Linux `RssAnon +
/// RssShmem` of `/proc/self/status`); 0 elsewhere or when unreadable.
fn own_anonymous_bytes() -> u64 {
    #[cfg(target_os = "linux")]
    if let Ok(status) = std::fs::read("/proc/self/status") {
        let f = crate::probe::linux::parse::parse_status(&status);
        return f.rss_anon_bytes.saturating_add(f.rss_shmem_bytes);
    }
    0
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: `pid` is our own unreaped child: it cannot have been
        // reused by another process.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
    }
}

/// One byte from `fd`, waiting at most `timeout`.
fn wait_byte(fd: libc::c_int, timeout: Duration) -> io::Result<u8> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the child did not touch its memory within {} s",
                timeout.as_secs()
            ),
        ));
    }
    let mut b = [0u8; 1];
    // SAFETY: reads at most one byte into `b`.
    let r = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
    if r == 1 {
        Ok(b[0])
    } else {
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the child ended before it held its memory",
        ))
    }
}

/// The child's whole life: map, touch, say `R` (or `E`), sleep until killed
/// or orphaned.
///
/// # Safety
///
/// Only in the child right after `fork`; never returns.
unsafe fn hold(
    len: usize,
    page: usize,
    rfd: libc::c_int,
    wfd: libc::c_int,
    parent: libc::pid_t,
) -> ! {
    // SAFETY: every call below is async-signal-safe; the mapping is ours.
    unsafe {
        libc::close(rfd);
        // Nothing else of the parent's stays open here: a pipe another
        // thread is reading would not see its end while this child lives.
        for fd in 3..4096 {
            if fd != wfd {
                libc::close(fd);
            }
        }
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            libc::write(wfd, b"E".as_ptr().cast(), 1);
            libc::_exit(1);
        }
        let base = p.cast::<u8>();
        let mut off = 0;
        while off < len {
            // A different byte per page: a page of zeros (or of one
            // repeated page) is cheaper for macOS's compressor to hold.
            base.add(off).write_volatile((off / page) as u8 | 1);
            off += page;
        }
        libc::write(wfd, b"R".as_ptr().cast(), 1);
        libc::close(wfd);
        loop {
            libc::sleep(1);
            if libc::getppid() != parent {
                libc::_exit(0);
            }
        }
    }
}
