use super::*;
use crate::report::report;
use crate::synth;

#[test]
fn curves_start_at_zero_and_follow_every_sample() {
    let t = synth::seed_offload();
    let d = chart_data(&t, &report(&t, None), 4);
    assert_eq!(d.growth.len(), t.samples.len());
    assert_eq!(d.free.len(), t.samples.len());
    assert_eq!(d.growth[0], (0.0, 0.0));
    let last = &t.samples.last().unwrap().sample;
    let first = &t.samples[0].sample;
    let want_x = (last.t_ms - first.t_ms) as f64 / 1000.0;
    assert_eq!(d.growth.last().unwrap().0, want_x);
    assert_eq!(d.x_max, want_x);
    let want_gb = (last.system.swap_used_bytes as f64 - first.system.swap_used_bytes as f64) / GB;
    assert_eq!(d.growth.last().unwrap().1, want_gb);
    assert!(d.free.iter().all(|&(_, f)| (0.0..=100.0).contains(&f)));
}

#[test]
fn the_range_holds_every_line_and_the_states_are_shaded() {
    let t = synth::seed_offload();
    let r = report(&t, None);
    let d = chart_data(&t, &r, 3);
    assert!(!d.series.is_empty() && d.series.len() <= 3);
    let top = d
        .series
        .iter()
        .flat_map(|s| s.segments.iter().flatten())
        .chain(&d.growth)
        .map(|&(_, y)| y)
        .fold(0.0, f64::max);
    assert!(d.y_max >= top, "{} < {top}", d.y_max);
    assert!(d.y_min <= 0.0);
    assert!(d
        .series
        .iter()
        .all(|s| s.segments.iter().all(|v| !v.is_empty())));
    // The seed's verdict is shaded, live or from the report.
    assert!(
        d.intervals.iter().any(|i| i.state == r.verdict),
        "{:?}",
        r.verdict
    );
    assert_eq!(
        d.min_width,
        t.header.as_ref().unwrap().interval_ms as f64 / 1000.0
    );
}

#[test]
fn a_process_missing_from_a_sample_breaks_its_line() {
    let mut t = synth::seed_offload();
    let r = report(&t, None);
    let whole = chart_data(&t, &r, 1).series[0].clone();
    assert_eq!(whole.segments.len(), 1);
    assert!(whole.segments[0].len() > 4);
    let label = whole.label;
    let watched_pid: u32 = label
        .split_whitespace()
        .find_map(|w| w.parse().ok())
        .expect("a pid in the label");
    t.samples[2]
        .sample
        .processes
        .retain(|p| p.pid != watched_pid);
    let d = chart_data(&t, &r, 1);
    assert_eq!(d.series[0].segments.len(), 2);
    assert_eq!(d.series[0].segments[0].len(), 2);
}

#[test]
fn a_scoped_run_draws_its_limit_within_the_range() {
    let mut t = synth::seed_staged();
    // A 64 GiB limit: above every line of the 48 GB seed run.
    for s in &mut t.samples {
        s.sample.scope = Some(crate::probe::Scope {
            limit_bytes: 64 << 30,
            ..Default::default()
        });
    }
    let d = chart_data(&t, &report(&t, None), 3);
    let (y, words) = d.limit.clone().expect("the limit line");
    assert_eq!(y, 64.0 * (1u64 << 30) as f64 / GB);
    assert_eq!(words, "cgroup limit 64 GiB");
    assert!(d.y_max >= y, "{} < {y}", d.y_max);
    let t = synth::seed_staged();
    assert_eq!(chart_data(&t, &report(&t, None), 3).limit, None);
}
