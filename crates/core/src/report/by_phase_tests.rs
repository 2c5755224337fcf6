use super::*;
use crate::trace::Mark;

/// Start marks, each at its time.
fn starts(list: &[(u64, &str)]) -> Vec<Mark> {
    list.iter()
        .map(|&(t_ms, name)| Mark {
            t_ms,
            name: name.into(),
            end: false,
        })
        .collect()
}

/// The offload seed with the source's four phases: swap grew during
/// denoise and decode only, and only those are judged as not fitting.
#[test]
fn the_offload_run_by_phase() {
    let mut t = crate::synth::seed_offload();
    t.marks = starts(&[
        (0, "load"),
        (13_000, "encode"),
        (20_000, "denoise"),
        (90_000, "decode"),
    ]);
    // Through the report, so each phase is judged by the run's own rule.
    let rows = crate::report::report(&t, None).phases;
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["load", "encode", "denoise", "decode"]);
    const GB: i64 = 1 << 30;
    assert!(rows[0].swap_growth_bytes < GB / 10, "{rows:?}");
    assert!(rows[1].swap_growth_bytes < GB / 10, "{rows:?}");
    assert!(
        (rows[2].swap_growth_bytes - 35 * GB / 10).abs() < GB / 5,
        "{rows:?}"
    );
    assert!(rows[3].swap_growth_bytes > 5 * GB, "{rows:?}");
    assert_eq!(rows[0].verdict, State::Fits);
    assert_eq!(rows[1].verdict, State::Fits);
    assert_eq!(rows[2].verdict, State::FalseFit);
    assert_eq!(rows[3].verdict, State::FalseFit);
    // Peak watched footprint of denoise: 18.5 GB, the source's figure.
    let peak = rows[2].peak_footprint_bytes as f64 / GB as f64;
    assert!((peak - 18.5).abs() < 0.05, "{peak}");
    assert!(rows[3].min_free_pct < rows[0].min_free_pct);
    assert!(rows.iter().all(|r| r.unexplained_peak_bytes.is_some()));
    let text = to_text(&rows);
    assert!(
        text.lines().nth(3).unwrap().starts_with("denoise"),
        "{text}"
    );
    assert!(text.contains("false fit"), "{text}");
}

/// The table judges each phase with the rule it is handed, on that phase's
/// samples plus its baseline, and never on more.
#[test]
fn each_phase_is_judged_by_the_rule_handed_in_on_its_own_samples() {
    let mut t = crate::synth::seed_offload();
    t.marks = starts(&[(0, "load"), (13_000, "encode")]);
    let last_ms = t.samples.last().unwrap().sample.t_ms;
    let seen = std::cell::RefCell::new(Vec::new());
    /// A rule that notes the span of the samples it is handed.
    struct Noting<'a> {
        span: Option<(u64, u64)>,
        log: &'a std::cell::RefCell<Vec<(u64, u64)>>,
    }
    impl Judge for Noting<'_> {
        fn push(&mut self, s: &crate::trace::TraceSample) {
            let t = s.sample.t_ms;
            self.span = Some(self.span.map_or((t, t), |(first, _)| (first, t)));
        }
        fn verdict(self) -> State {
            self.log.borrow_mut().push(self.span.unwrap());
            State::Overflow
        }
    }
    let rows = phase_rows(&t, || Noting {
        span: None,
        log: &seen,
    });
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter().all(|r| r.verdict == State::Overflow),
        "{rows:?}"
    );
    let seen = seen.into_inner();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0, 0);
    assert!(seen[0].1 <= 13_000, "{seen:?}");
    assert!(seen[1].0 <= 13_000 && seen[1].0 > 0, "{seen:?}");
    assert_eq!(seen[1].1, last_ms);
}
