use super::*;
use std::os::unix::fs::PermissionsExt;
use swapsight_testkit::TempDir;

const SECOND: Duration = Duration::from_secs(1);

/// An executable shell script `name` in `dir`.
fn script(dir: &TempDir, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The pid a script wrote to `file`, once it is there.
fn pid_in(file: &Path) -> libc::pid_t {
    let deadline = Instant::now() + 10 * SECOND;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` still runs (a zombie waiting for init to reap it does
/// not).
fn alive(pid: libc::pid_t) -> bool {
    #[cfg(target_os = "linux")]
    if let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) {
        let state = crate::probe::linux::parse::parse_stat(&stat).map(|s| s.state);
        return !matches!(state, Some(b'Z' | b'X') | None);
    }
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Whether `pid` ends within a few seconds.
fn ends_soon(pid: libc::pid_t) -> bool {
    let deadline = Instant::now() + 5 * SECOND;
    while alive(pid) {
        if Instant::now() > deadline {
            // SAFETY: kill touches no memory; the test's own leftover.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn every_tool_is_named_by_absolute_paths_never_looked_up_on_path() {
    for (name, paths) in INSTALLED {
        assert!(!paths.is_empty(), "{name}");
        for p in *paths {
            assert!(
                p.starts_with('/') && p.ends_with(&format!("/{name}")),
                "{p}"
            );
        }
    }
    let none = find("swapsight-no-such-tool").unwrap_err();
    assert_eq!(none.describe(), "no known place for it on this OS");
    // The tools the Linux doctor runs are where the distribution put them.
    #[cfg(target_os = "linux")]
    for name in ["free", "ps", "swapon", "uname"] {
        let found = find(name).unwrap_or_else(|e| panic!("{name}: {}", e.describe()));
        assert!(found.is_absolute() && found.ends_with(name), "{found:?}");
    }
}

#[test]
fn trust_asks_for_root_or_this_user_and_no_one_else_writing() {
    let me = 1000;
    let ok = |uid, mode| distrust(Entry { uid, mode }, me);
    assert_eq!(ok(0, 0o755), None);
    assert_eq!(ok(me, 0o700), None);
    assert_eq!(
        ok(65534, 0o755).as_deref(),
        Some("owned by uid 65534, neither root nor this user")
    );
    assert_eq!(
        ok(0, 0o775).as_deref(),
        Some("writable by its group (mode 775)")
    );
    // /tmp: root's, sticky, but anyone may add a name to it.
    assert_eq!(
        ok(0, 0o41777).as_deref(),
        Some("writable by anyone (mode 1777)")
    );
}

#[test]
fn a_tool_in_a_folder_anyone_may_write_is_refused_and_the_note_says_where() {
    let dir = TempDir::new("tools-trust");
    let fake = script(&dir, "ps", "echo planted");
    // A folder like /tmp (a Mac's $TMPDIR is the user's own, so made so).
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let fake = fake.to_str().unwrap();
    let err = find_in(&[fake, "/nonexistent/ps"], euid()).unwrap_err();
    let said = err.describe();
    assert!(
        said.starts_with(&format!("looked at {fake} (its folder ")),
        "{said}"
    );
    assert!(said.contains("is writable by anyone (mode 777)"), "{said}");
    assert!(said.ends_with("/nonexistent/ps (not there)"), "{said}");
}

#[test]
fn tools_that_fail_or_hang_are_outcomes() {
    let dir = TempDir::new("tools-outcomes");
    let t = 5 * SECOND;
    let (missing, path) = run("swapsight-no-such-tool", &[], t);
    assert!(matches!(missing, Outcome::Missing(_)) && path.is_none());
    let fails = script(&dir, "fails", "echo 'no such figure' >&2; exit 3");
    assert_eq!(
        run_path("fails", &fails, &[], t),
        Outcome::Failed("fails failed (exit status: 3): no such figure".into())
    );
    let echo = script(&dir, "echo", "echo \"$@\"");
    assert_eq!(
        run_path("echo", &echo, &["hi"], t),
        Outcome::Output("hi\n".into())
    );
    let slow = script(&dir, "slow", "exec sleep 5");
    let slow = run_path("slow", &slow, &[], Duration::from_millis(200));
    assert!(
        matches!(&slow, Outcome::Failed(w) if w.contains("was stopped")),
        "{slow:?}"
    );
}

/// Regression: a tool that put a child in the background and hung left the
/// child running after its timeout, and what it had printed was lost.
#[test]
fn a_hung_tool_is_stopped_with_its_background_child_and_what_it_printed_is_kept() {
    let dir = TempDir::new("tools-hang");
    let pidfile = dir.join("child.pid");
    let tool = script(
        &dir,
        "hangs",
        &format!(
            "sleep 60 & echo $! > {}; echo 'Pages free: 7.'; exec sleep 60",
            pidfile.display()
        ),
    );
    let out = run_path("hangs", &tool, &[], Duration::from_millis(500));
    let child = pid_in(&pidfile);
    assert!(ends_soon(child), "the tool's child {child} outlived it");
    assert!(
        matches!(&out, Outcome::Failed(w) if w.contains("was stopped") && w.contains("Pages free: 7.")),
        "{out:?}"
    );
}

/// Regression: a tool that printed its output, ended, and left a child in
/// the background holding its standard output was read as empty (the
/// reader waited for an end of file that the child held back).
#[test]
fn a_tool_that_ends_leaving_a_child_on_its_output_is_read_and_the_child_stopped() {
    let dir = TempDir::new("tools-leftover");
    let pidfile = dir.join("child.pid");
    let tool = script(
        &dir,
        "leaves",
        &format!(
            "echo 'Swap: 1 2 3'; sleep 60 & echo $! > {}",
            pidfile.display()
        ),
    );
    let start = Instant::now();
    let out = run_path("leaves", &tool, &[], 10 * SECOND);
    assert_eq!(out, Outcome::Output("Swap: 1 2 3\n".into()));
    assert!(start.elapsed() < 5 * SECOND, "{:?}", start.elapsed());
    let child = pid_in(&pidfile);
    assert!(ends_soon(child), "the tool's child {child} outlived it");
}

/// A child that left the tool's group (`setsid`) cannot be stopped with it,
/// but what the tool printed is read all the same, a moment after it ends.
#[cfg(target_os = "linux")]
#[test]
fn output_is_read_even_when_a_child_outside_the_group_holds_the_pipe() {
    let dir = TempDir::new("tools-setsid");
    let pidfile = dir.join("child.pid");
    let tool = script(
        &dir,
        "escapes",
        &format!(
            "echo done; setsid sh -c 'echo $$ > {}; exec sleep 60' &\n\
             while [ ! -s {} ]; do sleep 0.05; done",
            pidfile.display(),
            pidfile.display()
        ),
    );
    let start = Instant::now();
    let out = run_path("escapes", &tool, &[], 10 * SECOND);
    let child = pid_in(&pidfile);
    // SAFETY: kill touches no memory; the test's own child.
    unsafe { libc::kill(child, libc::SIGKILL) };
    assert_eq!(out, Outcome::Output("done\n".into()));
    assert!(start.elapsed() < 5 * SECOND, "{:?}", start.elapsed());
}

/// Regression: a doctor killed while a tool ran left the tool running.
/// The test runs itself as the doctor (with $SWAPSIGHT_TOOLS_TEST_DOCTOR
/// naming the tool), kills that process with SIGKILL once the tool has
/// started, and checks that the tool ends too.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_doctor_takes_its_running_tool_with_it() {
    if let Some(tool) = std::env::var_os("SWAPSIGHT_TOOLS_TEST_DOCTOR") {
        let _ = run_path("tool", Path::new(&tool), &[], 60 * SECOND);
        return;
    }
    let dir = TempDir::new("tools-orphan");
    let pidfile = dir.join("tool.pid");
    let tool = script(
        &dir,
        "waits",
        &format!("echo $$ > {}; exec sleep 60", pidfile.display()),
    );
    // This test again, by the name the harness gives it wherever the
    // module sits.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::a_killed_doctor_takes_its_running_tool_with_it");
    let mut doctor = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name.as_str(), "--nocapture"])
        .env("SWAPSIGHT_TOOLS_TEST_DOCTOR", &tool)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = pid_in(&pidfile);
    assert!(alive(pid));
    doctor.kill().unwrap();
    doctor.wait().unwrap();
    assert!(ends_soon(pid), "the tool {pid} outlived the doctor");
}
