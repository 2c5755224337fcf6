//! The CLI's hands on processes: spawning the command, the guard's own
//! signals, the child subreaper, reaping, `kill(2)`, and the process table
//! that `swapsight::guard::stop_tree` works on. Nothing here prints.

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use swapsight::guard::{ProcessControl, Signal};
use swapsight::probe::ProcessSample;
use swapsight::util::bell::Ringer;

use crate::exit;

/// Spawns a command set up by the caller (with the mark path; `guard` starts
/// it in a process group of its own), mapping "not found" and "not
/// executable" to their shell exit codes with a clear line.
pub fn spawn_command(command: &mut std::process::Command, program: &str) -> anyhow::Result<Child> {
    command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            exit::fail(exit::NOT_FOUND, format!("command not found: {program}"))
        }
        std::io::ErrorKind::PermissionDenied => exit::fail(
            exit::NOT_EXECUTABLE,
            format!("cannot run {program}: permission denied"),
        ),
        _ => exit::fail(exit::NOT_EXECUTABLE, format!("cannot run {program}: {e}")),
    })
}

/// Whether `pid` is a live process; a zombie (exited, not yet reaped by its
/// parent) counts as gone.
pub fn pid_exists(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let rc = unsafe { libc::kill(raw, 0) };
    let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && !swapsight::probe::is_zombie(pid)
}

pub fn ensure_pid_exists(pid: u32) -> anyhow::Result<()> {
    if pid == 0 || !pid_exists(pid) {
        return Err(exit::fail(
            exit::ERROR,
            format!("no process with pid {pid}"),
        ));
    }
    Ok(())
}

/// Sets a flag on Ctrl-C (SIGINT), SIGHUP and SIGTERM, and rings `ringer`
/// (the handler runs on the `ctrlc` crate's own thread, not in the signal).
pub fn ctrl_c_flag(ringer: Ringer) -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = Arc::clone(&flag);
    ctrlc::set_handler(move || {
        f.store(true, Ordering::SeqCst);
        ringer.ring();
    })
    .context("cannot install the Ctrl-C handler")?;
    Ok(flag)
}

/// Rings `ringer` when our child `pid` exits, without reaping it (whoever
/// waits for it still gets its status): a thread blocked in `waitid` with
/// `WNOWAIT`, so the loop need not wake on a timer to ask.
pub fn ring_on_exit(pid: u32, ringer: Ringer) {
    let id = libc::id_t::from(pid);
    let _ = std::thread::Builder::new()
        .name("swapsight-exit".into())
        .spawn(move || {
            while !exited_or_gone(id) {}
            ringer.ring();
        });
}

/// Blocks until child `id` exits (true), or returns false when the wait was
/// cut by a signal. A pid already reaped (ECHILD) counts as gone.
fn exited_or_gone(id: libc::id_t) -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid writes only into `info`; WNOWAIT leaves the child to be
    // reaped by its owner.
    let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
}

pub fn interrupt_and_wait(child: &mut Child, wait: Duration) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill on our own child's pid, which we have not reaped yet.
        unsafe { libc::kill(pid, libc::SIGINT) };
    }
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ctrl-C (and SIGHUP) through the `ctrlc` handler; SIGTERM caught apart, so
/// that the guard can pass on the signal it got and exit 130 or 143.
pub struct Signals {
    interrupted: Arc<AtomicBool>,
}

static TERMINATED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigterm(_: libc::c_int) {
    TERMINATED.store(true, Ordering::SeqCst);
}

impl Signals {
    /// The guard's handlers; Ctrl-C rings `ringer`. SIGTERM only sets its
    /// flag (a signal handler may not touch a channel): the guard's loop
    /// sees it at its next tick or within a second.
    pub fn install(ringer: Ringer) -> anyhow::Result<Signals> {
        let interrupted = ctrl_c_flag(ringer)?;
        // Replace the Ctrl-C handler's SIGTERM disposition with our own.
        // SAFETY: a zeroed sigaction is a valid value; the handler only
        // stores to an atomic, which is async-signal-safe.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigterm as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("cannot catch SIGTERM");
        }
        Ok(Signals { interrupted })
    }

    /// The signal the guard was sent, if any: SIGTERM, or SIGINT for Ctrl-C.
    pub fn received(&self) -> Option<Signal> {
        if TERMINATED.load(Ordering::SeqCst) {
            Some(Signal::Terminate)
        } else if self.interrupted.load(Ordering::SeqCst) {
            Some(Signal::Interrupt)
        } else {
            None
        }
    }
}

pub trait SignalNumber {
    fn number(self) -> libc::c_int;
}

impl SignalNumber for Signal {
    fn number(self) -> libc::c_int {
        match self {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
            Signal::Stop => libc::SIGSTOP,
            Signal::Continue => libc::SIGCONT,
        }
    }
}

/// Orphaned descendants are re-parented to the guard instead of init, so
/// none escapes the tree (Linux only; elsewhere the tree is tracked by
/// parent pid across ticks).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_CHILD_SUBREAPER takes a plain integer and touches no
    // memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// The real process table and signals, for `swapsight::guard::stop_tree`;
/// also reaps the guard's children and keeps the command's exit status.
pub struct Processes {
    main_pid: u32,
    pub main_status: Option<ExitStatus>,
    clock: Instant,
    /// The cheap scan (pid list, ppid, name, start time).
    probe: swapsight::probe::TreeScan,
}

impl Processes {
    pub fn new(main_pid: u32) -> anyhow::Result<Processes> {
        Ok(Processes {
            main_pid,
            main_status: None,
            clock: Instant::now(),
            probe: swapsight::probe::TreeScan::new(),
        })
    }

    /// Reaps every exited child (the command, and orphans re-parented to
    /// the guard), keeping the command's status.
    pub fn reap(&mut self) {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: waitpid writes the status of one exited child of ours
            // into `status`, a valid c_int; WNOHANG never blocks.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            if pid as u32 == self.main_pid {
                self.main_status = Some(ExitStatus::from_raw(status));
            }
        }
    }

    /// Reaps until the command's status is known or `limit` has passed.
    pub fn wait_main(&mut self, limit: Duration) {
        let until = Instant::now() + limit;
        loop {
            self.reap();
            if self.main_status.is_some() || Instant::now() >= until {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `kill(2)` for pids that can only be the tree's: never 0, init, or the
/// guard itself (the core loop already excludes the guard).
fn kill(target: libc::pid_t, signal: Signal) {
    if target == 0 || target.abs() <= 1 {
        return;
    }
    // SAFETY: kill only sends a signal; a pid that is gone yields ESRCH,
    // which is ignored.
    unsafe { libc::kill(target, signal.number()) };
}

impl ProcessControl for Processes {
    fn scan(&mut self) -> Vec<ProcessSample> {
        self.probe.scan()
    }

    fn signal(&mut self, pid: u32, signal: Signal) {
        if pid != std::process::id() {
            if let Ok(pid) = libc::pid_t::try_from(pid) {
                kill(pid, signal);
            }
        }
    }

    fn signal_group(&mut self, pgid: u32, signal: Signal) {
        if let Ok(pgid) = libc::pid_t::try_from(pgid) {
            kill(-pgid, signal);
        }
    }

    fn pause(&mut self, d: Duration) {
        std::thread::sleep(d);
        self.reap();
    }

    fn elapsed(&self) -> Duration {
        self.clock.elapsed()
    }
}
