//! Hostile and damaged input (issue 12): figures no OS produces, files of
//! garbage, arguments out of range, a full disk. Each bad input gets one line
//! and exit 1 (2 for arguments), never a panic (101), in bounded time and
//! memory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::util::*;

/// The offload seed's header line and its first sample line.
fn header_and_sample() -> (String, String) {
    let bytes = swapsight::synth::to_jsonl(&swapsight::synth::seed_offload());
    let text = String::from_utf8(bytes).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    let sample = lines
        .find(|l| l.starts_with(r#"{"type":"sample""#))
        .unwrap()
        .to_string();
    (header, sample)
}

/// `line` with the first `"field":<number>` set to `value`.
fn set(line: &str, field: &str, value: &str) -> String {
    let key = format!("\"{field}\":");
    let at = line
        .find(&key)
        .unwrap_or_else(|| panic!("{field} in {line}"))
        + key.len();
    let end = at + line[at..].find([',', '}']).unwrap();
    format!("{}{value}{}", &line[..at], &line[end..])
}

fn write(dir: &TempDir, name: &str, lines: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

/// Every subcommand that reads a trace, with its output in `dir`.
fn readers(dir: &TempDir, trace: &Path) -> Vec<Vec<std::ffi::OsString>> {
    let t = trace.as_os_str().to_owned();
    let mut out = vec![vec!["report".into(), t.clone()]];
    for f in ["csv", "perfetto", "prometheus"] {
        out.push(vec![
            "export".into(),
            t.clone(),
            "-f".into(),
            f.into(),
            "-o".into(),
            dir.join(&format!("out.{f}")).into_os_string(),
        ]);
    }
    out.push(vec![
        "plot".into(),
        t,
        "-o".into(),
        dir.join("out.png").into_os_string(),
    ]);
    out
}

/// Exit code and stderr, stdout discarded.
fn run(args: &[std::ffi::OsString]) -> (Option<i32>, String) {
    let out = swapsight()
        .args(args)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    (out.status.code(), stderr_of(&out))
}

const TWO_63: &str = "9223372036854775808";
const TWO_64_1: &str = "18446744073709551615";
const TWO_62: &str = "4611686018427387904";

#[test]
fn figures_no_os_produces_are_refused_by_line_never_a_panic() {
    let dir = TempDir::new("range");
    let (header, sample) = header_and_sample();
    for (field, value) in [
        ("footprint_bytes", TWO_63),
        ("footprint_bytes", TWO_64_1),
        ("swap_used_bytes", TWO_63),
        ("t_ms", TWO_62),
        ("t_ms", TWO_64_1),
        ("phys_bytes", TWO_64_1),
        ("pageins", TWO_64_1),
    ] {
        // The only sample is bad: nothing is left, exit 1, one line naming line 2.
        let bad = write(
            &dir,
            "bad.jsonl",
            &[header.clone(), set(&sample, field, value)],
        );
        for args in readers(&dir, &bad) {
            let (code, err) = run(&args);
            assert_eq!(code, Some(1), "{field}={value} {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{field}={value} {args:?}: {err}");
            assert!(
                err.contains("bad.jsonl: line 2: ") && err.contains(field),
                "{field}={value} {args:?}: {err}"
            );
            assert!(err.contains("out of range"), "{err}");
        }
        // Among good samples it is skipped with a warning, the rest judged.
        let mixed = write(
            &dir,
            "mixed.jsonl",
            &[
                header.clone(),
                sample.clone(),
                set(&sample, field, value),
                set(&sample, "t_ms", "1000"),
            ],
        );
        for args in readers(&dir, &mixed) {
            let (code, err) = run(&args);
            assert_eq!(code, Some(0), "{field}={value} {args:?}: {err}");
            assert!(
                err.contains("mixed.jsonl: line 3: ") && err.contains("(skipped)"),
                "{err}"
            );
        }
    }
    // In the header: the file is not a trace, said on one line.
    for (field, value) in [("start_unix_ms", TWO_64_1), ("phys_bytes", TWO_64_1)] {
        let bad = write(
            &dir,
            "head.jsonl",
            &[set(&header, field, value), sample.clone()],
        );
        for args in readers(&dir, &bad) {
            let (code, err) = run(&args);
            assert_eq!(code, Some(1), "{field} {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains("head.jsonl:1: ") && err.contains(field),
                "{err}"
            );
        }
    }
}

#[test]
fn a_header_without_a_valid_sample_is_nothing_to_judge() {
    let dir = TempDir::new("nosample");
    let (header, sample) = header_and_sample();
    let only = write(&dir, "h.jsonl", std::slice::from_ref(&header));
    let (code, err) = run(&["report".into(), only.into_os_string()]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("h.jsonl: the trace has no samples: nothing to judge"),
        "{err}"
    );
    // Only bad lines: the first is named, the others counted, on one line.
    let bad = write(
        &dir,
        "b.jsonl",
        &[header, "{}".into(), set(&sample, "t_ms", "-1"), "[".into()],
    );
    let (code, err) = run(&["report".into(), bad.into_os_string()]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("b.jsonl: line 2: ") && err.contains("(and 2 more malformed lines)"),
        "{err}"
    );
}

#[test]
fn a_blank_line_before_the_header_is_tolerated() {
    let dir = TempDir::new("blank");
    let (header, sample) = header_and_sample();
    let p = write(&dir, "b.jsonl", &[String::new(), header, sample]);
    let out = swapsight().arg("report").arg(&p).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stdout_of(&out).starts_with("verdict: "));
    assert_eq!(stderr_of(&out), "");
}

fn measured(cmd: Command) -> (Option<i32>, String, u64, Duration) {
    measured_to(cmd, Stdio::null())
}

fn report(path: &Path) -> Command {
    let mut c = swapsight();
    c.arg("report").arg(path);
    c
}

#[test]
fn dev_zero_ends_at_the_line_cap_in_bounded_memory() {
    let (code, err, rss_kib, took) = measured(report(Path::new("/dev/zero")));
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err,
        "swapsight: /dev/zero:1: line longer than 64 MiB, not a swapsight trace line\n"
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
    // The 64 MiB line buffer and the binary; before the cap it grew without end.
    assert!(rss_kib < 200 * 1024, "peak RSS {rss_kib} KiB");
    eprintln!("report /dev/zero: {rss_kib} KiB peak RSS in {took:?}");
}

#[test]
fn millions_of_empty_objects_stop_after_a_run_of_bad_lines() {
    // The time bounds in these tests only catch a reader that hangs or reads
    // on past the cap; how fast it reads is the benchmarks' business.
    let dir = TempDir::new("objects");
    let (header, _) = header_and_sample();
    let p = dir.join("o.jsonl");
    let mut bytes = header.into_bytes();
    bytes.push(b'\n');
    bytes.extend(b"{}\n".repeat(3_000_000));
    std::fs::write(&p, bytes).unwrap();
    let (code, err, rss_kib, took) = measured(report(&p));
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("o.jsonl:2-1001: 1000 lines in a row hold no record, giving up (line 2: "),
        "{err}"
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert!(rss_kib < 64 * 1024, "peak RSS {rss_kib} KiB");
}

/// A trace of `samples` good samples with, when `garbage` is set, 40 lines
/// of 100 KiB of garbage after every tenth one (400 lines, 40 MiB at 100).
fn trace_with_garbage(path: &Path, samples: usize, garbage: bool) {
    let (header, sample) = header_and_sample();
    let junk = format!(
        "{{\"type\":\"sample\",\"t_ms\":\"{}\"}}\n",
        "x".repeat(100_000)
    );
    let mut out = header.into_bytes();
    out.push(b'\n');
    for i in 0..samples {
        out.extend(set(&sample, "t_ms", &(i * 500).to_string()).bytes());
        out.push(b'\n');
        if garbage && i % 10 == 0 {
            for _ in 0..40 {
                out.extend(junk.bytes());
            }
        }
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn garbage_between_samples_costs_time_not_memory_and_a_few_lines_of_output() {
    let dir = TempDir::new("garbage");
    let (clean, dirty) = (dir.join("clean.jsonl"), dir.join("dirty.jsonl"));
    trace_with_garbage(&clean, 100, false);
    trace_with_garbage(&dirty, 100, true);
    let (code, err, rss_clean, _) = measured(report(&clean));
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let (code, err, rss_dirty, took) = measured(report(&dirty));
    assert_eq!(code, Some(0), "{err}");
    // Five named lines, then the total.
    assert_eq!(err.lines().count(), 6, "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap()
            .ends_with("400 malformed lines skipped in all (395 more not shown)"),
        "{err}"
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
    // 40 MiB of garbage read; memory as for the clean trace, give or take
    // the line buffer of one 100 KiB line and allocator slack.
    assert!(
        rss_dirty < rss_clean + 8 * 1024,
        "peak RSS {rss_dirty} KiB with garbage, {rss_clean} KiB without"
    );
}

#[test]
fn durations_and_sizes_out_of_range_are_one_line_and_exit_2() {
    for (args, says) in [
        (
            &["record", "--interval", "0.001ms", "--", "true"][..],
            "invalid value '0.001ms' for '--interval <INTERVAL>': must be between 10ms and 1h00m",
        ),
        (
            &["record", "--interval", "5000000000000000h", "--", "true"],
            "must be between 10ms and 1h00m",
        ),
        (
            &["guard", "--interval", "5000000000000000h", "--", "true"],
            "must be between 10ms and 1h00m",
        ),
        (
            &["guard", "--interval", "-1s", "--", "true"],
            "must be positive",
        ),
        (
            &["guard", "--swap-budget", "0", "--", "true"],
            "invalid value '0' for '--swap-budget <SIZE>': must be at least 4K",
        ),
        (
            &["guard", "--wait-free", "-1", "--", "true"],
            "invalid value '-1' for '--wait-free <PCT>': must be 0 or more",
        ),
        (
            &["guard", "--wait-free", "100", "--", "true"],
            "must be below 100",
        ),
        (
            &["guard", "--swap-budget", "-1G", "--", "true"],
            "invalid value '-1G' for '--swap-budget <SIZE>': must be positive",
        ),
        (
            &["guard", "--swap-budget", "99999T", "--", "true"],
            "too large",
        ),
        (
            &["guard", "--grace", "-5s", "--", "true"],
            "'--grace <DUR>': must be positive",
        ),
        (
            &["record", "--top", "-1", "--", "true"],
            "invalid value '-1' for '--top <N>': must be 0 or more",
        ),
        (
            &["guard", "--top", "-1", "--", "true"],
            "invalid value '-1' for '--top <N>': must be 0 or more",
        ),
        (
            &["export", "t.jsonl", "--processes", "-1"],
            "invalid value '-1' for '--processes <N>': must be 0 or more",
        ),
        (
            &["plot", "t.jsonl", "--processes", "-1"],
            "invalid value '-1' for '--processes <N>': must be 0 or more",
        ),
        (&["plot", "t.jsonl", "--processes", "9"], "must be 0 to 8"),
    ] {
        let out = swapsight().args(args).output().unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// What a directory holds, by name, sorted.
#[cfg(target_os = "linux")]
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_no_partial_output_and_an_old_file_untouched() {
    let Some(disk) = Tmpfs::mount("fulldisk", 64) else {
        return;
    };
    let src = TempDir::new("fulldisk-src");
    let trace = src.join("busy.jsonl");
    std::fs::write(
        &trace,
        swapsight::synth::to_jsonl(&swapsight::synth::busy_trace(400, 20)),
    )
    .unwrap();
    let old = disk.join("run.csv");
    std::fs::write(&old, "old\n").unwrap();
    for (args, target) in [
        (
            vec![
                "export".into(),
                trace.clone().into_os_string(),
                "-o".into(),
                old.clone().into_os_string(),
            ],
            "run.csv",
        ),
        (
            vec![
                "export".into(),
                trace.clone().into_os_string(),
                "-o".into(),
                disk.join("run.json").into_os_string(),
            ],
            "run.json",
        ),
        (
            vec![
                "plot".into(),
                trace.clone().into_os_string(),
                "--size".into(),
                "4000x3000".into(),
                "-o".into(),
                disk.join("run.png").into_os_string(),
            ],
            "run.png",
        ),
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(1), "{target}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("cannot write {}", disk.join(target).display()))
                && err.contains("No space left on device"),
            "{err}"
        );
        // Nothing but the old file: no partial output, no temporary file.
        assert_eq!(
            entries(disk.path()),
            vec!["run.csv".to_string()],
            "{target}"
        );
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "old\n");
    }
    // With room, the same export replaces the old file whole.
    let roomy = TempDir::new("fulldisk-ok");
    let out = roomy.join("run.csv");
    std::fs::write(&out, "old\n").unwrap();
    let (code, err) = run(&[
        "export".into(),
        trace.into_os_string(),
        "-o".into(),
        out.clone().into_os_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("time_s,") && csv.lines().count() == 400 * 20 + 1);
    let left: Vec<_> = std::fs::read_dir(roomy.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "a temporary file was left: {left:?}");
}

/// What a terminal must never be handed from a trace: ESC, BEL, a bidi override.
fn holds_escape(s: &str) -> bool {
    s.contains(['\u{1b}', '\u{7}', swapsight::synth::BIDI])
}

/// Issue 20: a crafted trace's OSC 52 clipboard write, screen clear and bidi
/// override reached the terminal through `report`, `compare` (a label made
/// from the file name, the hostname), `export` to stdout, and broke the XML
/// of `plot`'s SVG; names that are formulas stayed live in CSV.
#[test]
fn escapes_of_a_crafted_trace_reach_no_output() {
    use swapsight::synth::{self, BIDI, CLEAR, FORMULA};
    let dir = TempDir::new("hostile-text");
    let hostile = dir.join(&format!("run{CLEAR}{BIDI}.jsonl"));
    std::fs::write(&hostile, synth::to_jsonl(&synth::hostile_text())).unwrap();
    let formula = dir.join(&format!("{FORMULA}.jsonl"));
    std::fs::write(&formula, synth::to_jsonl(&synth::seed_staged())).unwrap();
    let svg = dir.join("out.svg");
    let (h, f, o) = (hostile.as_os_str(), formula.as_os_str(), svg.as_os_str());
    let runs: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec!["report".as_ref(), h],
        vec!["report".as_ref(), h, "--json".as_ref()],
        vec!["compare".as_ref(), h, f],
        vec!["compare".as_ref(), h, f, "--format".as_ref(), "md".as_ref()],
        vec![
            "compare".as_ref(),
            h,
            f,
            "--format".as_ref(),
            "json".as_ref(),
        ],
        vec![
            "compare".as_ref(),
            h,
            f,
            "--format".as_ref(),
            "csv".as_ref(),
        ],
        vec!["export".as_ref(), h, "-f".as_ref(), "csv".as_ref()],
        vec!["export".as_ref(), h, "-f".as_ref(), "perfetto".as_ref()],
        vec!["export".as_ref(), h, "-f".as_ref(), "prometheus".as_ref()],
        vec!["plot".as_ref(), h, "-o".as_ref(), o],
    ];
    let mut printed = String::new();
    for args in &runs {
        let out = swapsight().args(args).output().unwrap();
        let (stdout, stderr) = (stdout_of(&out), stderr_of(&out));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !holds_escape(&stdout) && !holds_escape(&stderr),
            "{args:?}:\n{stdout:?}\n{stderr:?}"
        );
        printed += &stdout;
    }
    // What the escapes became, where they were.
    assert!(
        printed.contains("?]52;c;ZXZpbA==?python?yp.exe"),
        "{printed}"
    );
    assert!(printed.contains("run?[2J?"), "{printed}");
    // In CSV (quoted, its quotes doubled): text, from export and compare.
    let cell = format!("\"'{}\"", FORMULA.replace('"', "\"\""));
    assert_eq!(printed.matches(&cell).count(), 210, "{printed}");
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("<svg") && !holds_escape(&svg), "{svg:.300}");
}
