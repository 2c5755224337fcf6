//! Test harness: the binary under test and report helpers here; temp dirs
//! and real swap come from `swapsight-testkit`, shared with the app's tests.
#![allow(dead_code)]

pub use swapsight_testkit::*;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary, judging runs against the host (`SWAPSIGHT_SCOPE=host`): the
/// real-swap tests put their filler in a memory cgroup to keep its memory
/// out of its footprint, as a Mac's GPU driver does, and ask what the host
/// sees. The tests of the scope itself use [`swapsight_in_scope`].
pub fn swapsight() -> Command {
    let mut c = swapsight_in_scope();
    c.env("SWAPSIGHT_SCOPE", "host");
    c
}

/// The binary as a user runs it: a run in a memory cgroup is judged against
/// its limit.
pub fn swapsight_in_scope() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_swapsight"));
    c.stdin(Stdio::null()).env_remove("SWAPSIGHT_SCOPE");
    c
}

pub fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report of a trace as JSON.
pub fn report_json(trace: &Path) -> serde_json::Value {
    let out = swapsight()
        .arg("report")
        .arg("--json")
        .arg(trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "report failed: {}", stderr_of(&out));
    serde_json::from_slice(&out.stdout).expect("report --json is JSON")
}

/// The report entry of the watched process with the largest footprint (the
/// filler, not the `sh` that exec'd it).
pub fn heaviest_watched(report: &serde_json::Value) -> &serde_json::Value {
    report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["watched"] == true)
        .max_by_key(|p| p["peak_footprint_bytes"].as_u64().unwrap_or(0))
        .unwrap_or_else(|| panic!("no watched process in {report:#}"))
}

/// The report entry for the process named `name`.
pub fn process_named<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no process {name} in {report:#}"))
}

/// Whether `pid` is a live process (not a zombie): after a test, nothing it
/// started may be left, re-parented to init or not.
pub fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|text| {
        let state = text
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

/// The pid in `… (pid N) …` of a line.
pub fn pid_in(line: &str) -> u32 {
    line.split_once("(pid ")
        .and_then(|(_, rest)| rest.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

/// Runs `cmd` (its stdout to `stdout`) and returns its exit code, its stderr, its peak RSS in KiB and
/// how long it took. The peak comes from GNU time, whose own child it is: a
/// child forked from this test process would start its high-water mark at
/// this process's own (Linux keeps `maxrss` across `execve`), which grows
/// with whatever the tests running beside it hold.
pub fn measured_to(cmd: Command, stdout: Stdio) -> (Option<i32>, String, u64, Duration) {
    let dir = TempDir::new("measured");
    let rss_file = dir.join("maxrss");
    let mut timed = Command::new("/usr/bin/time");
    timed.arg("-f").arg("%M").arg("-o").arg(&rss_file);
    timed.arg(cmd.get_program()).args(cmd.get_args());
    let started = Instant::now();
    let out = timed
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("GNU time (Debian's package time, from scripts/setup)");
    let elapsed = started.elapsed();
    let rss = std::fs::read_to_string(&rss_file).unwrap_or_default();
    // GNU time adds "Command exited with non-zero status N" before %M.
    let kib = rss
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS from GNU time: {rss:?}"));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        kib,
        elapsed,
    )
}
