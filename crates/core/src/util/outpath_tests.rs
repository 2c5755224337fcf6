use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::*;

/// Another user's uid: `nobody`.
const OTHER: u32 = 65534;

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let d = std::env::temp_dir().join(format!(
            "swapsight-outpath-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    locate(path)?.replace_with(|out: &mut dyn Write| out.write_all(text.as_bytes()))
}

/// Whether links can be given to another user here (root can); in CI the
/// tests that need it must run.
fn can_chown() -> bool {
    let root = euid() == 0;
    assert!(
        root || std::env::var("CI").as_deref() != Ok("true"),
        "the planted-link tests must run as root in CI"
    );
    root
}

/// A link planted by another user: made here, then handed to `nobody`.
fn plant_link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
    std::os::unix::fs::lchown(at, Some(OTHER), Some(OTHER)).unwrap();
}

#[test]
fn a_new_file_is_written_whole_with_no_temp_left() {
    let d = Dir::new("new");
    write(&d.join("out.csv"), "a,b\n").unwrap();
    assert_eq!(std::fs::read_to_string(d.join("out.csv")).unwrap(), "a,b\n");
    let names: Vec<_> = std::fs::read_dir(&d.0).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "only the output: {names:?}");
}

#[test]
fn dot_dot_in_a_path_is_walked_like_the_kernel_walks_it() {
    let d = Dir::new("rel");
    assert!(locate(Path::new(".")).is_err(), "'.' is not a file name");
    let abs = d.join("x.txt");
    write(&abs, "1").unwrap();
    assert!(locate(&d.join("sub/../x.txt")).is_err(), "no folder sub");
    std::fs::create_dir(d.join("sub")).unwrap();
    write(&d.join("sub/../x.txt"), "2").unwrap();
    assert_eq!(std::fs::read_to_string(&abs).unwrap(), "2");
}

