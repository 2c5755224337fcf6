//! The report's whole-run rules, each on its own.

use super::*;

fn listed(pid: u32, verdict: State, watched: bool, peak: u64) -> ProcessReport {
    ProcessReport {
        pid,
        name: format!("p{pid}"),
        cmdline: None,
        verdict,
        watched,
        first_seen_ms: 0,
        last_seen_ms: 0,
        peak_footprint_bytes: peak,
        peak_footprint_at_ms: 0,
        swap_growth_bytes: 0,
        swap_growth_from_ms: None,
        swap_growth_to_ms: None,
        min_free_pct: 0.0,
        pageins_per_s: 0.0,
        peak_pageins_per_s: 0.0,
        hidden_bytes: 0,
        measured_swap_peak_bytes: None,
        peak_swapins_per_s: None,
        peak_compressed_bytes: None,
        peak_gpu_bytes: None,
        peak_outside_footprint_bytes: None,
        readable: true,
        first_flag_ms: None,
        evidence: String::new(),
    }
}

#[test]
fn run_verdict_judges_the_machine_when_swap_grew_and_no_process_explains_it() {
    let cfg = DetectorConfig::default();
    let tol = 100;
    assert_eq!(
        run_verdict(State::Fits, 100, tol, false, 0.2, &cfg),
        State::FalseFit
    );
    assert_eq!(
        run_verdict(State::HiddenMemory, 100, tol, false, 0.9, &cfg),
        State::Overflow
    );
    assert_eq!(
        run_verdict(State::Fits, 99, tol, false, 0.2, &cfg),
        State::Fits
    );
    // Killed by its cgroup's OOM killer with no swap grown: it did not fit.
    assert_eq!(
        run_verdict(State::Fits, 0, tol, true, 0.88, &cfg),
        State::Overflow
    );
    assert_eq!(
        run_verdict(State::Fits, 0, tol, true, 0.1, &cfg),
        State::FalseFit
    );
    // A process that explains it keeps the run's verdict.
    assert_eq!(
        run_verdict(State::Overflow, 100, tol, false, 0.2, &cfg),
        State::Overflow
    );
    assert_eq!(
        run_verdict(State::FalseFit, 100, tol, false, 0.9, &cfg),
        State::FalseFit
    );
}

#[test]
fn shown_lists_the_watched_and_the_flagged_watched_first() {
    let out = shown(vec![
        listed(1, State::Fits, false, 900),
        listed(2, State::Fits, true, 10),
        listed(3, State::FalseFit, false, 5),
        listed(4, State::Fits, true, 0),
    ]);
    let pids: Vec<u32> = out.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [2, 3]);
    // Nothing watched: the five largest.
    let out = shown(
        (1..=7)
            .map(|i| listed(i, State::Fits, false, u64::from(i)))
            .collect(),
    );
    let pids: Vec<u32> = out.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [7, 6, 5, 4, 3]);
}

/// The seed's false fit with PSI added (some avg10 climbing 2 % a second)
/// and a swap budget of 1 GiB in its header.
fn offload_with_pressure() -> crate::record::trace::Trace {
    use crate::step::pressure::{Pressure, PsiLine};
    let mut t = crate::synth::seed_offload();
    let start = t.samples[0].sample.system.swap_used_bytes;
    if let Some(h) = t.header.as_mut() {
        h.forecast.swap_budget_bytes = Some(1 << 30);
        h.forecast.swap_start_bytes = Some(start);
        h.pressure.hold_ms = 2_000;
    }
    for s in &mut t.samples {
        let secs = s.sample.t_ms as f64 / 1000.0;
        s.sample.system.pressure = Some(Pressure {
            some: Some(PsiLine {
                avg10: (secs * 2.0).min(100.0),
                avg60: 0.0,
                total_us: (secs * secs * 10_000.0) as u64,
            }),
            ..Pressure::default()
        });
    }
    t
}

