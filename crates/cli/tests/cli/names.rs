//! Processes are shown by the name their users know them by: the script a
//! real interpreter runs, the executable's full name past Linux's 15-byte
//! `comm` — recorded from real runs and reported through the CLI.

use super::util::*;

/// Records `command` to a trace in `dir`; returns the trace's path.
fn record(dir: &TempDir, command: &[&str]) -> std::path::PathBuf {
    let trace = dir.join("t.jsonl");
    let out = swapsight()
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    assert!(out.status.success(), "record: {}", stderr_of(&out));
    trace
}

/// The report (text, JSON) entry of the watched process whose name starts
/// with `prefix`.
fn watched_named(report: &serde_json::Value, prefix: &str) -> serde_json::Value {
    report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["watched"] == true && p["name"].as_str().unwrap_or("").starts_with(prefix))
        .cloned()
        .unwrap_or_else(|| panic!("no watched process named {prefix}… in {report:#}"))
}

#[test]
fn a_script_run_by_python_is_reported_by_its_file_name() {
    let dir = TempDir::new("names-script");
    let script = dir.join("make_thumbnails_7f3a.py");
    std::fs::write(&script, "import time\ntime.sleep(1.5)\n").unwrap();
    let trace = record(
        &dir,
        &["python3", "-u", script.to_str().unwrap(), "--size", "64"],
    );

    let r = report_json(&trace);
    let p = watched_named(&r, "make_thumbnails_7f3a.py (");
    let name = p["name"].as_str().unwrap();
    assert!(
        name.starts_with("make_thumbnails_7f3a.py (python3") && name.ends_with(')'),
        "{name}"
    );
    // The command line is in the JSON report, as the interpreter got it.
    let cmdline = p["cmdline"].as_str().expect("cmdline in report --json");
    assert!(
        cmdline.ends_with(&format!("-u {} --size 64", script.display())),
        "{cmdline}"
    );

    let out = swapsight().arg("report").arg(&trace).output().unwrap();
    let text = stdout_of(&out);
    assert!(
        text.contains(&format!("{name} (pid {})", p["pid"])),
        "{text}"
    );
}

#[test]
fn an_executable_name_longer_than_comm_is_shown_in_full() {
    let dir = TempDir::new("names-long");
    let long = dir.join("sleeper-with-a-much-longer-name");
    std::fs::copy("/bin/sleep", &long).unwrap();
    let trace = record(&dir, &[long.to_str().unwrap(), "1"]);
    let r = report_json(&trace);
    let p = watched_named(&r, "sleeper-with-a-");
    assert_eq!(p["name"], "sleeper-with-a-much-longer-name", "{p:#}");

    let out = swapsight().arg("report").arg(&trace).output().unwrap();
    assert!(
        stdout_of(&out).contains("sleeper-with-a-much-longer-name (pid"),
        "{}",
        stdout_of(&out)
    );
}
