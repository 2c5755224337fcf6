//! Phase marks: written by the command through `$SWAPSIGHT_MARK` or by
//! `swapsight mark` from another shell; odd bytes, late writers, floods.

use std::process::Command;
use std::time::{Duration, Instant};

use super::util::*;

/// `swapsight` with a runtime dir of the test's own, so that recorders of
/// parallel tests are not found.
fn isolated(dir: &TempDir) -> Command {
    let mut c = swapsight();
    let rt = dir.join("runtime");
    std::fs::create_dir_all(&rt).unwrap();
    c.env("XDG_RUNTIME_DIR", rt);
    c
}

fn record_sh(dir: &TempDir, trace: &std::path::Path, script: &str) -> std::process::Output {
    isolated(dir)
        .args(["record", "--interval", "100ms", "-o"])
        .arg(trace)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap()
}

#[test]
fn the_command_marks_phases_through_its_environment() {
    let dir = TempDir::new("marks-env");
    let trace = dir.join("t.jsonl");
    let clock = dir.join("clock");
    // Each write is bracketed by the wall clock (ns) before and after it, as
    // the writer sees it: how long `sleep` or Python's start-up take on a
    // loaded machine is the writer's business, not the recorder's, so the
    // trace's times are checked against when the writes really happened.
    // The first write waits for the recording to be under way (a mark taken
    // before the first sample is placed at 0, the first sample's time).
    let out = isolated(&dir)
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .env("CLOCK", &clock)
        .args([
            "--",
            "sh",
            "-c",
            "t() { date +%s%N >> \"$CLOCK\"; }; \
             sleep 0.3; t; echo load > \"$SWAPSIGHT_MARK\"; t; sleep 0.6; \
             python3 -c 'import os, time\n\
c = open(os.environ[\"CLOCK\"], \"a\")\n\
c.write(\"%d\\n\" % time.time_ns()); c.flush()\n\
open(os.environ[\"SWAPSIGHT_MARK\"], \"a\").write(\"decode\\n\")\n\
c.write(\"%d\\n\" % time.time_ns())'; \
             sleep 0.6; t; echo / > \"$SWAPSIGHT_MARK\"; t; sleep 0.4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let t = swapsight::trace::read(&trace).unwrap();
    let names: Vec<(&str, bool)> = t.marks.iter().map(|m| (m.name.as_str(), m.end)).collect();
    assert_eq!(
        names,
        [("load", false), ("decode", false), ("decode", true)]
    );
    // Before and after each of the three writes, in ms.
    let ns: Vec<i64> = std::fs::read_to_string(&clock)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(ns.len(), 6, "{ns:?}");
    let ms = |i: usize| ns[i] / 1_000_000;
    // A mark is in the trace from the moment the recorder picks it up
    // (within 150 ms of its write: docs/pipelines.md), so the trace's gap
    // between two marks is the writes' gap, give or take that.
    const LOOK_MS: i64 = 150;
    for k in 0..2 {
        let gap = i64::try_from(t.marks[k + 1].t_ms - t.marks[k].t_ms).unwrap();
        let (first_before, first_after) = (ms(2 * k), ms(2 * k + 1));
        let (next_before, next_after) = (ms(2 * k + 2), ms(2 * k + 3));
        let least = next_before - first_after - LOOK_MS;
        let most = next_after - first_before + LOOK_MS;
        assert!(
            (least..=most).contains(&gap),
            "marks {k} and {}: {gap} ms apart in the trace, written {}..{} ms apart: {:?}",
            k + 1,
            next_before - first_after,
            next_after - first_before,
            t.marks
        );
    }
}

#[test]
fn odd_bytes_in_a_mark_name_are_replaced() {
    let dir = TempDir::new("marks-odd");
    let trace = dir.join("t.jsonl");
    let long = "x".repeat(300);
    let out = record_sh(
        &dir,
        &trace,
        &format!(
            "printf 'a\\033[31mb\\377\\000c\\r\\n' > \"$SWAPSIGHT_MARK\"; sleep 0.3; \
             echo {long} > \"$SWAPSIGHT_MARK\"; sleep 0.3; printf '\\n\\n  \\n' > \"$SWAPSIGHT_MARK\"; sleep 0.3"
        ),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let t = swapsight::trace::read(&trace).unwrap();
    assert_eq!(t.bad_lines, 0, "{:?}", t.problems);
    let names: Vec<&str> = t.marks.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "a?[31mb\u{fffd}?c");
    assert_eq!(names[1], "x".repeat(64));
    // The report reads them back.
    let r = report_json(&trace);
    assert_eq!(r["phases"].as_array().map(Vec::len), Some(2), "{r:#}");
}

#[test]
fn marks_written_after_the_recorder_has_gone_neither_fail_nor_hang() {
    let dir = TempDir::new("marks-late");
    let trace = dir.join("t.jsonl");
    let done = dir.join("done");
    // The command outlives the recorder: it is still writing marks after
    // `record --pid` stops watching… simplest: record a short command that
    // leaves a background writer behind.
    let script = format!(
        "(sleep 1.5; for i in 1 2 3; do echo late$i > \"$SWAPSIGHT_MARK\" || exit 9; done; \
          python3 -c 'import os; open(os.environ[\"SWAPSIGHT_MARK\"], \"a\").write(\"late4\\n\")' && touch {}) & \
         echo early > \"$SWAPSIGHT_MARK\"; sleep 0.3",
        done.display()
    );
    let started = Instant::now();
    let out = record_sh(&dir, &trace, &script);
    assert!(out.status.success(), "{}", stderr_of(&out));
    while !done.exists() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        done.exists(),
        "the late writer failed or hung after the recorder ended"
    );
    let t = swapsight::trace::read(&trace).unwrap();
    let names: Vec<&str> = t.marks.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["early"]);
    // And `swapsight mark` no longer finds that recording.
    let out = isolated(&dir).args(["mark", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out).trim(),
        "swapsight: no recording is running: start one with swapsight record (or guard)"
    );
}

