//! The history: learnt per runtime and architecture, the mean of the last
//! runs, said as a note, kept as readable JSON through outpath.

use super::*;

fn run(estimated: u64, measured: u64) -> Run {
    Run {
        at_unix_ms: 1,
        model: "m/llama".into(),
        context: Some(4096),
        estimated_bytes: estimated,
        measured_bytes: measured,
        measured: "mlx.peak".into(),
        ratio: measured as f64 / estimated as f64,
    }
}

#[test]
fn three_runs_make_a_ratio_for_their_runtime_and_architecture_only() {
    let mut h = History::default();
    for m in [104, 106, 108] {
        h.learn(Runtime::Mlx, "llama", run(100, m));
    }
    let l = h.learnt(Runtime::Mlx, "llama").unwrap();
    assert!((l.ratio - 1.06).abs() < 1e-9);
    assert_eq!(
        l.note,
        "+6 % from 3 past mlx runs of llama models (--no-history to ignore)"
    );
    assert!(h.learnt(Runtime::Torch, "llama").is_none());
    assert!(h.learnt(Runtime::Mlx, "qwen2").is_none());
    for _ in 0..30 {
        h.learn(Runtime::Mlx, "llama", run(100, 90));
    }
    let g = &h.groups[0];
    assert_eq!(g.runs.len(), 20);
    assert!((g.ratio - 0.9).abs() < 1e-9);
}

#[test]
fn the_file_is_readable_json_written_and_read_back() {
    let dir = std::env::temp_dir().join(format!("swapsight-history-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("data/swapsight-fit-history.json");
    assert_eq!(History::load(&path).unwrap(), History::default());
    let mut h = History::default();
    h.learn(Runtime::Mlx, "llama", run(100, 103));
    h.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\n  \"about\": \"swapsight fit's history"),
        "{text}"
    );
    assert_eq!(History::load(&path).unwrap(), h);
    std::fs::write(&path, "{not json").unwrap();
    assert!(History::load(&path)
        .unwrap_err()
        .contains("not a fit history"));
    let _ = std::fs::remove_dir_all(&dir);
}
