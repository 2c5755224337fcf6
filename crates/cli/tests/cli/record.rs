//! `swapsight record`: exit codes, bad input, kill safety.

use std::time::Duration;

use super::util::*;

/// Exits 3 once the trace `$T` holds two samples (header, start event, two
/// samples), or after 60 s: a loaded machine's first tick, which names every
/// process, can take over a second.
const UNTIL_TWO_SAMPLES: &str =
    "i=0; while [ \"$(cat \"$T\" 2>/dev/null | wc -l)\" -lt 4 ] && [ $i -lt 1200 ]; \
    do sleep 0.05; i=$((i+1)); done; exit 3";

#[test]
fn passes_the_command_exit_code_through() {
    let dir = TempDir::new("exit");
    let trace = dir.join("t.jsonl");
    let out = swapsight()
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", UNTIL_TWO_SAMPLES])
        .env("T", &trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    let t = swapsight::trace::read(&trace).unwrap();
    assert!(t.samples.len() >= 2, "{} samples", t.samples.len());
    assert_eq!(
        t.header().command.as_deref(),
        Some(&["sh".to_string(), "-c".into(), UNTIL_TWO_SAMPLES.into()][..])
    );
    let exit = t
        .events
        .iter()
        .find(|e| e.kind == "command-exit")
        .expect("command-exit event");
    assert_eq!(exit.code, Some(3));
    // The watched tree is in the samples, with real figures.
    let sh = t
        .samples
        .iter()
        .flat_map(|s| &s.sample.processes)
        .find(|p| Some(p.pid) == t.header().watch_pid);
    assert!(
        sh.is_some_and(|p| p.footprint_bytes > 0),
        "watched sh not recorded with a footprint"
    );
    assert!(t.samples[0].sample.system.phys_bytes > 0);
}

/// A command that ends before the first tick is in (here most runs of
/// `/bin/true`) still leaves a trace `report` can judge: the recording
/// waits for the first tick and writes it. Before, such a trace held the
/// command's start and exit and no sample ("the trace has no samples").
#[test]
fn a_command_that_ends_at_once_still_leaves_a_sample_to_report() {
    let dir = TempDir::new("at-once");
    for run in 0..5 {
        let trace = dir.join(&format!("t{run}.jsonl"));
        let out = swapsight()
            .args(["record", "--interval", "500ms", "-o"])
            .arg(&trace)
            .args(["--", "/bin/true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        let t = swapsight::trace::read(&trace).unwrap();
        assert!(
            !t.samples.is_empty(),
            "run {run}: no sample: {}",
            stderr_of(&out)
        );
        assert!(t.events.iter().any(|e| e.kind == "command-exit"));
        let report = swapsight().arg("report").arg(&trace).output().unwrap();
        assert_eq!(
            report.status.code(),
            Some(0),
            "run {run}: {}",
            stderr_of(&report)
        );
        assert!(
            stdout_of(&report).starts_with("verdict: FITS"),
            "{}",
            stdout_of(&report)
        );
    }
}

#[test]
fn missing_command_is_one_line_and_127() {
    let dir = TempDir::new("nocmd");
    let out = swapsight()
        .current_dir(dir.path())
        .args(["record", "--", "no-such-command-xyz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        stderr_of(&out),
        "swapsight: command not found: no-such-command-xyz\n"
    );
}

#[test]
fn missing_pid_is_one_line() {
    let out = swapsight()
        .args(["record", "--pid", "999999999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "swapsight: no process with pid 999999999\n"
    );
}

#[test]
fn bad_interval_is_one_line_and_usage_code() {
    let out = swapsight()
        .args(["record", "--interval", "5x", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("'5x'") && err.contains("--interval"), "{err}");
}

#[test]
fn records_a_running_pid_until_it_exits() {
    let dir = TempDir::new("pid");
    let trace = dir.join("p.jsonl");
    let mut sleeper = std::process::Command::new("sleep")
        .arg("1.5")
        .spawn()
        .unwrap();
    let out = swapsight()
        .args([
            "record",
            "--interval",
            "100ms",
            "--pid",
            &sleeper.id().to_string(),
            "-o",
        ])
        .arg(&trace)
        .output()
        .unwrap();
    let _ = sleeper.wait();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let t = swapsight::trace::read(&trace).unwrap();
    assert!(t.events.iter().any(|e| e.kind == "process-exit"));
    assert!(t.samples.iter().any(|s| s.watched.contains(&sleeper.id())));
}

#[test]
fn sigkill_loses_at_most_the_line_being_written() {
    let dir = TempDir::new("kill");
    let trace = dir.join("k.jsonl");
    let mut rec = swapsight()
        .args(["record", "--interval", "50ms", "--top", "50", "-o"])
        .arg(&trace)
        .args(["--", "sleep", "30"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once a dozen lines are written, however slow the machine.
    let lines = || std::fs::read(&trace).map_or(0, |b| b.iter().filter(|&&b| b == b'\n').count());
    let until = std::time::Instant::now() + Duration::from_secs(60);
    while lines() < 12 {
        assert!(
            std::time::Instant::now() < until,
            "{} lines in 60 s",
            lines()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(120)); // mid-write, likely
    rec.kill().unwrap(); // SIGKILL
    rec.wait().unwrap();
    let bytes = std::fs::read(&trace).unwrap();
    let complete = bytes.iter().filter(|&&b| b == b'\n').count();
    let t = swapsight::trace::read(&trace).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    let records = 1 + t.samples.len() + t.flags.len() + t.events.len();
    assert_eq!(records, complete, "every complete line reads back");
    assert!(t.samples.len() >= 9, "only {} samples", t.samples.len());
    // The report reads a killed recording too.
    let out = swapsight().arg("report").arg(&trace).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let _ = std::process::Command::new("pkill")
        .args(["-f", "^sleep 30$"])
        .status();
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_keeps_watching_the_command_to_its_end_without_the_trace() {
    // 32 KiB: the header, a first sample (which carries up to 4 KiB of
    // command line per process kept) and a few dozen more of 3 processes plus
    // the command's tree, then ENOSPC mid-run however slow the sampling.
    let Some(disk) = Tmpfs::mount("record-full", 32) else {
        return;
    };
    let trace = disk.join("r.jsonl");
    let t0 = std::time::Instant::now();
    // The command runs until the disk is full (a short write fills its last
    // page), then a second more: the full disk comes mid-run however slow
    // the sampling.
    let script = "i=0; while [ \"$(stat -c %s \"$T\" 2>/dev/null || echo 0)\" -lt 32768 ] \
        && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; sleep 1; exit 3";
    let out = swapsight()
        .args(["record", "--interval", "20ms", "--top", "3", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", script])
        .env("T", &trace)
        .output()
        .unwrap();
    let took = t0.elapsed();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let full = format!(
        "swapsight: cannot write the trace {} (No space left on device",
        trace.display()
    );
    // Said when it happened, with the command still watched …
    let told = lines
        .iter()
        .find(|l| l.starts_with(&full))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        told.contains("); still watching sh (pid ")
            && told.ends_with(") until it exits, without recording"),
        "{told}"
    );
    // … and at the end, with the command's own status.
    let last = lines.last().unwrap();
    assert!(
        last.starts_with(&full)
            && last.ends_with(": the trace ends early; sh exited (exit status: 3)"),
        "{err}"
    );
    // It waited for the command, which is gone (reaped, not orphaned).
    assert!(took >= Duration::from_secs(1), "returned after {took:?}");
    assert!(!pid_alive(pid_in(told)), "the command outlived record");
    // The disk filled mid-run: what was written reads back.
    let t = swapsight::trace::read(&trace).unwrap();
    assert!(
        t.samples.len() >= 2 && t.samples.len() < 100,
        "{} samples",
        t.samples.len()
    );
    drop(disk);
}

#[test]
fn an_empty_command_is_said_to_be_empty() {
    let out = swapsight().args(["record", "--", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "swapsight: the command is empty: give a program after -- (see --help)\n"
    );
}

/// `/proc/PID/stat` descriptors a process holds open.
#[cfg(target_os = "linux")]
fn stat_fds(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|l| {
            let l = l.to_string_lossy();
            l.starts_with("/proc/") && l.ends_with("/stat")
        })
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn under_a_small_open_file_limit_every_process_is_still_sampled() {
    // Regression: the probe kept one /proc/PID/stat open per process, so
    // under `ulimit -n 64` it ran out of descriptors and sampled only the
    // first few processes. Now it keeps at most a quarter of the limit.
    sampled_under_nofile(64, 150);
    // So tight that the other descriptors (stdio, the trace, /proc) leave
    // next to no room: every process all the same.
    sampled_under_nofile(12, 50);
}

/// `swapsight record` under `ulimit -n nofile` watching a shell with
/// `children` sleeps: each tick samples every one of them, and the probe
/// holds at most a quarter of the limit in `/proc/PID/stat` descriptors.
#[cfg(target_os = "linux")]
fn sampled_under_nofile(nofile: usize, children: usize) {
    let dir = TempDir::new("nofile");
    let trace = dir.join("t.jsonl");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_swapsight"))
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "for i in $(seq {children}); do sleep 4 & done; wait"
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut most = 0;
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(30), "record did not end");
        most = most.max(stat_fds(child.id()));
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    // The kept ones, and one being read that is closed right after.
    let cap = nofile / 4;
    assert!(
        most <= cap + 1,
        "ulimit -n {nofile}: {most} /proc/PID/stat descriptors held, cap {cap}"
    );
    let t = swapsight::trace::read(&trace).unwrap_or_else(|e| panic!("{e}: {}", stderr_of(&out)));
    let watched = t.header().watch_pid.unwrap();
    let sleeps = t
        .samples
        .iter()
        .filter(|s| (1500..=2500).contains(&s.sample.t_ms))
        .map(|s| {
            s.sample
                .processes
                .iter()
                .filter(|p| p.ppid == watched)
                .count()
        })
        .collect::<Vec<_>>();
    assert!(!sleeps.is_empty(), "no samples 1.5-2.5 s in");
    assert!(
        sleeps.iter().all(|&n| n == children),
        "ulimit -n {nofile}: children sampled per tick: {sleeps:?} (of {children})"
    );
    eprintln!("ulimit -n {nofile}: at most {most} stat descriptors; children per tick {sleeps:?}");
}

/// One writer per trace: a second `record -o` to a trace another recording
/// is writing is refused in one line, before it empties the file, and the
/// first recording's trace stays whole (its samples are read back).
#[test]
fn a_second_recording_to_the_same_trace_is_refused_and_the_first_kept() {
    let dir = TempDir::new("one-writer");
    let trace = dir.join("t.jsonl");
    let mut first = swapsight()
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", UNTIL_TWO_SAMPLES])
        .env("T", &trace)
        .spawn()
        .unwrap();
    // Until the first has written its header.
    for _ in 0..600 {
        if std::fs::metadata(&trace).is_ok_and(|m| m.len() > 0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = swapsight()
        .args(["record", "-o"])
        .arg(&trace)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1), "{}", stderr_of(&second));
    let err = stderr_of(&second);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("another recording is writing to this trace"),
        "{err}"
    );
    assert_eq!(first.wait().unwrap().code(), Some(3));
    let t = swapsight::trace::read(&trace).unwrap();
    assert!(t.samples.len() >= 2, "{} samples", t.samples.len());
    assert_eq!(t.notes().bad_lines, 0);
}
