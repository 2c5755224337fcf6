//! Linux glue for the popover.
//!
//! - `SIGUSR2` toggles it, as a click on the tray icon does on macOS: Linux
//!   trays (AppIndicator) send no clicks, so this is how a keyboard shortcut
//!   (`pkill -USR2 -x swapsight-app`) — and the app's benchmark and
//!   end-to-end test — open and close it. The handler only writes a byte to
//!   a pipe (async-signal-safe); a thread reads it and has the main thread
//!   toggle. Not `SIGUSR1`: WebKit's JavaScriptCore, in this process too,
//!   takes that one to suspend threads for its garbage collector
//!   (`JSC_SIGNAL_FOR_GC`), and a second handler crashed the app.
//! - [`lean_rendering`]: no GL in the app or its web view; see there.
//! - [`end_network_process`]: once the popover is closed, WebKit's network
//!   process is ended too: WebKitGTK keeps it for the app's lifetime even
//!   with no web view (Tauri keeps the web context on Linux for that reason,
//!   tauri#14626) — 11 MiB of a hidden app's 41. WebKit starts a new one
//!   with the next page, as it does after a crash.
//! - [`trim`] hands the heap the closed web view freed back to the kernel:
//!   glibc keeps freed memory in its arenas, where it still counts in the
//!   app's footprint.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::{FromRawFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// Write end of the pipe the signal handler writes to.
static WAKE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_usr2(_: libc::c_int) {
    let fd = WAKE.load(Ordering::Relaxed);
    // SAFETY: only async-signal-safe calls; errno is saved and restored so
    // the interrupted code sees its own. The write end is non-blocking: a
    // full pipe drops the byte (a toggle is pending anyway).
    unsafe {
        let errno = *libc::__errno_location();
        libc::write(fd, [1u8].as_ptr().cast(), 1);
        *libc::__errno_location() = errno;
    }
}

/// A close-on-exec pipe: (read end, write end), the write end non-blocking.
fn pipe() -> std::io::Result<(File, RawFd)> {
    let mut fds = [-1; 2];
    // SAFETY: pipe2 fills the two-element array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fds[0] is a descriptor pipe2 just opened, owned by nobody else.
    let read = unsafe { File::from_raw_fd(fds[0]) };
    // SAFETY: fcntl on the write end pipe2 just opened.
    if unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((read, fds[1]))
}

fn install_usr2() -> std::io::Result<()> {
    // SAFETY: an all-zero sigaction is "no flags, empty mask".
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = on_usr2 as extern "C" fn(libc::c_int) as libc::sighandler_t;
    act.sa_flags = libc::SA_RESTART;
    // SAFETY: the handler only makes async-signal-safe calls (on_usr2).
    if unsafe { libc::sigaction(libc::SIGUSR2, &act, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// From now on each `SIGUSR2` runs `toggle` (the popover's, from `lib.rs`),
/// on a thread of its own: signals that come together run it once.
pub fn run_on_usr2(toggle: impl Fn() + Send + 'static) {
    let (mut read, write) = match pipe() {
        Ok(p) => p,
        Err(e) => return log!("no SIGUSR2 toggle: {e}"),
    };
    WAKE.store(write, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("swapsight-usr2".into())
        .spawn(move || {
            let mut buf = [0u8; 16];
            loop {
                match read.read(&mut buf) {
                    Ok(0) => return,
                    Ok(_) => toggle(),
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return log!("SIGUSR2 toggle stopped: {e}"),
                }
            }
        });
    match spawned
        .map_err(|e| e.to_string())
        .and_then(|_| install_usr2().map_err(|e| e.to_string()))
    {
        Ok(()) => {}
        Err(e) => log!("no SIGUSR2 toggle: {e}"),
    }
}

/// Before GTK starts: no OpenGL, in GDK (`GDK_GL=disable`) or in WebKit's
/// compositing (`WEBKIT_DISABLE_COMPOSITING_MODE=1`), unless the user set
/// either. A 2D canvas and a table redrawn twice a second need no GPU, and
/// GL cost more than the rest of the app: measured under Xvfb (Mesa's
/// llvmpipe), GDK's GL loads LLVM into the app process (26 → 15 MiB
/// footprint with it off, no window open) and the web process's
/// compositing buffers took 80 MiB (119 → 38 MiB). docs/benchmarks.md, P2.
///
/// And no WebKit memory-pressure monitor
/// (`WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR=1`): the first web view starts
/// a thread in the app process that reads `/proc/meminfo` every 1–5 s
/// (WebKit's `UIProcess/linux/MemoryPressureMonitor.cpp`) and never ends,
/// though the popover's web process ends 20 s after it hides: 6.3 ms of
/// CPU in 40 s, a sixth of the hidden app's whole cost, to watch memory
/// for a page of a memory monitor. The web process then skips WebKit's own
/// cache shedding under pressure; it lives only while the popover is up.
pub fn lean_rendering() {
    for (key, value) in [
        ("GDK_GL", "disable"),
        ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
        ("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1"),
    ] {
        if std::env::var_os(key).is_none() {
            // Called first thing in `run`, while this is the only thread.
            std::env::set_var(key, value);
        }
    }
}

/// The parent pid and command name from the text of `/proc/PID/stat`
/// (`pid (comm) state ppid …`, proc(5); comm may hold spaces and `)`, so it
/// ends at the last `)`).
pub fn ppid_and_comm(stat: &str) -> Option<(u32, &str)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let ppid = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((ppid, comm))
}

/// Ends this process's WebKitNetworkProcess children (see the module docs).
/// Only direct children named so (comm is cut to 15 bytes by the kernel).
pub fn end_network_process() {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if ppid_and_comm(&stat) == Some((me, "WebKitNetworkPr")) {
            terminate(pid);
        }
    }
}

fn terminate(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: a SIGTERM to our own child, which WebKit has not reaped (it
    // was listed as our child just now).
    unsafe { libc::kill(pid, libc::SIGTERM) };
}

/// Returns the free pages of the heap to the kernel (after the web view is
/// gone, its buffers are free but still resident).
pub fn trim() {
    // SAFETY: malloc_trim only walks glibc's own arenas.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(test)]
#[path = "linux_tests.rs"]
mod tests;
