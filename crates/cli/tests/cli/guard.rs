//! `swapsight guard`: the budget stops a swapping tree (setsid and
//! SIGTERM-ignoring members included) on real swap, a command that fits
//! passes its exit code through, the free-memory gate times out without
//! starting the command, Ctrl-C and SIGTERM stop the tree, bad arguments are
//! one line.

use std::path::Path;
#[cfg(target_os = "linux")]
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::util::*;

/// One process the test script started: pid, session id, start time.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy)]
struct Member {
    pid: u32,
    sid: u32,
    start: u64,
}

/// `/proc/PID/stat` fields after the name: (state, session, start time).
#[cfg(target_os = "linux")]
fn stat_of(pid: u32) -> Option<(String, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    // rest[0] is field 3 (state); session is field 6, starttime field 22.
    Some((
        rest[0].to_string(),
        rest[3].parse().ok()?,
        rest[19].parse().ok()?,
    ))
}

/// The same process (pid and start time) is still there and not a zombie.
#[cfg(target_os = "linux")]
fn alive(m: &Member) -> bool {
    stat_of(m.pid).is_some_and(|(state, _, start)| state != "Z" && state != "X" && start == m.start)
}

/// Shell that appends "PID SESSION" of the running shell to `file`.
#[cfg(target_os = "linux")]
fn note_self(file: &Path) -> String {
    format!(
        "echo $$ $(cut -d\" \" -f6 /proc/$$/stat) >> {}",
        file.display()
    )
}

