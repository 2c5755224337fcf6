//! `swapsight compare`: the source's three runs side by side, bad inputs.

use swapsight::synth;

use super::util::*;

fn seeds(dir: &TempDir) -> Vec<std::path::PathBuf> {
    [
        ("eager", synth::seed_eager()),
        ("offload", synth::seed_offload()),
        ("staged", synth::seed_staged()),
    ]
    .iter()
    .map(|(name, t)| {
        let p = dir.join(&format!("{name}.jsonl"));
        std::fs::write(&p, synth::to_jsonl(t)).unwrap();
        p
    })
    .collect()
}

#[test]
fn three_runs_in_markdown_with_a_chart() {
    let dir = TempDir::new("compare");
    let files = seeds(&dir);
    let png = dir.join("runs.png");
    let out = swapsight()
        .arg("compare")
        .args(&files)
        .args(["--format", "md", "--plot"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let md = stdout_of(&out);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "| run | duration | peak footprint | swap growth | min free | verdict | first flagged at | pressure |"
    );
    assert!(lines[2].starts_with("| eager | 1m41s | 43.6 GiB |"), "{md}");
    assert!(lines[2].contains("| overflow |"), "{md}");
    assert!(lines[3].contains("| false fit |"), "{md}");
    assert!(
        lines[4].starts_with("| staged |") && lines[4].ends_with("| fits | – | – |"),
        "{md}"
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn labels_json_and_csv() {
    let dir = TempDir::new("compare-fmt");
    let files = seeds(&dir);
    let out = swapsight()
        .arg("compare")
        .args(&files[..2])
        .args(["--label", "all on mps", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["label"], "all on mps");
    assert_eq!(v["runs"][1]["label"], "offload");
    assert_eq!(v["runs"][1]["verdict"], "false-fit");
    assert_eq!(v["hosts_differ"], false);
    let out = swapsight()
        .arg("compare")
        .args(&files[1..])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let csv = stdout_of(&out);
    assert!(csv.starts_with("run,host,duration_s,"), "{csv}");
    assert!(
        csv.lines()
            .nth(2)
            .unwrap()
            .starts_with("staged,m5-pro,124.000,"),
        "{csv}"
    );
}

#[test]
fn different_hosts_and_lengths_are_said() {
    let dir = TempDir::new("compare-hosts");
    let files = seeds(&dir);
    let mut other = synth::seed_staged();
    other.header.as_mut().unwrap().host.hostname = "linux-box".into();
    other.samples.truncate(20);
    let p = dir.join("short.jsonl");
    std::fs::write(&p, synth::to_jsonl(&other)).unwrap();
    let svg = dir.join("c.svg");
    let out = swapsight()
        .arg("compare")
        .arg(&files[0])
        .arg(&p)
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let short: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(short[..2], ["short", "9.5s"], "{text}");
    assert!(
        text.contains("note: the runs come from different hosts (m5-pro, linux-box)"),
        "{text}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("(different hosts)"));
}

#[test]
fn bad_inputs_are_refused_with_one_line() {
    let dir = TempDir::new("compare-bad");
    let files = seeds(&dir);
    let junk = dir.join("junk.jsonl");
    std::fs::write(&junk, "hello\n").unwrap();
    let run = |args: &[&std::ffi::OsStr]| swapsight().arg("compare").args(args).output().unwrap();
    let out = run(&[files[0].as_os_str(), junk.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("junk.jsonl:1: not a swapsight trace header"),
        "{err}"
    );
    let missing = dir.join("missing.jsonl");
    let out = run(&[files[0].as_os_str(), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("cannot read"),
        "{}",
        stderr_of(&out)
    );
    assert!(stderr_of(&out).contains("missing.jsonl"));
    let out = run(&[files[0].as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("compare takes 2 to 20 traces, got 1"));
    let many: Vec<&std::ffi::OsStr> = std::iter::repeat_n(files[0].as_os_str(), 21).collect();
    let out = run(&many);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("got 21"));
    let out = run(&[
        files[0].as_os_str(),
        files[1].as_os_str(),
        "--plot".as_ref(),
        "x.gif".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("name it .png or .svg"));
}
