use super::*;

fn mark(t_ms: u64, name: &str, end: bool) -> Mark {
    Mark {
        t_ms,
        name: name.into(),
        end,
    }
}

#[test]
fn marks_make_spans_closed_by_the_next_mark_or_an_end() {
    let m = [
        mark(0, "load", false),
        mark(5_000, "encode", false),
        mark(9_000, "encode", true),
        mark(12_000, "decode", false),
    ];
    let s = spans(&m, 20_000);
    let got: Vec<(&str, u64, u64)> = s
        .iter()
        .map(|p| (p.name.as_str(), p.start_ms, p.end_ms))
        .collect();
    assert_eq!(
        got,
        [
            ("load", 0, 5_000),
            ("encode", 5_000, 9_000),
            ("decode", 12_000, 20_000)
        ]
    );
    assert_eq!(phase_at(&s, 10_000), None);
    assert_eq!(phase_at(&s, 5_000).map(|p| p.name.as_str()), Some("encode"));
    assert!(spans(&[], 10).is_empty());
    // Out of order and after the last sample: sorted, never negative.
    let s = spans(&[mark(30, "b", false), mark(10, "a", false)], 20);
    assert_eq!((s[0].end_ms, s[1].start_ms, s[1].end_ms), (30, 30, 30));
}

#[test]
fn the_live_log_keeps_the_recent_phases_and_the_one_under_way() {
    let mut log = PhaseLog::default();
    assert_eq!(log.current(), None);
    log.start("load", 0);
    log.start("work", 1_000);
    assert_eq!(log.current(), Some("work"));
    log.end(3_000);
    log.end(4_000);
    assert_eq!(log.current(), None);
    log.start("tidy", 5_000);
    let r = log.recent(2_000, 6_000);
    let got: Vec<(&str, u64, u64)> = r
        .iter()
        .map(|p| (p.name.as_str(), p.start_ms, p.end_ms))
        .collect();
    assert_eq!(got, [("work", 1_000, 3_000), ("tidy", 5_000, 6_000)]);
    for i in 0..PhaseLog::KEPT as u64 + 50 {
        log.start("x", 10_000 + i);
    }
    assert_eq!(log.recent(0, u64::MAX).len(), PhaseLog::KEPT + 1);
}
