use super::*;
use crate::judge::report::by_phase::PhaseRow;
use crate::step::detect::State;

fn point(t_ms: u64, name: &str, value: f64) -> Counter {
    Counter {
        t_ms,
        name: name.into(),
        value,
        unit: "items".into(),
    }
}

fn row(name: &str, start_ms: u64, duration_ms: u64) -> PhaseRow {
    PhaseRow {
        name: name.into(),
        start_ms,
        duration_ms,
        peak_footprint_bytes: 0,
        swap_growth_bytes: 0,
        min_free_pct: 0.0,
        unexplained_peak_bytes: None,
        samples: 0,
        verdict: State::Fits,
        pressure: None,
        swap_written: None,
        counters: Vec::new(),
    }
}

#[test]
fn each_phase_gets_the_peak_and_last_of_its_own_points() {
    let mut log = CounterLog::default();
    for c in [
        point(0, "pool", 10.0),
        point(1000, "pool", 50.0),
        point(1500, "pool", 40.0),
        point(2000, "pool", 5.0),
        point(2500, "other", 1.0),
        point(9000, "pool", 7.0),
    ] {
        log.push(&c);
    }
    let mut phases = vec![
        row("load", 0, 1000),
        row("fill", 1000, 1000),
        row("save", 2000, 1000),
    ];
    crate::judge::report::by_phase::attach_counters(&mut phases, &log);
    let figures = |r: &PhaseRow| -> Vec<(String, f64, f64, usize)> {
        r.counters
            .iter()
            .map(|c| (c.name.clone(), c.peak, c.last, c.points))
            .collect()
    };
    assert_eq!(figures(&phases[0]), [("pool".into(), 10.0, 10.0, 1)]);
    assert_eq!(figures(&phases[1]), [("pool".into(), 50.0, 40.0, 2)]);
    // The last phase keeps what came after its end.
    assert_eq!(
        figures(&phases[2]),
        [("pool".into(), 7.0, 7.0, 2), ("other".into(), 1.0, 1.0, 1)]
    );
    let run = log.run();
    assert_eq!(run[0].peak, 50.0);
    assert_eq!(run[0].last, 7.0);
    assert!(
        to_text(&run).starts_with("pool: peak 50 items, last 7 items (5 values)\n"),
        "{}",
        to_text(&run)
    );
    assert!(
        to_text(&run).ends_with("other: peak 1 items, last 1 items (1 value)\n"),
        "{}",
        to_text(&run)
    );
}

#[test]
fn names_past_the_cap_are_counted_not_kept() {
    let mut log = CounterLog::default();
    for i in 0..(MAX_NAMES + 5) {
        log.push(&point(0, &format!("c{i}"), 1.0));
    }
    assert_eq!(log.run().len(), MAX_NAMES);
    assert_eq!(log.dropped, 5);
}

#[test]
fn a_figure_in_other_units_keeps_its_unit() {
    assert_eq!(figure(2.5, "items"), "2.50 items");
    assert_eq!(figure(3.0, "%"), "3 %");
    assert_eq!(figure(3.0 * (1u64 << 30) as f64, "bytes"), "3.0 GiB");
}
