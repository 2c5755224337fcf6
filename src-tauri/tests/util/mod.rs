//! Harness of the app's end-to-end tests: temp dirs, the skip-or-fail rule,
//! real swap (a swap file plus a cgroup v1 memory cgroup whose limit is below
//! what a process fills, so its pages go to swap while its footprint stays
//! low, from `swapsight-testkit`, shared with the CLI tests), and the display and
//! WebDriver side in [`webdriver`].
//!
//! Outside CI a test that cannot run here (not root, no Xvfb, no
//! tauri-driver…) skips with a note; with `CI=true` it fails instead.
#![allow(dead_code)]

pub mod session_bus;
pub mod webdriver;

pub use swapsight_testkit::{memfill, skip_unless_ci, which, RealSwap, TempDir, MIB};

use std::process::{Child, Command};
use std::time::Duration;

/// A child process killed (by its own pid) and reaped on drop.
pub struct Proc {
    pub name: &'static str,
    pub child: Child,
}

impl Proc {
    pub fn spawn(name: &'static str, cmd: &mut Command) -> std::io::Result<Proc> {
        Ok(Proc {
            name,
            child: cmd.spawn()?,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Proc {
    /// SIGTERM first, so that tauri-driver stops the WebKitWebDriver it
    /// started (a SIGKILL would orphan it); SIGKILL after 3 s.
    fn drop(&mut self) {
        if self.alive() {
            let pid = self.child.id() as libc::pid_t;
            // SAFETY: a signal to our own child, which has not been reaped
            // (try_wait said it runs), so the pid is still ours.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let until = std::time::Instant::now() + Duration::from_secs(3);
            while self.alive() && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
