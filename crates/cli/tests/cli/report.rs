//! `swapsight report` on the seeds' runs and on bad traces.

use super::util::*;

fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn seeds_get_their_verdicts_in_json() {
    let dir = TempDir::new("seeds");
    for (name, trace, verdict) in [
        ("eager", swapsight::synth::seed_eager(), "overflow"),
        ("offload", swapsight::synth::seed_offload(), "false-fit"),
        ("staged", swapsight::synth::seed_staged(), "fits"),
        ("to-cpu", swapsight::synth::seed_to_cpu(), "hidden-memory"),
    ] {
        let p = write(
            &dir,
            &format!("{name}.jsonl"),
            &swapsight::synth::to_jsonl(&trace),
        );
        let r = report_json(&p);
        assert_eq!(r["verdict"], verdict, "{name}: {r:#}");
        let python = process_named(&r, "python");
        assert_eq!(python["verdict"], verdict, "{name}");
        assert!(python["pid"].is_u64());
    }
}

#[test]
fn offload_text_report_says_false_fit_in_words() {
    let dir = TempDir::new("words");
    let p = write(
        &dir,
        "offload.jsonl",
        &swapsight::synth::to_jsonl(&swapsight::synth::seed_offload()),
    );
    let out = swapsight().arg("report").arg(&p).output().unwrap();
    let text = stdout_of(&out);
    assert!(text.starts_with("verdict: FALSE FIT"), "{text}");
    assert!(
        text.contains("footprint peaked at 18.5 GiB of 48.0 GiB"),
        "{text}"
    );
    assert!(text.contains("false fit"), "{text}");
}

#[test]
fn corrupt_line_is_named_and_the_rest_reported() {
    let dir = TempDir::new("corrupt");
    let mut bytes = swapsight::synth::to_jsonl(&swapsight::synth::seed_offload());
    // Corrupt the 5th line in place.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    bytes[starts[4]] = b'#';
    let p = write(&dir, "c.jsonl", &bytes);
    let out = swapsight()
        .args(["report", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = stderr_of(&out);
    assert!(
        err.contains("c.jsonl: line 5:") && err.contains("(skipped)"),
        "{err}"
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["verdict"], "false-fit");
}

#[test]
fn not_a_trace_is_one_line_and_nonzero() {
    let dir = TempDir::new("nottrace");
    let p = write(&dir, "x.jsonl", b"hello world\n");
    let out = swapsight().arg("report").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("x.jsonl:1: not a swapsight trace"), "{err}");
    let out = swapsight()
        .arg("report")
        .arg(dir.join("missing.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).starts_with("swapsight: cannot read "),
        "{}",
        stderr_of(&out)
    );
}
