//! Harness of the app's end-to-end tests: temp dirs, the skip-or-fail rule,
//! real swap (a swap file plus a cgroup v1 memory cgroup whose limit is below
//! what a process fills, so its pages go to swap while its footprint stays
//! low — the minimal copy of the CLI tests' `RealSwap`), and the display and
//! WebDriver side in [`webdriver`].
//!
//! Outside CI a test that cannot run here (not root, no Xvfb, no
//! tauri-driver…) skips with a note; with `CI=true` it fails instead.
#![allow(dead_code)]

pub mod webdriver;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const MIB: u64 = 1 << 20;

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// `None` after a note when `why_not` is set outside CI; a panic in CI.
pub fn skip_unless_ci(test: &str, why_not: Option<String>) -> Option<()> {
    match why_not {
        None => Some(()),
        Some(why) => {
            assert!(!in_ci(), "{test} must run in CI, but: {why}");
            eprintln!("note: {test} skipped outside CI: {why}");
            None
        }
    }
}

/// The filler the CLI's real-swap tests use.
pub fn memfill() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/cli/tests/fixtures/memfill.py")
}

/// A fresh directory, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "swapsight-app-e2e-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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

// ------------------------------------------------------------- real swap
const CGROUP_ROOT: &str = "/sys/fs/cgroup/memory";
/// Not a prefix the CLI's harness cleans up, so the two never remove each
/// other's swap files or cgroups.
const PREFIX: &str = "swapsight-app-test";

/// A swap file and a memory cgroup, removed on drop (also when a test
/// panics). Ones left by a killed earlier run are removed on creation.
pub struct RealSwap {
    pub swapfile: PathBuf,
    pub cgroup: PathBuf,
}

impl RealSwap {
    /// `None` (with a note) when this machine cannot run real-swap tests and
    /// we are not in CI; a panic in CI.
    pub fn new(test: &str, swap_mib: u64, limit_mib: u64) -> Option<RealSwap> {
        let why_not = if !is_root() {
            Some("not root".to_string())
        } else if !Path::new(CGROUP_ROOT)
            .join("memory.limit_in_bytes")
            .exists()
        {
            Some(format!("no cgroup v1 memory controller at {CGROUP_ROOT}"))
        } else {
            ["fallocate", "mkswap", "swapon", "swapoff", "python3"]
                .into_iter()
                .find(|t| which(t).is_none())
                .map(|t| format!("{t} not found"))
        };
        skip_unless_ci(test, why_not)?;
        cleanup_stale();
        let pid = std::process::id();
        let rs = RealSwap {
            swapfile: PathBuf::from(format!("/var/tmp/{PREFIX}-{pid}.swap")),
            cgroup: Path::new(CGROUP_ROOT).join(format!("{PREFIX}-{pid}")),
        };
        let file = rs.swapfile.to_str().expect("UTF-8 path");
        run_ok("fallocate", &["-l", &format!("{swap_mib}M"), file]);
        std::fs::set_permissions(
            &rs.swapfile,
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        run_ok("mkswap", &[file]);
        run_ok("swapon", &[file]);
        std::fs::create_dir_all(&rs.cgroup).expect("create memory cgroup");
        std::fs::write(
            rs.cgroup.join("memory.limit_in_bytes"),
            format!("{}", limit_mib * MIB),
        )
        .expect("set limit");
        Some(rs)
    }

    /// `sh -c` that joins the cgroup, then execs `args` (same pid).
    pub fn wrap(&self, args: &[&str]) -> Command {
        let quoted: Vec<String> = args
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
            .collect();
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!(
            "echo $$ > {}/cgroup.procs && exec {}",
            self.cgroup.display(),
            quoted.join(" ")
        ));
        c.stdin(Stdio::null()).stdout(Stdio::null());
        c
    }
}

impl Drop for RealSwap {
    fn drop(&mut self) {
        kill_cgroup(&self.cgroup);
        let _ = std::fs::remove_dir(&self.cgroup);
        let _ = Command::new("swapoff").arg(&self.swapfile).status();
        let _ = std::fs::remove_file(&self.swapfile);
    }
}

fn kill_cgroup(cg: &Path) {
    for _ in 0..50 {
        let procs = std::fs::read_to_string(cg.join("cgroup.procs")).unwrap_or_default();
        let pids: Vec<i32> = procs
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            // SAFETY: plain kill of a pid read from our own test cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Swap files and cgroups of earlier runs whose test process is gone.
fn cleanup_stale() {
    let dead = |name: &str| {
        let pid = name
            .rsplit('-')
            .next()
            .and_then(|s| s.trim_end_matches(".swap").parse::<u32>().ok());
        pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists())
    };
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for line in swaps.lines().skip(1) {
        if let Some(file) = line
            .split_whitespace()
            .next()
            .filter(|f| f.contains(PREFIX) && dead(f))
        {
            let _ = Command::new("swapoff").arg(file).status();
            let _ = std::fs::remove_file(file);
        }
    }
    if let Ok(dir) = std::fs::read_dir(CGROUP_ROOT) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(PREFIX) && dead(&name) {
                kill_cgroup(&e.path());
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

fn run_ok(cmd: &str, args: &[&str]) {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A program on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
