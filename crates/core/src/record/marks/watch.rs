//! The inbox folder, watched: the reader sleeps until a writer creates or
//! writes `mark`, instead of waking every 50 ms to look (a recorder whose
//! command never marks spent a fifth of its CPU on those looks).
//!
//! Linux: inotify on the folder, for `IN_CREATE`, `IN_MODIFY`,
//! `IN_CLOSE_WRITE` and `IN_MOVED_TO`, events named `mark` only (the
//! reader's own renames to `taken-N` and its unlinks do not wake it).
//! macOS: kqueue's `EVFILT_VNODE` with `NOTE_WRITE` on the folder's
//! descriptor, which fires when an entry is added, renamed or removed —
//! every writer creates `mark` anew after the reader took the last one, so
//! each batch of marks wakes it; its own rename and unlink wake it once
//! more, to a look that finds nothing. Elsewhere, or when the watch cannot
//! be set up, the reader looks every [`LOOK_EVERY`] as before.
//!
//! The stop comes through a pipe the reader waits on beside the watch.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};

/// How often the reader looks when it cannot watch the folder, and the
/// least time between two looks (a burst of writes is read in one).
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Why a wait returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// Something was written (or, unwatched, the time to look came).
    Look,
    /// The stop switch was thrown.
    Stop,
    /// The timeout passed with nothing written.
    Quiet,
}

/// The write end of the stop pipe: [`StopSwitch::throw`] ends the waits.
pub(crate) struct StopSwitch(OwnedFd);

impl StopSwitch {
    pub(crate) fn throw(&self) {
        let _ = rustix::io::write(&self.0, b"x");
    }
}

/// The folder's watch and the stop pipe's read end.
pub(crate) struct FolderWatch {
    os: Option<os::Watch>,
    stop: OwnedFd,
}

impl FolderWatch {
    /// Watches `dir` (the folder at `path`); a folder that cannot be
    /// watched is looked at every [`LOOK_EVERY`] instead.
    pub(crate) fn new(dir: &OwnedFd, path: &Path) -> std::io::Result<(FolderWatch, StopSwitch)> {
        // `pipe2` is not on macOS: the flag is set after, before any spawn
        // of ours could inherit the ends (the recorder starts its command
        // after the inbox exists).
        let (read, write) = rustix::pipe::pipe()?;
        for end in [&read, &write] {
            rustix::io::fcntl_setfd(end, rustix::io::FdFlags::CLOEXEC)?;
        }
        let os = os::Watch::new(dir, path, &read).ok();
        Ok((FolderWatch { os, stop: read }, StopSwitch(write)))
    }

    /// Whether writes wake the reader (false: it looks on a timer).
    pub(crate) fn watching(&self) -> bool {
        self.os.is_some()
    }

    /// Waits for a write to `mark`, the stop, or `timeout` (`None`: no
    /// end). Unwatched, the wait is at most [`LOOK_EVERY`] and ends in a
    /// look.
    pub(crate) fn wait(&mut self, timeout: Option<Duration>) -> Woke {
        match self.os.as_mut() {
            Some(w) => w.wait(&self.stop, timeout),
            None => {
                let d = timeout.map_or(LOOK_EVERY, |t| t.min(LOOK_EVERY));
                if self.pause(d) {
                    Woke::Stop
                } else {
                    Woke::Look
                }
            }
        }
    }

    /// Sleeps `d` unless the stop comes first (true).
    pub(crate) fn pause(&self, d: Duration) -> bool {
        let mut fds = [PollFd::new(&self.stop, PollFlags::IN)];
        let _ = poll_for(&mut fds, Some(d));
        stop_readable(&fds[0])
    }
}

