use super::*;
use crate::judge::report::report;
use crate::synth;

#[test]
fn curves_start_at_zero_and_follow_every_sample() {
    let t = synth::seed_offload();
    let d = chart_data(&t, &report(&t, None), LinePick::all(4));
    assert_eq!(d.growth.len(), t.samples.len());
    assert_eq!(d.free.len(), t.samples.len());
    assert_eq!(d.growth[0], (0.0, 0.0));
    let last = &t.samples.last().unwrap().sample;
    let first = &t.samples[0].sample;
    let want_x = (last.t_ms - first.t_ms) as f64 / 1000.0;
    assert_eq!(d.growth.last().unwrap().0, want_x);
    assert_eq!(d.x_max, want_x);
    let want_gb = (last.system.swap_used_bytes as f64 - first.system.swap_used_bytes as f64) / GIB;
    assert_eq!(d.growth.last().unwrap().1, want_gb);
    assert!(d.free.iter().all(|&(_, f)| (0.0..=100.0).contains(&f)));
}

#[test]
fn the_range_holds_every_line_and_the_states_are_shaded() {
    let t = synth::seed_offload();
    let r = report(&t, None);
    let d = chart_data(&t, &r, LinePick::all(3));
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
    let whole = chart_data(&t, &r, LinePick::all(1)).series[0].clone();
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
    let d = chart_data(&t, &r, LinePick::all(1));
    assert_eq!(d.series[0].segments.len(), 2);
    assert_eq!(d.series[0].segments[0].len(), 2);
}

#[test]
fn a_scoped_run_draws_its_limit_within_the_range() {
    let mut t = synth::seed_staged();
    // A 64 GiB limit: above every line of the 48 GiB seed run.
    for s in &mut t.samples {
        s.sample.scope = Some(crate::probe::Scope {
            limit_bytes: 64 << 30,
            ..Default::default()
        });
    }
    let d = chart_data(&t, &report(&t, None), LinePick::all(3));
    let (y, words) = d.limit.clone().expect("the limit line");
    assert_eq!(y, 64.0 * (1u64 << 30) as f64 / GIB);
    assert_eq!(words, "cgroup limit 64 GiB");
    assert!(d.y_max >= y, "{} < {y}", d.y_max);
    let t = synth::seed_staged();
    assert_eq!(
        chart_data(&t, &report(&t, None), LinePick::all(3)).limit,
        None
    );
}

#[test]
fn byte_counters_are_lines_on_the_memory_axis_and_other_units_are_not() {
    let mut t = synth::seed_offload();
    let t0 = t.samples[0].sample.t_ms;
    let point = |dt: u64, name: &str, value: f64, unit: &str| crate::record::trace::Counter {
        t_ms: t0 + dt,
        name: name.into(),
        value,
        unit: unit.into(),
    };
    // Out of order; a sixth byte counter past the four the chart draws.
    t.counters = vec![
        point(2000, "pool", 3.0 * GIB, "bytes"),
        point(1000, "pool", GIB, "bytes"),
    ];
    t.counters.push(point(1000, "queue", 12.0, "items"));
    for n in 0..5 {
        t.counters
            .push(point(1000, &format!("c{n}"), 100.0 * GIB, "bytes"));
    }
    let d = chart_data(&t, &report(&t, None), LinePick::all(2));
    let labels: Vec<&str> = d.counters.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "pool (counter)",
            "c0 (counter)",
            "c1 (counter)",
            "c2 (counter)"
        ]
    );
    // A step: each value holds until the next, the last to the run's end.
    assert_eq!(
        d.counters[0].segments,
        vec![vec![(1.0, 1.0), (2.0, 1.0), (2.0, 3.0), (d.x_max, 3.0)]]
    );
    assert!(
        d.y_max >= 100.0,
        "the range holds the counters: {}",
        d.y_max
    );
    // Their colours follow the processes' lines.
    assert_ne!(d.counters[0].colour, d.series[0].colour);
}

