//! Directories a test writes in: a fresh one, and a small tmpfs that fills
//! up mid-run; both removed on drop.

use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::process::{Command, Stdio};

#[cfg(target_os = "linux")]
use crate::skip::{is_root, skip_unless_ci};

/// A fresh directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("swapsight-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tmpfs of `size_kib` KiB on a fresh directory — a disk that fills up
/// mid-run. Unmounted (lazily if still busy) and removed on drop, also when
/// the test panics. Mounting needs root: `None` after a note outside CI, a
/// panic in CI.
#[cfg(target_os = "linux")]
pub struct Tmpfs {
    dir: TempDir,
}

#[cfg(target_os = "linux")]
impl Tmpfs {
    pub fn mount(tag: &str, size_kib: u64) -> Option<Tmpfs> {
        skip_unless_ci(
            tag,
            (!is_root()).then(|| "mounting a tmpfs needs root".into()),
        )?;
        let dir = TempDir::new(tag);
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_kib}k"), "tmpfs"])
            .arg(dir.path())
            .output();
        let why_not = match out {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(format!(
                "mount -t tmpfs failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Some(format!("cannot run mount: {e}")),
        };
        skip_unless_ci(tag, why_not)?;
        Some(Tmpfs { dir })
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

#[cfg(target_os = "linux")]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(self.dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Still busy (a process of a failed test holds a file): detach
            // it now; the kernel frees it when the last file closes.
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
        // The directory itself goes with `dir`.
    }
}
