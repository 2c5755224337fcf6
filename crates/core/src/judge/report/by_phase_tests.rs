use super::*;
use crate::record::trace::{Mark, Record};
use crate::util::units::saturating_sum;

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
    let rows = crate::judge::report::report(&t, None).phases;
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
    // Peak watched footprint of denoise: 18.5 GiB, the source's figure.
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
        fn push(&mut self, s: &crate::record::trace::TraceSample) {
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

/// The table as it was computed before it streamed: each phase's samples
/// sliced out of the whole trace (kept here as the reference the fold
/// must match).
fn reference_row(
    trace: &Trace,
    phase: &crate::record::phases::Phase,
    judge: &impl Fn(&Trace) -> State,
) -> PhaseRow {
    // The samples in [start, end], plus the last one before start as the baseline.
    let first_in = trace
        .samples
        .partition_point(|s| s.sample.t_ms < phase.start_ms);
    let end = trace
        .samples
        .partition_point(|s| s.sample.t_ms <= phase.end_ms);
    let from = if trace
        .samples
        .get(first_in)
        .is_some_and(|s| s.sample.t_ms == phase.start_ms)
    {
        first_in
    } else {
        first_in.saturating_sub(1)
    };
    let slice = &trace.samples[from..end.max(from)];
    // A sample on the boundary between two phases is the next one's own
    // (the last phase keeps the last sample).
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let own_end = if phase.end_ms >= last_ms {
        end
    } else {
        trace
            .samples
            .partition_point(|s| s.sample.t_ms < phase.end_ms)
    };
    let inside = &trace.samples[first_in..own_end.max(first_in)];
    let watched_fp = |s: &TraceSample| {
        saturating_sum(
            s.sample
                .processes
                .iter()
                .filter(|p| s.watched.is_empty() || s.watched.contains(&p.pid))
                .map(|p| p.footprint_bytes),
        )
    };
    // The baseline sample only says where swap stood when the phase began;
    // the phase's own figures come from its own samples.
    let own = if inside.is_empty() { slice } else { inside };
    let peak_fp = own.iter().map(watched_fp).max().unwrap_or(0);
    let swap = |s: &TraceSample| s.judged().system.swap_used_bytes;
    let swap_start = slice.first().map_or(0, swap);
    let swap_max = slice.iter().map(swap).max().unwrap_or(swap_start);
    let min_free = own
        .iter()
        .map(|s| s.judged().system.free_pct)
        .fold(f64::INFINITY, f64::min);
    let unexplained = own.iter().map(|s| s.judged().gap.unexplained_bytes).max();
    let verdict = if slice.len() < 2 {
        State::Fits
    } else {
        let sub = Trace {
            header: trace.header.clone(),
            samples: slice.to_vec(),
            ..Trace::default()
        };
        judge(&sub)
    };
    PhaseRow {
        name: phase.name.clone(),
        start_ms: phase.start_ms,
        duration_ms: phase.end_ms.saturating_sub(phase.start_ms),
        peak_footprint_bytes: peak_fp,
        swap_growth_bytes: signed_diff(swap_max, swap_start),
        min_free_pct: if min_free.is_finite() { min_free } else { 0.0 },
        unexplained_peak_bytes: unexplained,
        samples: inside.len(),
        verdict,
        pressure: {
            let mut fold = crate::step::pressure::PressureFold::default();
            for s in slice {
                fold.push(s.sample.t_ms, s.sample.system.pressure.as_ref(), None);
            }
            fold.finish()
        },
        swap_written: {
            let mut fold = crate::step::written::WrittenFold::default();
            for s in slice {
                fold.push(s.sample.t_ms, &s.sample.system, s.sample.scope.as_ref());
            }
            fold.finish()
        },
        counters: Vec::new(),
    }
}

/// The streamed table matches the sliced one, row for row and verdict for
/// verdict, wherever the marks fall: on samples, between them, before the
/// first, after the last, at equal times, with end marks and empty phases;
/// and the report of the trace streamed from its file is the report of it
/// in memory.
#[test]
fn the_streamed_table_matches_the_sliced_one() {
    let cases: Vec<Vec<Mark>> = vec![
        starts(&[
            (0, "load"),
            (13_000, "encode"),
            (20_000, "denoise"),
            (90_000, "decode"),
        ]),
        starts(&[(250, "a"), (13_100, "b"), (50_250, "c")]),
        starts(&[(90_000, "late"), (200_000, "after the end")]),
        {
            let mut m = starts(&[
                (10_000, "a"),
                (20_000, "a"),
                (20_000, "b"),
                (20_000, ""),
                (30_250, "c"),
                (40_000, "d"),
                (40_000, "e"),
                (103_999, "f"),
            ]);
            // "a" and the empty one are end marks: an empty phase at 20 s.
            m[1].end = true;
            m[3].end = true;
            m
        },
        // Written out of time order: the spans sort them.
        starts(&[(60_000, "second"), (5_000, "first")]),
    ];
    for marks in cases {
        let mut t = crate::synth::seed_offload();
        t.marks = marks;
        let header = t.header().clone();
        let rows = phase_rows(&t, || crate::judge::report::RunJudge::new(&header, None));
        let last_ms = t.samples.last().unwrap().sample.t_ms;
        let want: Vec<PhaseRow> = crate::record::phases::spans(&t.marks, last_ms)
            .iter()
            .map(|p| {
                reference_row(&t, p, &|sub| {
                    crate::judge::report::report(sub, None).verdict
                })
            })
            .collect();
        assert_eq!(rows, want, "{:?}", t.marks);

        // The marks as a recording writes them, each after the samples up
        // to its time: the table folds them in the one pass.
        let mut sorted = t.marks.clone();
        sorted.sort_by_key(|m| m.t_ms);
        let mut table = PhaseTable::streaming(header.watching(), || {
            crate::judge::report::RunJudge::new(&header, None)
        });
        let mut lines = vec![Record::Header(header.clone())];
        let mut pending = sorted.iter().peekable();
        for (i, s) in t.samples.iter().enumerate() {
            table.push(s);
            lines.push(Record::Sample(s.clone()));
            let next_ms = t.samples.get(i + 1).map_or(u64::MAX, |n| n.sample.t_ms);
            while let Some(m) = pending.next_if(|m| m.t_ms < next_ms) {
                assert!(table.mark(m), "{m:?} is in order");
                lines.push(Record::Mark(m.clone()));
            }
        }
        assert_eq!(table.finish(), want, "streamed: {:?}", t.marks);

        // Both ways through a file: marks in order (one pass), and marks
        // written last (out of order: a second pass).
        let interleaved: Vec<u8> = lines
            .iter()
            .flat_map(|r| {
                let mut l = serde_json::to_vec(r).unwrap();
                l.push(b'\n');
                l
            })
            .collect();
        for bytes in [interleaved, crate::synth::to_jsonl(&t)] {
            let mut reader = crate::record::trace::TraceReader::new(
                std::io::Cursor::new(bytes),
                std::path::Path::new("t.jsonl"),
            )
            .unwrap();
            let streamed = crate::judge::report::report_stream(&mut reader, None, |_| {}).unwrap();
            assert_eq!(streamed, crate::judge::report::report(&t, None));
        }
    }
}

/// Regression: inside a cgroup the phase rows read the host's free memory
/// and gap (a real MLX run in a 256 MiB cgroup showed "min free 95 %" per
/// phase beside the run's 0 %). They are judged in the scope, as the run.
#[test]
fn inside_a_cgroup_the_phases_are_judged_in_the_scope_as_the_run_is() {
    let mut trace = crate::synth::seed_offload();
    let mib = 1u64 << 20;
    for s in &mut trace.samples {
        s.sample.scope = Some(crate::probe::Scope {
            path: "/job".into(),
            version: 2,
            limit_bytes: 256 * mib,
            usage_bytes: 256 * mib,
            swap_bytes: Some(500 * mib),
            ..Default::default()
        });
    }
    let end = trace.samples.last().unwrap().sample.t_ms;
    trace.marks = starts(&[(0, "load"), (end / 2, "decode")]);
    let r = crate::judge::report::report(&trace, None);
    assert_eq!(r.min_free_pct, 0.0);
    for row in &r.phases {
        assert_eq!(row.min_free_pct, 0.0, "{row:?}");
        // The scope's swap did not grow: its rows say so, not the host's +9.6 GiB.
        assert_eq!(row.swap_growth_bytes, 0, "{row:?}");
    }
}
