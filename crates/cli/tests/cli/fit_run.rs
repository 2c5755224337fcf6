//! `swapsight fit MODEL -- CMD`: the estimate, the command run as `record`
//! runs it (the same trace), and the estimate against the measured peaks:
//! the watched tree's footprint and a framework's own (`mlx.peak`, as
//! `swapsight.watch_mlx()` writes it through `$SWAPSIGHT_MARK`).

use super::super::util::*;
use super::*;

/// Holds 200 MiB for a moment and says MLX's peak was 123,456,789 bytes.
const HOLDER: &str = "import os, time\n\
b = bytearray(200 << 20)\n\
for i in range(0, len(b), 4096): b[i] = 1\n\
open(os.environ['SWAPSIGHT_MARK'], 'a').write('#counter 123456789 bytes mlx.peak\\n')\n\
time.sleep(0.8)\n";

#[test]
fn fit_runs_the_command_as_record_does_and_compares_its_peaks() {
    let dir = TempDir::new("fit-run");
    let trace = dir.path().join("run.jsonl");
    let out = swapsight()
        .args(["fit", "100M", "--json", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "python3", "-c", HOLDER])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(err.contains("swapsight: estimated peak 100 MB"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{err}", stdout_of(&out)));
    let c = &v["comparison"];
    assert_eq!(c["estimated_bytes"], 100 * MIB);
    let footprint = &c["measured"][0];
    assert_eq!(footprint["id"], "footprint");
    let peak = footprint["bytes"].as_u64().unwrap();
    assert!(peak > 200 * MIB, "{v:#}");
    assert_eq!(footprint["error_bytes"], (100 * MIB) as i64 - peak as i64);
    assert!(footprint["error_pct"].as_f64().unwrap() < -40.0, "{v:#}");
    let mlx = &c["measured"][1];
    assert_eq!(
        (mlx["id"].as_str(), mlx["bytes"].as_u64()),
        (Some("mlx.peak"), Some(123_456_789))
    );
    // The trace is record's: its header names the command.
    let report = report_json(&trace);
    assert!(
        report["command"].to_string().contains("python3"),
        "{report:#}"
    );
    // The same comparison from the trace afterwards.
    let text = stdout_of(&fit(&["100M", "--from", trace.to_str().unwrap()]));
    assert!(text.contains("estimated vs measured peak:"), "{text}");
    assert!(
        text.contains("MLX's own peak (mlx.peak): error -15.1 % (-"),
        "{text}"
    );
}

#[test]
fn fit_exits_with_the_command_s_code_and_refuses_from_beside_a_command() {
    let dir = TempDir::new("fit-run-code");
    let trace = dir.path().join("run.jsonl");
    let out = swapsight()
        .args(["fit", "1M", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", "exit 7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("estimated vs measured peak:"));
    let out = fit(&["1M", "--from", trace.to_str().unwrap(), "--", "true"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
}