#[test]
fn swapsight_mark_finds_the_running_recorder() {
    let dir = TempDir::new("marks-cmd");
    let trace = dir.join("t.jsonl");
    let mut rec = isolated(&dir)
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "sleep", "2"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mark = |args: &[&str]| isolated(&dir).arg("mark").args(args).output().unwrap();
    let out = mark(&["warmup"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    std::thread::sleep(Duration::from_millis(300));
    let out = mark(&["--trace", trace.to_str().unwrap(), "warmup", "--end"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = mark(&["--trace", "/nonexistent.jsonl", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("no running recording writes /nonexistent.jsonl"));
    assert!(wait_with_deadline(&mut rec, Duration::from_secs(10)).success());
    let t = swapsight::trace::read(&trace).unwrap();
    let names: Vec<(&str, bool)> = t.marks.iter().map(|m| (m.name.as_str(), m.end)).collect();
    assert_eq!(names, [("warmup", false), ("warmup", true)]);
}

#[test]
fn a_thousand_marks_in_a_minute_are_all_kept_and_a_flood_is_capped() {
    let dir = TempDir::new("marks-many");
    let trace = dir.join("t.jsonl");
    // 1,000 marks 25 ms apart (40 a second, under the 50 a second kept),
    // then 500 at once.
    let code = "import os, time\n\
p = os.environ['SWAPSIGHT_MARK']\n\
for i in range(1000):\n    open(p, 'a').write('m%d\\n' % i)\n    time.sleep(0.025)\n\
time.sleep(1.5)\n\
open(p, 'a').write(''.join('f%d\\n' % i for i in range(500)))\n\
time.sleep(0.5)\n";
    let started = Instant::now();
    let out = isolated(&dir)
        .args(["record", "--interval", "200ms", "-o"])
        .arg(&trace)
        .args(["--", "python3", "-c", code])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    let t = swapsight::trace::read(&trace).unwrap();
    let paced: Vec<&str> = t
        .marks
        .iter()
        .map(|m| m.name.as_str())
        .filter(|n| n.starts_with('m'))
        .collect();
    let want: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
    assert_eq!(paced, want);
    assert!(t.marks.windows(2).all(|w| w[0].t_ms <= w[1].t_ms));
    let flood = t.marks.iter().filter(|m| m.name.starts_with('f')).count();
    assert_eq!(flood, 50, "a burst keeps 50");
    let dropped = t
        .events
        .iter()
        .find(|e| e.kind == "marks-dropped")
        .expect("marks-dropped event");
    assert!(
        dropped.message.starts_with("450 marks dropped"),
        "{}",
        dropped.message
    );
}

/// The verdicts here depend on what else the machine does (another test may
/// be filling swap), so the text is checked against the JSON rows; the real
/// swap test (`phases_real`) checks the verdicts themselves.
#[test]
fn report_prints_one_row_per_phase_then_the_run() {
    let dir = TempDir::new("marks-report");
    let trace = dir.join("t.jsonl");
    let out = record_sh(
        &dir,
        &trace,
        "echo load > \"$SWAPSIGHT_MARK\"; sleep 0.5; echo work > \"$SWAPSIGHT_MARK\"; sleep 0.5; \
         echo tidy > \"$SWAPSIGHT_MARK\"; sleep 0.5",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&swapsight().arg("report").arg(&trace).output().unwrap());
    let r = report_json(&trace);
    let rows = r["phases"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let label = |v: &serde_json::Value| v.as_str().unwrap().replace('-', " ");
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "by phase:")
        .skip(1)
        .take(5)
        .collect();
    assert!(table[0].trim_start().starts_with("phase "), "{text}");
    for ((line, name), row) in table[1..4].iter().zip(["load", "work", "tidy"]).zip(rows) {
        assert!(line.trim_start().starts_with(name), "{text}");
        assert!(line.trim_end().ends_with(&label(&row["verdict"])), "{text}");
    }
    assert_eq!(
        table[4].trim(),
        format!("run: {}", label(&r["verdict"])),
        "{text}"
    );
    assert_eq!(rows[1]["name"], "work");
    assert!(rows[1]["duration_ms"].as_u64().unwrap() >= 400, "{r:#}");
    assert!(rows[1]["peak_footprint_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn guard_hands_the_mark_path_to_its_command_and_record_pid_takes_swapsight_mark() {
    let dir = TempDir::new("marks-guard");
    let trace = dir.join("g.jsonl");
    let out = isolated(&dir)
        .args(["guard", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args([
            "--",
            "sh",
            "-c",
            "echo one > \"$SWAPSIGHT_MARK\"; sleep 0.4; echo two >> \"$SWAPSIGHT_MARK\"; sleep 0.4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let t = swapsight::trace::read(&trace).unwrap();
    let names: Vec<&str> = t.marks.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["one", "two"]);

    // `record --pid` of a process started elsewhere: `swapsight mark` finds it.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("3")
        .spawn()
        .unwrap();
    let trace = dir.join("p.jsonl");
    let mut rec = isolated(&dir)
        .args(["record", "--interval", "100ms", "--pid"])
        .arg(sleeper.id().to_string())
        .arg("-o")
        .arg(&trace)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let out = isolated(&dir).args(["mark", "attached"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("marked attached in"),
        "{}",
        stderr_of(&out)
    );
    assert!(wait_with_deadline(&mut sleeper, Duration::from_secs(10)).success());
    assert!(wait_with_deadline(&mut rec, Duration::from_secs(10)).success());
    let t = swapsight::trace::read(&trace).unwrap();
    let names: Vec<&str> = t.marks.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["attached"]);
}

/// Waits for `child` (killed past `limit`), and gives its exit code and
/// the user + system CPU time it and the children it reaped used, in ms.
/// `wait4` on its pid: the test process's RUSAGE_CHILDREN would also count
/// other tests' children reaped meanwhile (a real-swap filler's seconds).
fn wait_measured(child: &mut std::process::Child, limit: Duration) -> (Option<i32>, u64) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let until = Instant::now() + limit;
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of a plain C struct.
        let mut ru = unsafe { std::mem::zeroed::<libc::rusage>() };
        // SAFETY: wait4 writes the status and the rusage, both ours.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        assert!(got >= 0, "wait4: {}", std::io::Error::last_os_error());
        if got == pid {
            let ms = |t: libc::timeval| t.tv_sec as u64 * 1000 + t.tv_usec as u64 / 1000;
            let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
            return (code, ms(ru.ru_utime) + ms(ru.ru_stime));
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("process {pid} ran over {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_fifo_or_a_link_to_dev_zero_at_the_mark_path_cannot_freeze_the_guard() {
    // Regression: `mkfifo "$SWAPSIGHT_MARK"` froze guard for good (it never
    // checked its budget again); `ln -s /dev/zero` spun it at 100 % CPU.
    // The CPU is the guard's own (wait4 on its pid); the swap pool keeps
    // the real-swap fillers from loading the machine meanwhile, so the
    // time limit is about the guard, not about them.
    #[cfg(target_os = "linux")]
    let _pool = hold_swap_pool();
    let dir = TempDir::new("marks-fifo");
    for (tag, trick) in [
        ("fifo", "mkfifo \"$SWAPSIGHT_MARK\""),
        ("zero", "ln -s /dev/zero \"$SWAPSIGHT_MARK\""),
    ] {
        let trace = dir.join(&format!("{tag}.jsonl"));
        let started = Instant::now();
        let mut guard = isolated(&dir)
            .args(["guard", "--swap-budget", "8G", "--interval", "100ms", "-o"])
            .arg(&trace)
            .args(["--", "sh", "-c"])
            .arg(format!(
                "{trick}; sleep 1.5; echo after > \"$SWAPSIGHT_MARK\"; sleep 0.5"
            ))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (code, cpu) = wait_measured(&mut guard, Duration::from_secs(15));
        let took = started.elapsed();
        // `echo after >` into the FIFO fails in the command (no reader); the
        // guard itself is what must not hang.
        assert!(code.is_some(), "{tag}: killed by a signal");
        assert!(took < Duration::from_secs(6), "{tag}: guard took {took:?}");
        assert!(
            cpu < 1500,
            "{tag}: guard and its command used {cpu} ms of CPU"
        );
        let t = swapsight::trace::read(&trace).unwrap();
        // Sampling went on through the trick: samples over the whole run.
        assert!(
            t.duration_ms() >= 1500,
            "{tag}: {} ms sampled",
            t.duration_ms()
        );
        assert!(
            t.events.iter().any(|e| e.kind == "marks-dropped"),
            "{tag}: the refused mark path is said: {:?}",
            t.events
        );
    }
}

#[test]
fn mark_finds_a_recording_by_the_relative_path_it_was_started_with() {
    // Regression: `record -o run.jsonl` (not there yet) registered the
    // relative path, and `mark --trace run.jsonl` never found it.
    let dir = TempDir::new("marks-relative");
    let mut rec = isolated(&dir)
        .current_dir(dir.path())
        .args([
            "record",
            "--interval",
            "100ms",
            "-o",
            "run.jsonl",
            "--",
            "sleep",
            "2",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let out = isolated(&dir)
        .current_dir(dir.path())
        .args(["mark", "--trace", "run.jsonl", "decode"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(wait_with_deadline(&mut rec, Duration::from_secs(10)).success());
    let t = swapsight::trace::read(&dir.join("run.jsonl")).unwrap();
    assert_eq!(t.marks.len(), 1, "{:?}", t.marks);
    assert_eq!(t.marks[0].name, "decode");
}

#[test]
fn a_phase_name_that_would_read_as_an_end_is_refused() {
    // Regression: `mark /etc` recorded an *end* mark and said "marked etc".
    let dir = TempDir::new("marks-slash");
    let out = isolated(&dir).args(["mark", "/etc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(err.contains("cannot start with '/'"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_phase_name_that_would_read_as_a_counter_is_refused() {
    // The recorder reads a line starting with "#counter " as a counter, as
    // Python's mark() already knows (python/tests/generated_cases.json).
    let dir = TempDir::new("marks-counter");
    let out = isolated(&dir)
        .args(["mark", "#counter 1 items x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(err.contains("that line is a counter"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_trace_whose_folder_is_deleted_mid_run_is_a_write_error() {
    // Regression: `rm -rf` of -o's folder mid-run, and guard ended with
    // "31 samples … in gd/t.jsonl; next: swapsight report …", the file gone.
    let dir = TempDir::new("marks-deleted");
    let gd = dir.join("gd");
    std::fs::create_dir(&gd).unwrap();
    let out = isolated(&dir)
        .args(["guard", "--swap-budget", "8G", "--interval", "100ms", "-o"])
        .arg(gd.join("t.jsonl"))
        .args(["--", "sh", "-c"])
        .arg(format!("sleep 0.5; rm -rf {}; sleep 2", gd.display()))
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("deleted"), "says the trace is gone: {err}");
    assert!(!err.contains("next: swapsight report"), "{err}");
    // record: watches the command to its end, without the trace, and says so.
    std::fs::create_dir(&gd).unwrap();
    let out = isolated(&dir)
        .args(["record", "--interval", "100ms", "-o"])
        .arg(gd.join("t.jsonl"))
        .args(["--", "sh", "-c"])
        .arg(format!("sleep 0.5; rm -rf {}; sleep 1", gd.display()))
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("deleted"), "{err}");
}

#[test]
fn counters_reach_the_trace_and_the_report_per_phase() {
    let dir = TempDir::new("counters");
    let trace = dir.join("t.jsonl");
    let bin = env!("CARGO_BIN_EXE_swapsight");
    let out = record_sh(
        &dir,
        &trace,
        &format!(
            "echo load > \"$SWAPSIGHT_MARK\"; sleep 0.3; \
             {bin} counter pool 1G; sleep 0.3; echo fill > \"$SWAPSIGHT_MARK\"; sleep 0.3; \
             {bin} counter pool 3G; {bin} counter queue 2.5 --unit items; sleep 0.3; \
             printf '#counter 2147483648 bytes pool\\n' > \"$SWAPSIGHT_MARK\"; sleep 0.3"
        ),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let r = report_json(&trace);
    let run = r["counters"].as_array().expect("the run's counters");
    assert_eq!(run[0]["name"], "pool", "{r:#}");
    assert_eq!(run[0]["peak"], 3.0 * f64::from(1u32 << 30), "{r:#}");
    assert_eq!(run[0]["last"], 2.0 * f64::from(1u32 << 30), "{r:#}");
    assert_eq!(run[1]["unit"], "items", "{r:#}");
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{r:#}");
    assert_eq!(
        phases[0]["counters"][0]["peak"],
        f64::from(1u32 << 30),
        "{r:#}"
    );
    assert_eq!(
        phases[1]["counters"][0]["peak"],
        3.0 * f64::from(1u32 << 30),
        "{r:#}"
    );
    let text = stdout_of(&swapsight().arg("report").arg(&trace).output().unwrap());
    assert!(text.contains("pool: peak 3.0 GiB, last 2.0 GiB"), "{text}");
    assert!(text.contains("queue: peak 2.50 items"), "{text}");
}

#[test]
fn a_bad_counter_gets_one_line_and_a_usage_code() {
    let dir = TempDir::new("counters-bad");
    for (args, code, says) in [
        (&["counter", "x", "abc"][..], 2, "bad value \"abc\""),
        (&["counter", "x", "1e300"], 2, "a finite number"),
        (&["counter", "x", "1", "--unit", "a b"], 2, "bad unit"),
        (&["counter", "   ", "1", "--unit", "items"], 2, "empty"),
        (&["counter", "x", "1"], 1, "no recording is running"),
    ] {
        let out = isolated(&dir).args(args).output().unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
