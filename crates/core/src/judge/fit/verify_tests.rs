//! The estimate against a run's peaks: the error's sign, its %, the
//! framework's own peak where the run's counters gave one, and the need's
//! parts where they said what the weights and the KV cache held.

use super::super::{PastRun, PeakOf};
use super::*;
use crate::step::detect::State;
use crate::units::format_bytes;

fn run(footprint: u64, mlx: Option<u64>) -> PastRun {
    PastRun {
        path: "t.jsonl".into(),
        peak_footprint_bytes: footprint,
        peak_at_ms: 1000,
        of: PeakOf::Tree,
        command: Some("python generate.py".into()),
        hostname: "h".into(),
        os: "linux".into(),
        phys_bytes: 1 << 34,
        verdict: State::Fits,
        swap_growth_bytes: 0,
        samples: 10,
        framework_peaks: mlx
            .map(|b| ("mlx.peak".to_string(), b))
            .into_iter()
            .collect(),
    }
}

#[test]
fn a_short_estimate_has_a_negative_error_against_each_peak() {
    let c = compare(900, &[], &run(1000, Some(800)));
    assert_eq!(c.estimated_bytes, 900);
    let ids: Vec<&str> = c.measured.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["footprint", "mlx.peak"]);
    assert_eq!(c.measured[0].error_bytes, -100);
    assert!((c.measured[0].error_pct.unwrap() + 10.0).abs() < 1e-9);
    assert_eq!(c.measured[1].error_bytes, 100);
    assert!((c.measured[1].error_pct.unwrap() - 12.5).abs() < 1e-9);
    let mut text = String::new();
    super::super::text_plan::comparison_lines(&mut text, &c);
    assert!(text.contains("error -10.0 %"), "{text}");
    assert!(
        text.contains("MLX's own peak (mlx.peak): error +12.5 %"),
        "{text}"
    );
}

#[test]
fn nothing_measured_has_no_percentage() {
    let c = compare(900, &[], &run(0, None));
    assert_eq!(c.measured.len(), 1);
    assert_eq!(c.measured[0].error_pct, None);
    let json = serde_json::to_value(&c).unwrap();
    assert!(json["measured"][0]["error_pct"].is_null());
}

fn line(id: NeedId, bytes: u64) -> NeedLine {
    NeedLine {
        id,
        name: "",
        bytes,
        formula: String::new(),
        inputs: Vec::new(),
    }
}

/// A need of 1,000 weights, 200 + 50 of KV cache (full and sliding) and
/// 100 of prefill buffers.
fn need() -> Vec<NeedLine> {
    vec![
        line(NeedId::Weights, 1000),
        line(NeedId::KvCache, 200),
        line(NeedId::KvCacheSliding, 50),
        line(NeedId::Runtime, 100),
    ]
}

fn with_counters(peak: u64, weights: u64, kv: u64) -> PastRun {
    let mut r = run(5000, Some(peak));
    r.framework_peaks.push(("mlx.weights".into(), weights));
    r.framework_peaks.push(("mlx.kv".into(), kv));
    r
}

#[test]
fn each_part_is_held_against_its_counter_and_the_rest_against_the_peak_less_both() {
    let c = compare(1350, &need(), &with_counters(1400, 1020, 225));
    let ids: Vec<&str> = c.by_line.iter().map(|l| l.id).collect();
    assert_eq!(ids, ["weights", "kv-cache", "rest"]);
    let [w, kv, rest] = &c.by_line[..] else {
        panic!("{c:?}")
    };
    assert_eq!(
        (w.estimated_bytes, w.measured_bytes, w.error_bytes),
        (1000, 1020, -20)
    );
    assert!((w.error_pct.unwrap() + 20.0 / 1020.0 * 100.0).abs() < 1e-9);
    assert_eq!(kv.lines, [NeedId::KvCache, NeedId::KvCacheSliding]);
    assert_eq!(
        (kv.estimated_bytes, kv.measured_bytes, kv.error_bytes),
        (250, 225, 25)
    );
    // 1,400 − 1,020 − 225 = 155 measured against the runtime's 100.
    assert_eq!(
        (rest.estimated_bytes, rest.measured_bytes, rest.error_bytes),
        (100, 155, -55)
    );
    assert_eq!(rest.measured_from, "mlx.peak − mlx.weights − mlx.kv");
    // The whole-run figures are today's: the parts add to them.
    assert_eq!(c.measured.len(), 2);
    let mut text = String::new();
    super::super::text_plan::comparison_lines(&mut text, &c);
    let want = format!(
        "{:>9} estimated vs {:>9} KV cache (mlx.kv): error +11.1 % (+{})",
        format_bytes(250),
        format_bytes(225),
        format_bytes(25)
    );
    assert!(text.contains("estimated vs measured, per line:"), "{text}");
    assert!(text.contains(&want), "{want}\n{text}");
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["by_line"][1]["lines"][1], "kv-cache-sliding");
    assert_eq!(json["by_line"][2]["measured_bytes"], 155);
}

#[test]
fn counters_past_the_peak_give_no_rest_and_say_why_without_wrapping() {
    // The KV counter alone is past the peak: 1,000 − 900 would wrap.
    let r = with_counters(1000, 900, 400);
    let c = compare(1350, &need(), &r);
    let ids: Vec<&str> = c.by_line.iter().map(|l| l.id).collect();
    assert_eq!(ids, ["weights", "kv-cache"]);
    let why = rest_unmeasured(&r).expect("a note");
    assert!(why.contains("mlx.weights + mlx.kv"), "{why}");
    assert!(why.contains(&format_bytes(1300)), "{why}");
    // Counters that overflow u64 together are said too.
    let r = with_counters(u64::MAX, u64::MAX, 1);
    assert!(compare(1, &need(), &r)
        .by_line
        .iter()
        .all(|l| l.id != "rest"));
    assert!(rest_unmeasured(&r)
        .unwrap()
        .contains("more than 2^64 bytes"));
    // Where the rest was measured there is nothing to say.
    assert_eq!(rest_unmeasured(&with_counters(1400, 1020, 225)), None);
}

#[test]
fn without_the_counters_the_comparison_is_the_whole_run_s_only() {
    let c = compare(900, &need(), &run(1000, Some(800)));
    assert!(c.by_line.is_empty());
    let json = serde_json::to_value(&c).unwrap();
    assert!(json.get("by_line").is_none(), "{json}");
    let mut text = String::new();
    super::super::text_plan::comparison_lines(&mut text, &c);
    assert!(!text.contains("per line"), "{text}");
    // The weights alone: its line, no rest (the KV cache is not known).
    let mut r = run(1000, Some(800));
    r.framework_peaks.push(("mlx.weights".into(), 0));
    let c = compare(900, &need(), &r);
    let ids: Vec<&str> = c.by_line.iter().map(|l| l.id).collect();
    assert_eq!(ids, ["weights"]);
    assert_eq!(c.by_line[0].error_pct, None);
    assert_eq!(rest_unmeasured(&r), None);
}
