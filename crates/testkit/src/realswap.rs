//! Real swap: a swap file plus a memory cgroup whose limit is below what a
//! process fills, so its pages go to swap while its footprint stays low.
//!
//! The cgroup is made where the machine has the memory controller: cgroup v1
//! (`/sys/fs/cgroup/memory`, `memory.limit_in_bytes`) or cgroup v2 (a child
//! of the root `/sys/fs/cgroup`, or of a delegated cgroup named by
//! `SWAPSIGHT_TEST_CGROUP_PARENT`, with `+memory` written to the parent's
//! `cgroup.subtree_control`, then `memory.max` and `memory.swap.max`;
//! Documentation/admin-guide/cgroup-v2.rst, "Enabling and Disabling",
//! "Memory Interface Files"). A v2 parent other than the root must hold no
//! processes of its own ("no internal process" rule).
//!
//! Real-swap tests need root. Outside CI they skip with a note when they
//! cannot run; with `CI=true` they must run, so a missing capability fails.
//! They are serialized across test binaries by an flock: the machine has
//! one swap pool.

use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::process::{Command, Stdio};
#[cfg(target_os = "linux")]
use std::sync::{Mutex, MutexGuard};
#[cfg(target_os = "linux")]
use std::time::Duration;

#[cfg(target_os = "linux")]
use crate::skip::{in_ci, is_root};

pub const MIB: u64 = 1 << 20;

/// The filler: random bytes, touched again and again (crates/testkit/fixtures/memfill.py).
pub fn memfill() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/memfill.py")
}

/// Swap tests share the machine's one swap pool: one at a time, within this
/// test binary (a mutex) and across processes — other test binaries, the
/// app's e2e tests — (an flock on a well-known file).
#[cfg(target_os = "linux")]
static SWAP_LOCK: Mutex<()> = Mutex::new(());
#[cfg(target_os = "linux")]
const SWAP_LOCK_FILE: &str = "/var/tmp/swapsight-test-swap.lock";

/// The pid of a process that holds the swap lock for the children it starts
/// (python/tests/conftest.py's `quiet_memory`, around a module whose tests
/// start `swapsight-realswap`): a child of that pid takes it as its own
/// rather than waiting on its parent forever.
#[cfg(target_os = "linux")]
pub const SWAP_LOCK_HELD_BY_ENV: &str = "SWAPSIGHT_SWAP_LOCK_HELD_BY";

/// Whether this process's parent holds the swap lock for it.
#[cfg(target_os = "linux")]
fn held_by_parent() -> bool {
    // SAFETY: getppid cannot fail and touches no memory.
    let parent = unsafe { libc::getppid() };
    std::env::var(SWAP_LOCK_HELD_BY_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .is_some_and(|pid| pid == parent)
}

/// Holds the cross-process lock until dropped (closing the file releases it).
pub struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    pub fn acquire(path: &str) -> FileLock {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .expect("open swap lock file");
        #[cfg(target_os = "linux")]
        if path == SWAP_LOCK_FILE && held_by_parent() {
            return FileLock { _file: f };
        }
        // SAFETY: flock on a descriptor we own; blocks until the lock is ours.
        let rc = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&f), libc::LOCK_EX) };
        assert_eq!(rc, 0, "flock {path}: {}", std::io::Error::last_os_error());
        FileLock { _file: f }
    }
}

/// The swap pool held still: no real-swap test of this or another test
/// binary runs while it lives. For tests that compare system figures read a
/// moment apart (the doctor's swap rows), which another test filling swap
/// would move between the readings.
#[cfg(target_os = "linux")]
pub struct SwapPoolLock {
    _lock: MutexGuard<'static, ()>,
    _file_lock: FileLock,
}

#[cfg(target_os = "linux")]
pub fn hold_swap_pool() -> SwapPoolLock {
    let lock = SWAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    SwapPoolLock {
        _lock: lock,
        _file_lock: FileLock::acquire(SWAP_LOCK_FILE),
    }
}