#[test]
fn a_counter_written_once_is_held_to_the_end_of_its_phase_or_of_the_run() {
    let mut t = synth::seed_offload();
    let t0 = t.samples[0].sample.t_ms;
    let point = |dt: u64, name: &str| crate::record::trace::Counter {
        t_ms: t0 + dt,
        name: name.into(),
        value: GIB,
        unit: "bytes".into(),
    };
    let mark = |dt: u64, name: &str, end: bool| crate::record::trace::Mark {
        t_ms: t0 + dt,
        name: name.into(),
        end,
    };
    t.marks = vec![mark(1000, "load", false), mark(3000, "load", true)];
    t.counters = vec![point(2000, "in_load"), point(4000, "after")];
    let d = chart_data(&t, &report(&t, None), LinePick::all(1));
    assert_eq!(d.counters.len(), 2);
    assert_eq!(
        d.counters[0].segments,
        vec![vec![(2.0, 1.0), (3.0, 1.0)]],
        "held to the end of load"
    );
    assert_eq!(
        d.counters[1].segments,
        vec![vec![(4.0, 1.0), (d.x_max, 1.0)]],
        "held to the end of the run"
    );
    assert!(d.x_max > 4.0);
}

#[test]
fn pressure_above_normal_is_kept_as_stretches_by_level() {
    use crate::step::pressure::{Level, Pressure};
    let mut t = synth::seed_offload();
    let levels = [
        Level::Normal,
        Level::Warning,
        Level::Warning,
        Level::Critical,
        Level::Normal,
        Level::Warning,
    ];
    for (s, l) in t.samples.iter_mut().zip(levels) {
        s.sample.system.pressure = Some(Pressure {
            level: Some(l),
            ..Default::default()
        });
    }
    for s in t.samples.iter_mut().skip(levels.len()) {
        s.sample.system.pressure = None;
    }
    let x = |i: usize| (t.samples[i].sample.t_ms - t.samples[0].sample.t_ms) as f64 / 1000.0;
    let d = chart_data(&t, &report(&t, None), LinePick::all(2));
    assert_eq!(
        d.pressure,
        [
            (x(1), x(3), Level::Warning),
            (x(3), x(4), Level::Critical),
            (x(5), x(6), Level::Warning),
        ]
    );
    // Without pressure figures, nothing.
    let plain = synth::seed_offload();
    let mut plain = plain;
    for s in &mut plain.samples {
        s.sample.system.pressure = None;
    }
    assert!(chart_data(&plain, &report(&plain, None), LinePick::all(2))
        .pressure
        .is_empty());
}

/// A recording of a notebook's kernel charts the kernel: beside a watched
/// tree another process (another user's compiler, larger than anything
/// watched) gets a line only when the report suspects it, or when every
/// process is asked for.
#[test]
fn beside_a_watched_tree_only_a_suspect_gets_a_line_unless_all_are_asked() {
    let mut t = synth::seed_offload();
    for s in &mut t.samples {
        s.sample.processes.push(crate::probe::ProcessSample {
            pid: 4242,
            name: "rustc".into(),
            footprint_bytes: 40 << 30,
            ..Default::default()
        });
    }
    let mut r = report(&t, None);
    let opts = super::super::PlotOptions::default();
    let all = super::super::PlotOptions {
        all_processes: true,
        ..opts.clone()
    };
    let has_rustc = |d: &ChartData| d.series.iter().any(|s| s.label.contains("rustc"));
    let mut suspect = r.processes.iter().find(|p| p.watched).unwrap().clone();
    r.processes.retain(|p| p.pid != 4242);
    assert!(!has_rustc(&chart_data(&t, &r, LinePick::of(&r, &opts))));
    let d = chart_data(&t, &r, LinePick::of(&r, &all));
    assert!(has_rustc(&d));
    assert!(d.series[0].label.contains("(watched)"), "watched first");
    // Judged a suspect by the report: its line is back.
    suspect.pid = 4242;
    suspect.watched = false;
    suspect.verdict = crate::step::detect::State::Overflow;
    r.processes.push(suspect);
    assert!(has_rustc(&chart_data(&t, &r, LinePick::of(&r, &opts))));
}