#[test]
fn the_report_has_pressure_and_how_the_forecast_did() {
    let r = report(&offload_with_pressure(), None);
    let p = r.pressure.expect("pressure summary");
    // derived again (the seed records no level): warning from 5 s held 2 s,
    // critical from 20 s held 2 s
    assert_eq!(p.levels.peak, crate::step::pressure::Level::Critical);
    assert!(p.levels.warning_ms > 0 && p.levels.critical_ms > 0, "{p:?}");
    assert!(p.some_avg10_peak.unwrap() >= 40.0);
    let budget = r
        .forecasts
        .iter()
        .find(|o| o.limit == crate::step::forecast::Limit::SwapBudget)
        .expect("the budget forecast");
    let (fired, reached) = (budget.fired_ms.unwrap(), budget.reached_ms.unwrap());
    assert!(fired < reached, "{budget:?}");
    let text = r.to_text();
    assert!(text.contains("pressure: peak critical; normal "), "{text}");
    assert!(text.contains("forecast: swap budget — fired at "), "{text}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["pressure"]["peak"], "critical");
    assert_eq!(json["forecasts"][0]["limit"], "swap-budget");
}

#[test]
fn a_trace_without_pressure_reports_none() {
    let r = report(&crate::synth::seed_offload(), None);
    assert_eq!(r.pressure, None);
    assert!(!r.to_text().contains("pressure:"));
}

#[test]
fn processes_that_tie_are_shown_in_pid_order_whatever_order_they_came_in() {
    let twins = |order: &[u32]| {
        let out = shown(
            order
                .iter()
                .map(|&pid| listed(pid, State::Overflow, true, 100))
                .collect(),
        );
        out.iter().map(|p| p.pid).collect::<Vec<u32>>()
    };
    assert_eq!(twins(&[9, 3, 5]), [3, 5, 9]);
    assert_eq!(twins(&[5, 9, 3]), [3, 5, 9]);
}

/// Swap written is the counter's growth over the run, each phase's over
/// its span from its baseline, and the text names it with its rate.
#[test]
fn swap_written_over_the_run_and_by_phase_is_the_counters_growth() {
    let mut trace = crate::synth::seed_offload();
    let end_ms = trace.samples.last().unwrap().sample.t_ms;
    for (t_ms, name) in [
        (0, "load"),
        (end_ms / 3, "denoise"),
        (2 * end_ms / 3, "decode"),
    ] {
        trace.marks.push(crate::record::trace::Mark {
            t_ms,
            name: name.into(),
            end: false,
        });
    }
    let counter = |i: usize| trace.samples[i].sample.system.swap_out_bytes.unwrap();
    let last = trace.samples.len() - 1;
    let r = report(&trace, None);
    let w = r.swap_written.expect("the synth run carries the counter");
    assert_eq!(w.bytes, counter(last) - counter(0));
    assert!(w.bytes > 1 << 30, "the staged run swaps: {}", w.bytes);
    assert!(w.host_wide);
    assert!(r
        .to_text()
        .contains(&format!("swap written: {}", w.to_words())));
    // The phases cover the run; what each wrote adds up to no more than the
    // run (a phase's baseline sample is its predecessor's last).
    assert!(!r.phases.is_empty());
    let by_phase: u64 = r
        .phases
        .iter()
        .filter_map(|p| p.swap_written)
        .map(|w| w.bytes)
        .sum();
    assert!(
        by_phase <= w.bytes && by_phase > 0,
        "{by_phase} of {}",
        w.bytes
    );
    // A trace without the counter (older swapsight) has no figure, not 0.
    let mut old = trace.clone();
    for s in &mut old.samples {
        s.sample.system.swap_out_bytes = None;
    }
    let r = report(&old, None);
    assert_eq!(r.swap_written, None);
    assert!(!r.to_text().contains("swap written:"));
}

/// On a Mac whose GPU holds memory no footprint counts, the report puts
/// the GPU beside the footprints at the unexplained peak and says the GPU
/// holds it.
#[test]
fn the_gpu_in_use_beside_the_footprints_names_what_they_do_not_explain() {
    let mut trace = crate::synth::seed_offload();
    let gib = 1u64 << 30;
    for s in &mut trace.samples {
        let sys = &mut s.sample.system;
        let footprints: u64 = s.sample.processes.iter().map(|p| p.footprint_bytes).sum();
        // The GPU holds all used memory the footprints do not.
        let unexplained = sys.used_bytes().saturating_sub(footprints);
        sys.gpu = Some(crate::probe::GpuMemory {
            in_use_bytes: Some(unexplained + gib),
            ..Default::default()
        });
    }
    let r = report(&trace, None);
    let g = r.footprints.gpu_at_peak.expect("GPU figures at the peak");
    assert_eq!(g.unexplained_bytes, r.footprints.unexplained_peak_bytes);
    assert_eq!(g.held_by_gpu_bytes as i64, g.unexplained_bytes);
    assert!(g.gpu_explains());
    let text = r.to_text();
    assert!(text.contains("at that peak: GPU in use "), "{text}");
    assert!(
        text.contains("held by the GPU outside footprints"),
        "{text}"
    );
    // A GPU holding little of it is beside the figures but named as no cause.
    for s in &mut trace.samples {
        s.sample.system.gpu = Some(crate::probe::GpuMemory {
            in_use_bytes: Some(gib / 4),
            ..Default::default()
        });
    }
    let r = report(&trace, None);
    let g = r.footprints.gpu_at_peak.unwrap();
    assert!(!g.gpu_explains(), "{g:?}");
    assert!(!r.to_text().contains("held by the GPU"));
}

/// A phase no sample fell in says so rather than showing the sample
/// before it as its own, and a phase that ends after the last sample (a
/// command that exits between ticks) is inside the run's span, in both
/// ways a report is folded.
#[test]
fn a_phase_without_a_sample_says_so_and_the_run_spans_its_phases() {
    let mut trace = crate::synth::seed_offload();
    let t = |i: usize| trace.samples[i].sample.t_ms;
    let (gap, end_ms) = (t(1) - t(0), t(trace.samples.len() - 1));
    assert!(gap >= 10, "samples {gap} ms apart");
    let mark = |t_ms, name: &str, end| crate::record::trace::Mark {
        t_ms,
        name: name.into(),
        end,
    };
    let (quick, long) = (t(1) + 1, t(1) + gap / 2);
    trace.marks = vec![
        mark(quick, "quick", false),
        mark(long, "quick", true),
        mark(long, "long", false),
        mark(end_ms + 1500, "long", true),
    ];
    let r = report(&trace, None);
    let row = |name: &str| r.phases.iter().find(|p| p.name == name).unwrap();
    assert_eq!(row("quick").samples, 0);
    let text = r.to_text();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("quick"))
        .unwrap();
    assert!(
        line.contains("not sampled: no sample fell in it") && !line.contains("fits"),
        "{line}"
    );
    let long_end = row("long").start_ms + row("long").duration_ms;
    assert_eq!(long_end, end_ms + 1500);
    assert_eq!(r.duration_ms, long_end - t(0), "the run covers its phases");

    // Streamed, the marks come as records among the samples.
    let mut fold = ReportFold::streaming(trace.header(), None);
    let mut marks = trace.marks.iter().peekable();
    for s in &trace.samples {
        while let Some(m) = marks.next_if(|m| m.t_ms <= s.sample.t_ms) {
            fold.push(Record::Mark(m.clone()));
        }
        fold.push(Record::Sample(s.clone()));
    }
    marks.for_each(|m| fold.push(Record::Mark(m.clone())));
    let streamed = fold
        .finish(&trace.notes())
        .or_second_pass(trace.samples.iter().cloned());
    assert_eq!(streamed.duration_ms, r.duration_ms);
}
