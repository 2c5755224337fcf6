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
    assert!(err.contains("swapsight: estimated peak 100 MiB"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{err}", stdout_of(&out)));
    let c = &v["comparison"];
    assert_eq!(c["estimated_bytes"], 100 * MIB);
    // mlx.peak alone: no part of the need is compared on its own.
    assert!(c.get("by_line").is_none(), "{c:#}");
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

/// Says MLX's peak and what its weights and KV cache held within it, as
/// `swapsight.mlx_sizes()` and `watch_mlx()` write them.
fn parts(peak: u64, weights: u64, kv: u64) -> String {
    format!(
        "import os, time\n\
m = open(os.environ['SWAPSIGHT_MARK'], 'a')\n\
m.write('#counter {peak} bytes mlx.peak\\n#counter {weights} bytes mlx.weights\\n\
#counter {kv} bytes mlx.kv\\n')\n\
m.close()\n\
time.sleep(0.5)\n"
    )
}

#[test]
fn a_run_that_says_its_weights_and_kv_cache_is_compared_line_by_line() {
    let dir = TempDir::new("fit-per-line");
    let trace = dir.path().join("run.jsonl");
    let script = parts(150_000_000, 100_000_000, 30_000_000);
    let out = swapsight()
        .args(["fit", "100M", "--json", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "python3", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lines = v["comparison"]["by_line"].as_array().unwrap();
    let got: Vec<(&str, u64, u64, i64)> = lines
        .iter()
        .map(|l| {
            (
                l["id"].as_str().unwrap(),
                l["estimated_bytes"].as_u64().unwrap(),
                l["measured_bytes"].as_u64().unwrap(),
                l["error_bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    // A size is all weights: the KV cache and the rest are estimated at 0.
    let w = 100 * MIB;
    assert_eq!(
        got,
        [
            ("weights", w, 100_000_000, w as i64 - 100_000_000),
            ("kv-cache", 0, 30_000_000, -30_000_000),
            ("rest", 0, 20_000_000, -20_000_000),
        ]
    );
    assert_eq!(lines[1]["error_pct"], -100.0);
    // The whole-run comparison is unchanged beside it.
    assert_eq!(v["comparison"]["measured"][1]["bytes"], 150_000_000);
    let text = stdout_of(&fit(&["100M", "--from", trace.to_str().unwrap()]));
    let want = format!(
        "{:>9} estimated vs {:>9} the rest (mlx.peak − mlx.weights − mlx.kv): error -100.0 % (-{})",
        swapsight::units::format_bytes(0),
        swapsight::units::format_bytes(20_000_000),
        swapsight::units::format_bytes(20_000_000)
    );
    assert!(text.contains("estimated vs measured, per line:"), "{text}");
    assert!(text.contains(&want), "{want}\n{text}");

    // Weights and KV cache past the peak: no rest, and a note says why.
    let script = parts(150_000_000, 100_000_000, 60_000_000);
    let out = swapsight()
        .args(["fit", "100M", "--json", "--interval", "100ms", "-o"])
        .arg(dir.path().join("past.jsonl"))
        .args(["--", "python3", "-c", &script])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v["comparison"]["by_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["weights", "kv-cache"]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("the rest of the need is not compared: mlx.weights + mlx.kv"),
        "{notes}"
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

/// Where swapsight keeps the history for a user whose `$XDG_DATA_HOME`
/// and `$HOME` are both `data`: the data folder is the first on Linux,
/// under the second on a Mac.
pub(crate) fn history_path(data: &std::path::Path) -> std::path::PathBuf {
    let folder = if cfg!(target_os = "macos") {
        data.join(swapsight::recordings::MACOS_DATA_DIR)
    } else {
        data.to_path_buf()
    };
    folder.join(swapsight::fit::HISTORY_FILE)
}

#[test]
fn a_run_is_kept_in_the_data_folder_and_applied_to_later_estimates() {
    let dir = TempDir::new("fit-history");
    let model = dir.path().join("model");
    std::fs::create_dir_all(&model).unwrap();
    hf_folder(&model);
    // Layers described: the answer has a context, hence a runtime.
    std::fs::write(
        model.join("config.json"),
        r#"{"model_type":"llama","hidden_size":256,"intermediate_size":512,"num_attention_heads":4,"num_key_value_heads":1,"num_hidden_layers":2,"vocab_size":1000,"torch_dtype":"float32"}"#,
    )
    .unwrap();
    let data = dir.path().join("data");
    let kept_at = history_path(&data);
    let with_data = |args: &[&str]| {
        swapsight()
            .env("XDG_DATA_HOME", &data)
            .env("HOME", &data)
            .arg("fit")
            .arg(&model)
            .args(args)
            .output()
            .unwrap()
    };
    let trace = dir.path().join("run.jsonl");
    let out = with_data(&["-o", trace.to_str().unwrap(), "--", "python3", "-c", HOLDER]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let kept = std::fs::read_to_string(&kept_at).unwrap();
    let h: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let g = &h["groups"][0];
    assert_eq!(
        (g["runtime"].as_str(), g["architecture"].as_str()),
        (Some("torch"), Some("llama"))
    );
    assert_eq!(g["runs"][0]["measured"], "mlx.peak");
    assert_eq!(g["runs"][0]["measured_bytes"], 123_456_789);
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_slice(&with_data(&all).stdout).unwrap()
    };
    let raw = json(&["--no-history"]);
    assert!(raw.get("history").is_none(), "{raw:#}");
    let raw = raw["needed_bytes"].as_u64().unwrap();
    let ratio = 123_456_789.0 / raw as f64;
    let learnt = json(&[]);
    assert_eq!(learnt["history"]["runs"], 1);
    assert_eq!(
        learnt["needed_bytes"].as_u64().unwrap(),
        (raw as f64 * ratio) as u64
    );
    let note = format!(
        "estimate {:+.0} % from 1 past torch run of llama models (--no-history to ignore)",
        (ratio - 1.0) * 100.0
    );
    assert!(
        learnt["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == &note),
        "{note}: {learnt:#}"
    );
    assert!(stdout_of(&with_data(&[])).contains(&note));
    // A history that does not read is said and left alone.
    std::fs::write(&kept_at, "{").unwrap();
    let out = with_data(&[]);
    assert!(
        stderr_of(&out).contains("the history of past runs is not used"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read_to_string(&kept_at).unwrap(), "{");
}
