//! Test harness shared by swapsight's test suites (the CLI's and the app's):
//! temp dirs, the skip-or-fail rule, and real swap — a swap file plus a
//! memory cgroup whose limit is below what a process fills, so its pages go
//! to swap while its footprint stays low.
//!
//! Every name is at the crate root. The parts: `skip` (root, CI, the
//! skip-or-fail rule), `dirs` (a temp dir, a tmpfs), `realswap` (the swap
//! pool and its cgroups) and `browser` (a headless Chromium for the UI
//! tests); processes to wait for or crowd with, and the UI's JSON shapes,
//! are here.

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

mod browser;
mod dirs;
mod realswap;
mod skip;

pub use browser::{browser, BROWSERS};
pub use dirs::TempDir;
#[cfg(target_os = "linux")]
pub use dirs::Tmpfs;
#[cfg(target_os = "linux")]
pub use realswap::{hold_swap_pool, memory_cgroup_parent, RealSwap, SwapPoolLock};
pub use realswap::{memfill, CgroupSwap, FileLock, CGROUP_PARENT_ENV, MIB};
pub use skip::{in_ci, is_root, skip_unless_ci};

/// Idle processes, killed on drop: a test that shows a bound on processes
/// needs more of them than the bound, and a CI machine may run only a few.
pub struct Crowd(Vec<Child>);

impl Crowd {
    pub fn new(n: usize) -> Crowd {
        let spawn = |_| {
            std::process::Command::new("sleep")
                .arg("600")
                .stdin(std::process::Stdio::null())
                .spawn()
                .expect("spawn sleep")
        };
        Crowd((0..n).map(spawn).collect())
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits for a child with a deadline; kills it and panics when it runs over.
pub fn wait_with_deadline(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let until = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            return st;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process {} ran over {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The first `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

#[cfg(test)]
mod tests;

/// The shapes the UI reads, one fixture for the app's tests and serve's:
/// the same calls must answer the same JSON shape in both shells.
pub const VIEW_SHAPES: &str = include_str!("../../core/tests/fixtures/view-shapes.json");

/// A JSON value's shape down to `depth`: keys and types, an array by its
/// first element. One definition, so the two shells' tests compare alike.
pub fn json_shape(v: &serde_json::Value, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(_) if depth == 0 => "array".into(),
        Value::Object(_) if depth == 0 => "object".into(),
        Value::Array(a) => a
            .first()
            .map(|e| json_shape(e, depth - 1))
            .into_iter()
            .collect(),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| (k.clone(), json_shape(v, depth - 1)))
            .collect(),
    }
}