/// `poll` for at most `timeout`; false when it failed other than by a
/// signal (the caller then looks, and the reader's least gap between looks
/// keeps a failing poll from spinning).
fn poll_for(fds: &mut [PollFd<'_>], timeout: Option<Duration>) -> bool {
    let ts = timeout.and_then(|d| rustix::event::Timespec::try_from(d).ok());
    !matches!(rustix::event::poll(fds, ts.as_ref()), Err(e) if e != rustix::io::Errno::INTR)
}

/// The stop pipe has a byte, or its write end is gone.
fn stop_readable(fd: &PollFd<'_>) -> bool {
    fd.revents()
        .intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
}

#[cfg(target_os = "linux")]
mod os {
    use super::*;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use std::mem::MaybeUninit;

    pub(super) struct Watch {
        fd: OwnedFd,
    }

    impl Watch {
        pub(super) fn new(_dir: &OwnedFd, path: &Path, _stop: &OwnedFd) -> std::io::Result<Watch> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
            // The folder is private to this user (0700 inside a private
            // runtime directory), so its path cannot be swapped under us.
            inotify::add_watch(
                &fd,
                path,
                WatchFlags::CREATE
                    | WatchFlags::MODIFY
                    | WatchFlags::CLOSE_WRITE
                    | WatchFlags::MOVED_TO
                    | WatchFlags::ONLYDIR
                    | WatchFlags::DONT_FOLLOW,
            )?;
            Ok(Watch { fd })
        }

        pub(super) fn wait(&mut self, stop: &OwnedFd, timeout: Option<Duration>) -> Woke {
            let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
            loop {
                let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
                let mut fds = [
                    PollFd::new(stop, PollFlags::IN),
                    PollFd::new(&self.fd, PollFlags::IN),
                ];
                let polled = poll_for(&mut fds, left);
                if stop_readable(&fds[0]) {
                    return Woke::Stop;
                }
                if !polled || (fds[1].revents().contains(PollFlags::IN) && self.drain()) {
                    return Woke::Look;
                }
                if left.is_some_and(|l| l.is_zero()) {
                    return Woke::Quiet;
                }
            }
        }

        /// Reads the pending events; true when one was about `mark` (or
        /// events were lost: the queue overflowed).
        fn drain(&mut self) -> bool {
            let mut buf = [MaybeUninit::<u8>::uninit(); 1024];
            let mut events = inotify::Reader::new(&self.fd, &mut buf);
            let mut marked = false;
            while let Ok(e) = events.next() {
                marked |= e.events().contains(ReadFlags::QUEUE_OVERFLOW)
                    || e.file_name().is_some_and(|n| n.to_bytes() == b"mark");
            }
            marked
        }
    }
}

#[cfg(target_os = "macos")]
mod os {
    use super::*;
    use rustix::event::kqueue::{self, Event, EventFilter, EventFlags, VnodeEvents};
    use std::os::fd::AsRawFd;

    pub(super) struct Watch {
        kq: OwnedFd,
        stop: std::os::fd::RawFd,
    }

    impl Watch {
        /// kqueue on `dir` and on the stop pipe's read end; both outlive the
        /// kqueue (the [`FolderWatch`] and its inbox hold them).
        pub(super) fn new(dir: &OwnedFd, _path: &Path, stop: &OwnedFd) -> std::io::Result<Watch> {
            let kq = kqueue::kqueue()?;
            let changes = [
                Event::new(
                    EventFilter::Vnode {
                        vnode: dir.as_raw_fd(),
                        flags: VnodeEvents::WRITE | VnodeEvents::EXTEND,
                    },
                    EventFlags::ADD | EventFlags::CLEAR,
                    std::ptr::null_mut(),
                ),
                Event::new(
                    EventFilter::Read(stop.as_raw_fd()),
                    EventFlags::ADD,
                    std::ptr::null_mut(),
                ),
            ];
            let mut out: Vec<Event> = Vec::with_capacity(2);
            // SAFETY: both descriptors stay open as long as the kqueue: the
            // folder's is the inbox's own, the pipe's is the FolderWatch's,
            // and both are dropped after it (the reader thread owns all).
            unsafe { kqueue::kevent(&kq, &changes, &mut out, Some(Duration::ZERO))? };
            Ok(Watch {
                kq,
                stop: stop.as_raw_fd(),
            })
        }

        pub(super) fn wait(&mut self, _stop: &OwnedFd, timeout: Option<Duration>) -> Woke {
            let mut out: Vec<Event> = Vec::with_capacity(2);
            // SAFETY: as in `new`: the registered descriptors outlive the kqueue.
            let n = unsafe { kqueue::kevent(&self.kq, &[], &mut out, timeout) };
            if n.is_err() {
                return Woke::Look;
            }
            if out
                .iter()
                .any(|e| matches!(e.filter(), EventFilter::Read(fd) if fd == self.stop))
            {
                Woke::Stop
            } else if out.is_empty() {
                Woke::Quiet
            } else {
                Woke::Look
            }
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod os {
    use super::*;

    pub(super) struct Watch;

    impl Watch {
        pub(super) fn new(_: &OwnedFd, _: &Path, _: &OwnedFd) -> std::io::Result<Watch> {
            Err(std::io::ErrorKind::Unsupported.into())
        }

        pub(super) fn wait(&mut self, _: &OwnedFd, _: Option<Duration>) -> Woke {
            Woke::Look
        }
    }
}
