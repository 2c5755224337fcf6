use super::*;

#[test]
fn lerp_between_and_beyond_keys() {
    let k = [(0.0, 0.0), (10.0, 10.0), (20.0, 0.0)];
    assert_eq!(lerp(&k, -1.0), 0.0);
    assert_eq!(lerp(&k, 5.0), 5.0);
    assert_eq!(lerp(&k, 15.0), 5.0);
    assert_eq!(lerp(&k, 99.0), 0.0);
    assert_eq!(lerp(&[], 1.0), 0.0);
}

#[test]
fn seeds_match_field_notes_figures() {
    let t = seed_offload();
    let peak = t
        .samples
        .iter()
        .flat_map(|s| s.sample.processes.iter().filter(|p| p.pid == 4243))
        .map(|p| p.footprint_bytes)
        .max()
        .unwrap();
    assert!((peak as f64 / GB - 18.5).abs() < 0.01);
    let staged_min_free = seed_staged()
        .samples
        .iter()
        .map(|s| s.sample.system.free_pct)
        .fold(f64::INFINITY, f64::min);
    assert!(staged_min_free >= 51.0, "{staged_min_free}");
}

#[test]
fn busy_trace_has_requested_shape() {
    let t = busy_trace(100, 20);
    assert_eq!(t.samples.len(), 100);
    assert!(t.samples.iter().all(|s| s.sample.processes.len() == 20));
}