#[test]
fn the_users_own_link_still_updates_the_file_it_names() {
    let d = Dir::new("own");
    std::fs::create_dir(d.join("runs")).unwrap();
    std::fs::write(d.join("runs/5.csv"), "old").unwrap();
    std::os::unix::fs::symlink("runs/5.csv", d.join("latest.csv")).unwrap();
    write(&d.join("latest.csv"), "new").unwrap();
    assert_eq!(
        std::fs::read_to_string(d.join("runs/5.csv")).unwrap(),
        "new"
    );
    assert!(std::fs::symlink_metadata(d.join("latest.csv"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn another_users_link_in_a_sticky_folder_is_never_written_through() {
    if !can_chown() {
        return;
    }
    let d = Dir::new("planted");
    std::fs::set_permissions(&d.0, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = d.join("victim");
    std::fs::write(&victim, "root:x:0:0\n").unwrap();
    plant_link(&victim, &d.join("report.csv"));
    let err = write(&d.join("report.csv"), "pwned").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    assert!(
        err.to_string().contains("owned by uid 65534"),
        "says whose link: {err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:x:0:0\n");
    // A trace (`record -o`) is refused the same way.
    assert!(locate(&d.join("report.csv"))
        .and_then(|p| p.create_owner_only())
        .is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:x:0:0\n");
}

#[test]
fn another_users_link_on_the_way_to_the_folder_is_refused() {
    if !can_chown() {
        return;
    }
    let d = Dir::new("planted-dir");
    std::fs::create_dir(d.join("etc")).unwrap();
    std::fs::write(d.join("etc/passwd"), "root").unwrap();
    plant_link(&d.join("etc"), &d.join("out"));
    let err = write(&d.join("out/passwd"), "pwned").unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("etc/passwd")).unwrap(),
        "root"
    );
}

#[test]
fn roots_own_links_are_followed() {
    // /dev/stdout and /dev/null: system links and devices, written in place.
    let mut place = locate(Path::new("/dev/null")).unwrap();
    assert!(place.is_special());
    place
        .replace_with(|out: &mut dyn Write| out.write_all(b"x"))
        .unwrap();
    place = locate(Path::new("/dev/null")).unwrap();
    assert!(place.create_owner_only().is_ok());
}

#[test]
fn a_folder_is_not_a_file_name() {
    let d = Dir::new("dir");
    std::fs::create_dir(d.join("sub")).unwrap();
    let err = write(&d.join("sub"), "x").unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
}

#[test]
fn a_trace_truncates_its_own_file_and_makes_it_owner_only() {
    let d = Dir::new("trace");
    let path = d.join("t.jsonl");
    std::fs::write(&path, "old old old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut f = locate(&path).unwrap().create_owner_only().unwrap();
    f.write_all(b"new").unwrap();
    drop(f);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
}

#[test]
fn a_second_writer_to_a_trace_being_written_is_refused_and_its_lines_kept() {
    let d = Dir::new("lock");
    let path = d.join("t.jsonl");
    let mut first = locate(&path).unwrap().create_owner_only().unwrap();
    first.write_all(b"{\"type\":\"header\"}\n").unwrap();
    let err = locate(&path)
        .and_then(|p| p.create_owner_only())
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "{err}");
    assert!(
        err.to_string()
            .starts_with("another recording is writing to this trace"),
        "{err}"
    );
    // Refused before it truncated: the first writer's line is whole.
    first.write_all(b"{\"type\":\"sample\"}\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"type\":\"header\"}\n{\"type\":\"sample\"}\n"
    );
    // Once the first is closed (or killed) the name is free again.
    drop(first);
    assert!(locate(&path).unwrap().create_owner_only().is_ok());
}

#[test]
fn a_trace_never_empties_a_file_through_a_hard_link() {
    let d = Dir::new("hardlink");
    std::fs::write(d.join("precious"), "keep").unwrap();
    std::fs::hard_link(d.join("precious"), d.join("t.jsonl")).unwrap();
    let err = locate(&d.join("t.jsonl"))
        .and_then(|p| p.create_owner_only())
        .unwrap_err();
    assert!(err.to_string().contains("hard links"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("precious")).unwrap(), "keep");
}

#[test]
fn a_trace_never_truncates_another_users_file() {
    if !can_chown() {
        return;
    }
    let d = Dir::new("theirs");
    std::fs::write(d.join("t.jsonl"), "theirs").unwrap();
    std::os::unix::fs::lchown(d.join("t.jsonl"), Some(OTHER), Some(OTHER)).unwrap();
    let err = locate(&d.join("t.jsonl"))
        .and_then(|p| p.create_owner_only())
        .unwrap_err();
    assert!(err.to_string().contains("owned by uid 65534"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("t.jsonl")).unwrap(),
        "theirs"
    );
}

#[test]
fn another_users_fifo_is_not_written_to() {
    if !can_chown() {
        return;
    }
    let d = Dir::new("fifo");
    let fifo = d.join("report.csv");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
    std::os::unix::fs::lchown(&fifo, Some(OTHER), Some(OTHER)).unwrap();
    let err = locate(&fifo).unwrap_err();
    assert!(err.to_string().contains("special file"), "{err}");
}

#[test]
fn a_loop_of_links_ends_in_an_error() {
    let d = Dir::new("loop");
    std::os::unix::fs::symlink("b", d.join("a")).unwrap();
    std::os::unix::fs::symlink("a", d.join("b")).unwrap();
    assert!(write(&d.join("a"), "x").is_err());
    assert!(write(&d.join("a/x"), "x").is_err());
}

#[test]
fn the_paths_that_name_our_own_descriptors() {
    let me = 4242;
    for (path, fd) in [
        ("/dev/stdout", Some(1)),
        ("/dev/stderr", Some(2)),
        ("/dev/fd/7", Some(7)),
        ("/proc/self/fd/12", Some(12)),
        ("/proc/thread-self/fd/3", Some(3)),
        ("/proc/4242/fd/5", Some(5)),
        // Another process's descriptors, or not a descriptor at all.
        ("/proc/4243/fd/5", None),
        ("/dev/fd/", None),
        ("/dev/fd/1/x", None),
        ("/dev/fd/../fd/1", None),
        ("/dev/fd/-1", None),
        ("/dev/stdin", None),
        ("dev/stdout", None),
        ("/tmp/dev/stdout", None),
    ] {
        assert_eq!(descriptor_named(Path::new(path), me), fd, "{path}");
    }
}

/// Regression: an export to `/dev/stdout` appended to `f` followed the
/// link to `f` and renamed a temp file over it (its content lost); a
/// recording to `/dev/stdout` appended to `log` truncated `log` and made
/// it 0600. A path naming an open descriptor of ours is written through
/// it, as the shell opened it.
#[test]
fn a_path_naming_our_open_descriptor_is_written_through_it() {
    use std::os::fd::AsRawFd;
    let d = Dir::new("fd");
    let log = d.join("log");
    std::fs::write(&log, "kept\n").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    // What `>> log` hands a process: a descriptor opened to append.
    let held = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let path = PathBuf::from(format!("/dev/fd/{}", held.as_raw_fd()));
    let inode = std::fs::metadata(&log).unwrap().ino();
    write(&path, "export\n").unwrap();
    let mut trace = locate(&path).unwrap().create_owner_only().unwrap();
    trace.write_all(b"trace\n").unwrap();
    drop(trace);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "kept\nexport\ntrace\n"
    );
    let meta = std::fs::metadata(&log).unwrap();
    assert_eq!(meta.ino(), inode, "renamed over");
    assert_eq!(meta.mode() & 0o777, 0o644, "chmodded");
    // A descriptor open only for reading is no place to write: the path is
    // walked as any other path.
    let ro = std::fs::File::open(&log).unwrap();
    let ro_path = PathBuf::from(format!("/dev/fd/{}", ro.as_raw_fd()));
    assert!(locate(&ro_path).map_or(true, |p| p.inherited.is_none()));
}
