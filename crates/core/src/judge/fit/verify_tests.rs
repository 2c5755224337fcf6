//! The estimate against a run's peaks: the error's sign, its %, and the
//! framework's own peak where the run's counters gave one.

use super::super::{PastRun, PeakOf};
use super::*;
use crate::step::detect::State;

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
    let c = compare(900, &run(1000, Some(800)));
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
    let c = compare(900, &run(0, None));
    assert_eq!(c.measured.len(), 1);
    assert_eq!(c.measured[0].error_pct, None);
    let json = serde_json::to_value(&c).unwrap();
    assert!(json["measured"][0]["error_pct"].is_null());
}
