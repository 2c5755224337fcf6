//! `swapsight advise`: the MPS watermark ratios, on a trace of the source's
//! Mac and on this (Linux) machine.

use super::util::*;

/// The source's eager run (swapsight::synth) written as a trace in `dir`.
fn eager_trace(dir: &TempDir) -> std::path::PathBuf {
    let eager = dir.join("eager.jsonl");
    std::fs::write(
        &eager,
        swapsight::synth::to_jsonl(&swapsight::synth::seed_eager()),
    )
    .unwrap();
    eager
}

#[test]
fn a_mac_trace_gets_both_export_lines_and_the_check_of_the_run() {
    let dir = TempDir::new("advise");
    let eager = eager_trace(&dir);
    let out = swapsight()
        .arg("advise")
        .arg(&eager)
        .args(["--recommended-max", "40200960000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.89");
    assert_eq!(lines[1], "export PYTORCH_MPS_LOW_WATERMARK_RATIO=0.89");
    assert!(text.contains("would have stopped it at 1m31s"), "{text}");
    // Without the exact figure: estimated, and the Python line that reads it.
    let out = swapsight()
        .arg("advise")
        .arg(&eager)
        .args(["--reserve", "18G", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["recommended_estimated"], true);
    assert!(v["text"]
        .as_str()
        .unwrap()
        .contains("python3 -c 'import torch; print(torch.mps.recommended_max_memory())'"));
    let (hi, lo) = (
        v["high_ratio"].as_f64().unwrap(),
        v["low_ratio"].as_f64().unwrap(),
    );
    assert!(lo <= hi && hi < 1.0, "{v:#}");
}

#[cfg(target_os = "linux")]
#[test]
fn linux_says_so_in_one_line_unless_given_the_figure() {
    let out = swapsight().arg("advise").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout_of(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("no MPS watermark to set on"), "{text}");
    assert!(text.contains("(linux)"), "{text}");
    let out = swapsight()
        .args(["advise", "--recommended-max", "16G", "--reserve", "4G"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(stdout_of(&out).starts_with("export PYTORCH_MPS_HIGH_WATERMARK_RATIO="));
    let out = swapsight()
        .args(["advise", "--reserve", "-1G"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn figures_that_leave_no_room_are_one_line_and_exit_2() {
    // Regression: a ratio "rounded down" that was clamped up, a cap 5,000×
    // the memory; a reserve of all the memory that "leaves 0.00 GiB" and
    // still printed settings. The eager trace is of a 48 GiB Mac.
    let dir = TempDir::new("advise-room");
    let eager = dir.join("eager.jsonl");
    std::fs::write(
        &eager,
        swapsight::synth::to_jsonl(&swapsight::synth::seed_eager()),
    )
    .unwrap();
    for (args, says) in [
        (
            &["--recommended-max", "9007199254740992"][..],
            "more than the machine's 48.00 GiB",
        ),
        (&["--reserve", "48G"][..], "nothing is left for the job"),
        (&["--reserve", "47.9G"][..], "under 1 %"),
    ] {
        let out = swapsight()
            .arg("advise")
            .arg(&eager)
            .args(args)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(stdout_of(&out).is_empty(), "{args:?}: no setting printed");
    }
}

/// The ratios the shell already sets reach the advice as PyTorch reads
/// them (strtod): a word is said to be no limit, and a high ratio under
/// the low one's default, the low one unset, is said to stop PyTorch —
/// in the text and in the JSON's `set_here`.
#[test]
fn the_ratios_the_shell_sets_are_said_as_pytorch_reads_them() {
    let dir = TempDir::new("advise-env");
    let eager = eager_trace(&dir);
    let advise = |high: &str| {
        swapsight()
            .arg("advise")
            .arg(&eager)
            .args(["--recommended-max", "40200960000", "--json"])
            .env("PYTORCH_MPS_HIGH_WATERMARK_RATIO", high)
            .env_remove("PYTORCH_MPS_LOW_WATERMARK_RATIO")
            .output()
            .unwrap()
    };
    let said = |out: &std::process::Output| {
        assert!(out.status.success(), "{}", stderr_of(out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let said = v["set_here"].as_str().unwrap().to_owned();
        assert!(v["text"].as_str().unwrap().contains(&said), "{v:#}");
        said
    };
    let lots = said(&advise("lots"));
    assert!(lots.contains("no limit on the MPS pool"), "{lots}");
    let low = said(&advise("1.2"));
    assert!(low.contains("PyTorch refuses to start MPS"), "{low}");
    let x = said(&advise("1.5x"));
    assert!(x.contains("PyTorch's strtod stops at 'x'"), "{x}");
}