/// A swap file and a memory cgroup, removed on drop (also when a test
/// panics). Stale ones from a killed earlier run are removed on creation.
#[cfg(target_os = "linux")]
pub struct RealSwap {
    _lock: MutexGuard<'static, ()>,
    _file_lock: FileLock,
    pub swapfile: PathBuf,
    pub cgroup: PathBuf,
    /// The cgroup version the cgroup was made in: 1 or 2.
    pub version: u8,
}

#[cfg(target_os = "linux")]
const CGROUP_V1_ROOT: &str = "/sys/fs/cgroup/memory";
#[cfg(target_os = "linux")]
const CGROUP_V2_ROOT: &str = "/sys/fs/cgroup";
/// A delegated v2 cgroup to make the test cgroups in, instead of the root.
pub const CGROUP_PARENT_ENV: &str = "SWAPSIGHT_TEST_CGROUP_PARENT";
#[cfg(target_os = "linux")]
const PREFIX: &str = "swapsight-test";

/// Whether the filler may swap: the real-swap tests let it; an OOM test
/// takes swap away so its cgroup's limit kills it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupSwap {
    Allowed,
    None,
}

/// Where the machine has the memory controller: the folder to make test
/// cgroups in and its version, or why there is none.
#[cfg(target_os = "linux")]
pub fn memory_cgroup_parent() -> Result<(PathBuf, u8), String> {
    let v1 = Path::new(CGROUP_V1_ROOT);
    if v1.join("memory.limit_in_bytes").exists() {
        return Ok((v1.to_path_buf(), 1));
    }
    let parent = std::env::var_os(CGROUP_PARENT_ENV)
        .map_or_else(|| PathBuf::from(CGROUP_V2_ROOT), PathBuf::from);
    let controllers = std::fs::read_to_string(parent.join("cgroup.controllers")).map_err(|e| {
        format!(
            "no cgroup v1 memory controller at {CGROUP_V1_ROOT}, and no cgroup v2 at {} ({e})",
            parent.display()
        )
    })?;
    if !controllers.split_whitespace().any(|c| c == "memory") {
        return Err(format!(
            "the memory controller is not available in {} (cgroup.controllers: {})",
            parent.display(),
            controllers.trim()
        ));
    }
    Ok((parent, 2))
}

#[cfg(target_os = "linux")]
impl RealSwap {
    /// `None` (with a note) when this machine cannot run real-swap tests and
    /// we are not in CI; a panic in CI.
    pub fn new(swap_mib: u64, limit_mib: u64) -> Option<RealSwap> {
        RealSwap::with(swap_mib, limit_mib, CgroupSwap::Allowed)
    }

