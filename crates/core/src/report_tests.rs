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
        run_verdict(State::Fits, 100, tol, 0.2, &cfg),
        State::FalseFit
    );
    assert_eq!(
        run_verdict(State::HiddenMemory, 100, tol, 0.9, &cfg),
        State::Overflow
    );
    assert_eq!(run_verdict(State::Fits, 99, tol, 0.2, &cfg), State::Fits);
    // A process that explains it keeps the run's verdict.
    assert_eq!(
        run_verdict(State::Overflow, 100, tol, 0.2, &cfg),
        State::Overflow
    );
    assert_eq!(
        run_verdict(State::FalseFit, 100, tol, 0.9, &cfg),
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
