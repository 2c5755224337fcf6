use super::*;
use crate::browser::is_snap_stub;

#[test]
fn the_filler_is_where_the_tests_look_for_it() {
    let text = std::fs::read_to_string(memfill()).expect("crates/testkit/fixtures/memfill.py");
    assert!(
        text.contains("--mb"),
        "not the filler: {}",
        memfill().display()
    );
}

/// The OOM case the CLI's tests report: a cgroup that may not swap kills a
/// filler that outgrows its limit — on whichever cgroup version the machine
/// has (v1 `memory.memsw.limit_in_bytes`, v2 `memory.swap.max` 0).
#[cfg(target_os = "linux")]
#[test]
fn a_cgroup_that_may_not_swap_kills_its_filler() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let Some(rs) = RealSwap::with(256, 128, CgroupSwap::None) else {
        return;
    };
    assert!(rs.cgroup.join("cgroup.procs").exists());
    assert!(
        rs.cgroup_path().starts_with("/swapsight-test-"),
        "{}",
        rs.cgroup_path()
    );
    let fill = memfill();
    let mut child = rs
        .command(&[
            "python3",
            fill.to_str().unwrap(),
            "--mb",
            "512",
            "--hold",
            "1",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("start the filler");
    let status = wait_with_deadline(&mut child, Duration::from_secs(120));
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert!(
        rs.oom_kills() >= 1,
        "no oom_kill counted in {}",
        rs.cgroup.display()
    );
}

#[test]
fn a_snap_stub_is_not_a_browser() {
    let dir = TempDir::new("browser");
    let stub = dir.join("chromium-browser");
    std::fs::write(
        &stub,
        "#!/bin/sh\n# transitional package\nexec /snap/bin/chromium \"$@\"\n",
    )
    .unwrap();
    assert!(is_snap_stub(&stub));
    let real = dir.join("chrome");
    std::fs::write(&real, b"\x7fELF\x02\x01\x01 not a script").unwrap();
    assert!(!is_snap_stub(&real));
    assert!(!is_snap_stub(&dir.join("absent")));
}