    /// [`RealSwap::new`], saying whether the cgroup may swap.
    pub fn with(swap_mib: u64, limit_mib: u64, swap: CgroupSwap) -> Option<RealSwap> {
        let lock = SWAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let found = if is_root() {
            memory_cgroup_parent()
        } else {
            Err("not root".into())
        };
        let (parent, version) = match found {
            Ok(found) => found,
            Err(why) => {
                assert!(!in_ci(), "real-swap tests must run in CI, but: {why}");
                eprintln!("note: real-swap test skipped outside CI: {why}");
                return None;
            }
        };
        let file_lock = FileLock::acquire(SWAP_LOCK_FILE);
        cleanup_stale(&parent);
        let swapfile = PathBuf::from(format!("/var/tmp/{PREFIX}-{}.swap", std::process::id()));
        let cgroup = parent.join(format!("{PREFIX}-{}", std::process::id()));
        let rs = RealSwap {
            _lock: lock,
            _file_lock: file_lock,
            swapfile,
            cgroup,
            version,
        };
        run_ok(
            "fallocate",
            &[
                "-l",
                &format!("{}M", swap_mib),
                rs.swapfile.to_str().unwrap(),
            ],
        );
        std::fs::set_permissions(
            &rs.swapfile,
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        run_ok("mkswap", &[rs.swapfile.to_str().unwrap()]);
        run_ok("swapon", &[rs.swapfile.to_str().unwrap()]);
        if version == 2 {
            // cgroup-v2.rst: a controller is enabled for the children by
            // writing "+memory" to the parent's cgroup.subtree_control.
            write_cgroup(&parent.join("cgroup.subtree_control"), "+memory");
        }
        std::fs::create_dir_all(&rs.cgroup).expect("create memory cgroup");
        let limit = (limit_mib * MIB).to_string();
        match (version, swap) {
            (1, swap) => {
                write_cgroup(&rs.cgroup.join("memory.limit_in_bytes"), &limit);
                if swap == CgroupSwap::None {
                    // memory+swap no more than memory: nothing may swap.
                    write_cgroup(&rs.cgroup.join("memory.memsw.limit_in_bytes"), &limit);
                }
            }
            (_, swap) => {
                write_cgroup(&rs.cgroup.join("memory.max"), &limit);
                let swap_max = match swap {
                    CgroupSwap::Allowed => "max",
                    CgroupSwap::None => "0",
                };
                write_cgroup(&rs.cgroup.join("memory.swap.max"), swap_max);
            }
        }
        Some(rs)
    }

    /// The cgroup's path as `/proc/PID/cgroup` shows it (v1: in the memory
    /// hierarchy; v2: in the unified one).
    pub fn cgroup_path(&self) -> String {
        let root = match self.version {
            1 => CGROUP_V1_ROOT,
            _ => CGROUP_V2_ROOT,
        };
        let rel = self.cgroup.strip_prefix(root).unwrap_or(&self.cgroup);
        format!("/{}", rel.display())
    }

    /// Processes of the cgroup killed by its OOM killer so far: v2
    /// `oom_kill` of `memory.events`, v1 of `memory.oom_control`.
    pub fn oom_kills(&self) -> u64 {
        let file = match self.version {
            1 => "memory.oom_control",
            _ => "memory.events",
        };
        std::fs::read_to_string(self.cgroup.join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            .unwrap_or(0)
    }

    /// `sh -c` that joins the cgroup, then execs `args` (same pid).
    pub fn command(&self, args: &[&str]) -> Command {
        let argv = self.wrap(args);
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]).stdin(Stdio::null());
        c
    }

    /// The argv of [`RealSwap::command`].
    pub fn wrap(&self, args: &[&str]) -> Vec<String> {
        let quoted: Vec<String> = args
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
            .collect();
        vec![
            "sh".into(),
            "-c".into(),
            format!(
                "echo $$ > {}/cgroup.procs && exec {}",
                self.cgroup.display(),
                quoted.join(" ")
            ),
        ]
    }
}

#[cfg(target_os = "linux")]
impl Drop for RealSwap {
    fn drop(&mut self) {
        kill_cgroup(&self.cgroup);
        let _ = std::fs::remove_dir(&self.cgroup);
        let _ = Command::new("swapoff").arg(&self.swapfile).status();
        let _ = std::fs::remove_file(&self.swapfile);
    }
}

#[cfg(target_os = "linux")]
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

/// Whether the test process that named a leftover (`…-<pid>…`) is gone.
#[cfg(target_os = "linux")]
fn owner_gone(name: &str) -> bool {
    let digits: String = name
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse::<u32>().map_or(true, |pid| {
        pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
    })
}

#[cfg(target_os = "linux")]
fn write_cgroup(file: &Path, value: &str) {
    std::fs::write(file, value)
        .unwrap_or_else(|e| panic!("write {value:?} to {}: {e}", file.display()));
}

#[cfg(target_os = "linux")]
fn cleanup_stale(cgroup_parent: &Path) {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for line in swaps.lines().skip(1) {
        if let Some(file) = line
            .split_whitespace()
            .next()
            .filter(|f| f.contains(PREFIX) && owner_gone(f))
        {
            let _ = Command::new("swapoff").arg(file).status();
            let _ = std::fs::remove_file(file);
        }
    }
    if let Ok(dir) = std::fs::read_dir(cgroup_parent) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(PREFIX) && owner_gone(&name) {
                kill_cgroup(&e.path());
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

#[cfg(target_os = "linux")]
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