/// Waits until `file` lists `n` processes; returns them with start times.
#[cfg(target_os = "linux")]
fn members(file: &Path, n: usize, guard: &mut Child) -> Vec<Member> {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() >= n {
            return lines
                .iter()
                .map(|l| {
                    let mut f = l.split_whitespace().map(|v| v.parse::<u32>().unwrap());
                    let (pid, sid) = (f.next().unwrap(), f.next().unwrap());
                    let start = stat_of(pid).map_or(0, |s| s.2);
                    Member { pid, sid, start }
                })
                .collect();
        }
        if let Some(st) = guard.try_wait().unwrap() {
            panic!("guard ended ({st}) before the script listed {n} processes: {text:?}");
        }
        assert!(Instant::now() < until, "the script listed only {text:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(target_os = "linux")]
fn finish(mut guard: Child, limit: Duration) -> (Option<i32>, String) {
    let status = wait_with_deadline(&mut guard, limit);
    let mut err = String::new();
    std::io::Read::read_to_string(guard.stderr.as_mut().unwrap(), &mut err).unwrap();
    (status.code(), err)
}

fn events(trace: &Path) -> Vec<swapsight::trace::Event> {
    let t = swapsight::trace::read(trace).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    assert!(
        t.header().writer.ends_with(" guard"),
        "{}",
        t.header().writer
    );
    t.events
}

fn kinds(events: &[swapsight::trace::Event]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

#[cfg(target_os = "linux")]
#[test]
fn budget_stops_a_swapping_tree_with_setsid_and_sigterm_ignoring_members() {
    let Some(rs) = RealSwap::new(1024, 256) else {
        return;
    };
    let t0 = Instant::now();
    let dir = TempDir::new("guard-budget");
    let (trace, list) = (dir.join("b.jsonl"), dir.join("pids"));
    let fill = memfill();
    let fill = fill.display();
    // Main filler: 1.5 GiB of random bytes in a 256 MiB cgroup — more than
    // the 1 GiB swap file holds. Beside it, one filler in a session of its
    // own and one that ignores SIGTERM.
    let script = format!(
        "setsid sh -c '{note}; exec python3 {fill} --mb 64 --hold 60' &
         sh -c '{note}; exec python3 {fill} --mb 64 --ignore-term --hold 60' &
         {note}; exec python3 {fill} --mb 1536 --hold 30",
        note = note_self(&list),
    );
    let cmd = rs.wrap(&["sh", "-c", &script]);
    let mut guard = swapsight()
        .args([
            "guard",
            "--swap-budget",
            "256M",
            "--grace",
            "2s",
            "--interval",
            "250ms",
            "-o",
        ])
        .arg(&trace)
        .arg("--")
        .args(&cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tree = members(&list, 3, &mut guard);
    let main = tree.iter().find(|m| m.pid == guard_child(&trace)).copied();
    let main = main.unwrap_or_else(|| panic!("the command's pid is not in {tree:?}"));
    let setsid = tree.iter().find(|m| m.sid == m.pid).copied();
    let setsid = setsid.unwrap_or_else(|| panic!("no session leader in {tree:?}"));
    assert_ne!(setsid.sid, main.sid, "{tree:?}");

    let (code, err) = finish(guard, Duration::from_secs(40));
    eprintln!("--- guard stderr ---\n{err}");
    assert_eq!(code, Some(10), "{err}");
    let stop = err
        .lines()
        .find(|l| l.contains("> budget"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(stop.contains("> budget 256 MiB after "), "{stop}");
    // The command is named by the script its interpreter runs.
    assert!(
        stop.contains("stopped memfill.py (python3")
            && stop.contains(&format!(") (pid {}) and ", main.pid))
            && stop.contains(" descendants"),
        "{stop}"
    );
    assert!(
        stop.contains("needed SIGKILL"),
        "the SIGTERM-ignoring filler was not killed: {stop}"
    );
    for m in &tree {
        assert!(!alive(m), "{m:?} survived the guard");
    }
    let left = std::fs::read_to_string(rs.cgroup.join("cgroup.procs")).unwrap();
    assert!(
        left.trim().is_empty(),
        "processes left in the cgroup: {left}"
    );

    // The trace: events in order, the stop among them, and swap stopped
    // growing well before the 1 GiB swap file could fill.
    let ev = events(&trace);
    assert_eq!(kinds(&ev), ["command-start", "guard-stop", "command-exit"]);
    assert_eq!(ev[1].code, Some(10));
    assert_eq!(format!("swapsight: {}", ev[1].message), stop);
    let t = swapsight::trace::read(&trace).unwrap();
    let used: Vec<u64> = t
        .samples
        .iter()
        .map(|s| s.sample.system.swap_used_bytes)
        .collect();
    let growth = used.iter().max().unwrap().saturating_sub(used[0]);
    assert!(growth > 256 * MIB, "swap grew only {growth} bytes");
    assert!(
        growth < 768 * MIB,
        "swap grew {growth} bytes: the stop came late"
    );
    eprintln!("budget test: {:.1}s", t0.elapsed().as_secs_f64());
    drop(rs);
}

/// The command's pid, from the trace header (the guard writes it at start).
#[cfg(target_os = "linux")]
fn guard_child(trace: &Path) -> u32 {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(t) = swapsight::trace::read(trace) {
            if let Some(pid) = t.header.as_ref().and_then(|h| h.watch_pid) {
                return pid;
            }
        }
        assert!(
            Instant::now() < until,
            "no trace header in {}",
            trace.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn false_fit_stop_ends_the_run_with_11() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("guard-ff");
    let trace = dir.join("ff.jsonl");
    let fill = memfill();
    let cmd = rs.wrap(&[
        "python3",
        fill.to_str().unwrap(),
        "--mb",
        "1536",
        "--hold",
        "30",
    ]);
    let out = swapsight()
        .args([
            "guard",
            "--on-false-fit",
            "stop",
            "--grace",
            "2s",
            "--interval",
            "250ms",
            "-o",
        ])
        .arg(&trace)
        .arg("--")
        .args(&cmd)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    eprintln!("--- guard stderr ---\n{err}");
    assert_eq!(out.status.code(), Some(11), "{err}");
    // Flagged by the script's name, not the interpreter's.
    assert!(
        err.contains("memfill.py (python3") && err.contains("false fit"),
        "{err}"
    );
    assert!(err.contains("was flagged a false fit after"), "{err}");
    let ev = events(&trace);
    let stop = ev
        .iter()
        .find(|e| e.kind == "guard-stop")
        .expect("guard-stop event");
    assert_eq!(stop.code, Some(11));
    let left = std::fs::read_to_string(rs.cgroup.join("cgroup.procs")).unwrap();
    assert!(
        left.trim().is_empty(),
        "processes left in the cgroup: {left}"
    );
    drop(rs);
}

#[test]
fn a_command_that_fits_runs_to_the_end_and_passes_its_exit_code() {
    let dir = TempDir::new("guard-fits");
    let fill = memfill();
    for (code, script) in [
        (0, "exec python3 \"$0\" --mb 64 --hold 0.5"),
        (3, "python3 \"$0\" --mb 64 --hold 0.5; exit 3"),
    ] {
        let trace = dir.join(&format!("fits-{code}.jsonl"));
        let out = swapsight()
            // A budget no concurrent test can spend: this command must not be stopped.
            .args([
                "guard",
                "--wait-free",
                "1",
                "--swap-budget",
                "64G",
                "--interval",
                "100ms",
                "-o",
            ])
            .arg(&trace)
            .args(["--", "sh", "-c", script])
            .arg(&fill)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(!err.contains("stopped"), "{err}");
        let ev = events(&trace);
        assert_eq!(
            kinds(&ev),
            ["guard-wait", "command-start", "command-exit"],
            "{ev:?}"
        );
        assert_eq!(ev[2].code, Some(code));
        let t = swapsight::trace::read(&trace).unwrap();
        assert!(t.samples.len() >= 3, "{} samples", t.samples.len());
    }
}

#[test]
fn wait_free_above_free_memory_gives_up_with_12_without_starting() {
    let dir = TempDir::new("guard-wait");
    let marker = dir.join("started");
    let trace = dir.join("w.jsonl");
    let t0 = Instant::now();
    let out = swapsight()
        .args([
            "guard",
            "--wait-free",
            "99.99",
            "--wait-timeout",
            "1s",
            "-o",
        ])
        .arg(&trace)
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    let took = t0.elapsed();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(12), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(!marker.exists(), "the command was started");
    assert!(
        !trace.exists(),
        "a trace was written for a run that never started"
    );
    assert!(
        err.contains("waiting for 99.99 % free memory: now "),
        "{err}"
    );
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("swapsight: gave up after 1.")
            && last.ends_with("; touch was not started"),
        "{last}"
    );
}

/// A tree of three: the shell, a `setsid` sleeper, a sleeper ignoring
/// SIGINT and SIGTERM. Sends `signal` to the guard, returns its exit code.
#[cfg(target_os = "linux")]
fn signal_stops_the_tree(signal: libc::c_int, tag: &str) -> (Option<i32>, String) {
    let dir = TempDir::new(tag);
    let list = dir.join("pids");
    let note = note_self(&list);
    let script = format!(
        "setsid sh -c '{note}; exec sleep 60' &
         sh -c 'trap \"\" INT TERM; {note}; exec sleep 61' &
         {note}; wait"
    );
    let mut guard = swapsight()
        .args(["guard", "--grace", "1s", "--interval", "100ms", "-o"])
        .arg(dir.join("t.jsonl"))
        .args(["--", "sh", "-c", &script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tree = members(&list, 3, &mut guard);
    assert!(
        tree.iter().any(|m| m.sid == m.pid),
        "no setsid member in {tree:?}"
    );
    // Let a tick or two see the tree.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a plain signal to the guard we spawned.
    unsafe { libc::kill(guard.id() as libc::pid_t, signal) };
    let (code, err) = finish(guard, Duration::from_secs(15));
    for m in &tree {
        assert!(!alive(m), "{m:?} survived: {err}");
    }
    let ev = events(&dir.join("t.jsonl"));
    assert_eq!(
        kinds(&ev),
        ["command-start", "guard-stop", "command-exit"],
        "{ev:?}"
    );
    (code, err)
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_the_whole_tree() {
    let (code, err) = signal_stops_the_tree(libc::SIGINT, "guard-int");
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT after "), "{err}");
    assert!(err.contains("and 2 descendants"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_stops_the_whole_tree() {
    let (code, err) = signal_stops_the_tree(libc::SIGTERM, "guard-term");
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM after "), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn leftovers_of_a_command_that_exits_are_stopped() {
    let dir = TempDir::new("guard-left");
    let list = dir.join("pids");
    let note = note_self(&list);
    let script = format!("setsid sh -c '{note}; exec sleep 60' & sleep 0.5; exit 4");
    let mut guard = swapsight()
        .args(["guard", "--grace", "1s", "--interval", "100ms", "-o"])
        .arg(dir.join("t.jsonl"))
        .args(["--", "sh", "-c", &script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tree = members(&list, 1, &mut guard);
    let (code, err) = finish(guard, Duration::from_secs(15));
    assert_eq!(code, Some(4), "{err}");
    assert!(!alive(&tree[0]), "{:?} outlived the guard: {err}", tree[0]);
    assert!(
        err.contains("the command exited after ")
            // `sh -c '…'` is named by its shell (dash on Debian) and `-c`.
            && err.contains("stopped 1 process left by ")
            && err.contains(" -c (pid "),
        "{err}"
    );
}

#[test]
fn bad_arguments_are_one_line_and_a_usage_error() {
    for (args, needle) in [
        (&["--swap-budget", "8X", "--", "true"][..], "'8X'"),
        (&["--wait-free", "140", "--", "true"][..], "'140'"),
        (&["--grace", "abc", "--", "true"][..], "'abc'"),
        (&["--on-false-fit", "maybe", "--", "true"][..], "'maybe'"),
        (&["--stop-before", "10x", "--", "true"][..], "'10x'"),
        (
            &["--stop-at-pressure", "normal", "--", "true"][..],
            "'normal'",
        ),
        (&["--stop-at-pressure", "hot", "--", "true"][..], "'hot'"),
        (&["--swap-budget", "1G"][..], "no command to guard"),
        (
            &["--wait-timeout", "1s", "--", "true"][..],
            "--wait-timeout needs --wait-free",
        ),
    ] {
        let out = swapsight().arg("guard").args(args).output().unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("swapsight: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_command_that_does_not_exist_is_127() {
    let dir = TempDir::new("guard-nocmd");
    let out = swapsight()
        .current_dir(dir.path())
        .args(["guard", "--swap-budget", "1G", "--", "no-such-command-xyz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        stderr_of(&out),
        "swapsight: command not found: no-such-command-xyz\n"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_stops_the_tree_and_says_why() {
    // 64 KiB: the header and a few dozen samples, then ENOSPC mid-run.
    let Some(disk) = Tmpfs::mount("guard-full", 64) else {
        return;
    };
    let dir = TempDir::new("guard-full-pids");
    let list = dir.join("pids");
    let note = note_self(&list);
    let trace = disk.join("g.jsonl");
    let script = format!("setsid sh -c '{note}; exec sleep 333' & {note}; exec sleep 334");
    let mut guard = swapsight()
        .args(["guard", "--grace", "1s", "--interval", "20ms", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", &script])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tree = members(&list, 2, &mut guard);
    let (code, err) = finish(guard, Duration::from_secs(30));
    assert_eq!(code, Some(1), "{err}");
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "swapsight: cannot write the trace {} (No space left on device",
            trace.display()
        )) && last.contains(") after ")
            && last.contains("; stopped sleep (pid ")
            && last.ends_with(" and 1 descendant"),
        "{err}"
    );
    assert_eq!(err.matches("No space left").count(), 1, "{err}");
    for m in &tree {
        assert!(!pid_alive(m.pid), "{m:?} survived the guard: {err}");
    }
    // What was written before the disk filled reads back.
    let t = swapsight::trace::read(&trace).unwrap();
    assert!(t.samples.len() >= 2, "{} samples", t.samples.len());
    assert_eq!(kinds(&t.events), ["command-start"]);
    drop(disk);
}

#[test]
fn an_empty_command_is_said_to_be_empty() {
    let out = swapsight().args(["guard", "--", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "swapsight: the command is empty: give a program after -- (see --help)\n"
    );
}
