use super::*;

/// The units swapsight writes: "GB" is 2^30 bytes (`units::format_bytes`).
const GB: u64 = 1 << 30;

fn host(written: Option<u64>) -> SystemSample {
    SystemSample {
        swap_out_bytes: written,
        ..SystemSample::default()
    }
}

#[test]
fn swap_written_is_the_counters_growth_and_its_rate_per_minute() {
    let mut f = WrittenFold::default();
    f.push(0, &host(Some(100 * GB)), None);
    f.push(60_000, &host(Some(103 * GB)), None);
    f.push(240_000, &host(Some(112 * GB + 2 * GB / 5)), None);
    let w = f.finish().unwrap();
    assert_eq!(w.bytes, 12 * GB + 2 * GB / 5);
    assert_eq!(w.span_ms, 240_000);
    assert!(
        (w.per_minute() - 3.1 * GB as f64).abs() < 2.0,
        "{}",
        w.per_minute()
    );
    assert_eq!(w.to_words(), "12.4 GiB, 3.1 GiB/min (the whole machine's)");
}

#[test]
fn a_counter_that_went_back_counts_from_its_new_value_and_none_is_no_figure() {
    let mut f = WrittenFold::default();
    assert_eq!(f.finish(), None, "no sample carried the counter");
    f.push(0, &host(None), None);
    assert_eq!(f.finish(), None);
    f.push(1000, &host(Some(5 * GB)), None);
    f.push(2000, &host(Some(6 * GB)), None);
    f.push(3000, &host(Some(GB)), None);
    f.push(4000, &host(Some(2 * GB)), None);
    assert_eq!(f.finish().unwrap().bytes, 2 * GB);
    // Far past u64: saturates, never wraps.
    f.push(5000, &host(Some(u64::MAX)), None);
    assert_eq!(f.finish().unwrap().bytes, u64::MAX - 2 * GB + 2 * GB);
}

#[test]
fn inside_a_cgroup_that_counts_swap_out_the_scopes_counter_is_the_runs() {
    let scope = |w| Scope {
        swap_out_bytes: w,
        ..Scope::default()
    };
    let mut f = WrittenFold::default();
    f.push(0, &host(Some(50 * GB)), Some(&scope(Some(0))));
    f.push(1000, &host(Some(80 * GB)), Some(&scope(Some(GB))));
    let w = f.finish().unwrap();
    assert_eq!(w.bytes, GB, "the host's 30 GiB are not the run's");
    assert!(!w.host_wide);
    assert_eq!(w.to_words(), "1.0 GiB, 60.0 GiB/min");
}

#[test]
fn written_today_starts_again_at_midnight_and_after_a_reboot() {
    let mut d = Daily::default();
    assert_eq!(d.push(20_000, None), None, "nothing known yet");
    assert_eq!(d.push(20_000, Some(10 * GB)), Some(0));
    assert_eq!(d.push(20_000, Some(13 * GB)), Some(3 * GB));
    // Past midnight: what was written yesterday is not today's.
    assert_eq!(d.push(20_001, Some(14 * GB)), Some(GB));
    // A reboot: the counter starts again near 0.
    assert_eq!(d.push(20_001, Some(GB / 2)), Some(GB));
    assert_eq!(d.push(20_001, Some(GB)), Some(GB + GB / 2));
    // A sample without the counter keeps today's figure unknown, not 0.
    assert_eq!(d.push(20_001, None), None);
    assert_eq!(d.push(20_001, Some(2 * GB)), Some(2 * GB + GB / 2));
}

fn scoped(path: &str, written: Option<u64>) -> Scope {
    Scope {
        path: path.into(),
        version: 2,
        swap_out_bytes: written,
        ..Scope::default()
    }
}

#[test]
fn a_scope_that_goes_away_starts_a_new_baseline_on_the_hosts_counter() {
    // Five samples in a cgroup counting its own swap-out at 1 GiB, then the
    // probe drops the scope (its limit lifted): the host's counter, flat
    // at 500 GiB, is no swap written. Before, this read 499.0 GiB.
    let mut f = WrittenFold::default();
    for i in 0..5 {
        f.push(
            i * 1000,
            &host(Some(500 * GB)),
            Some(&scoped("/a", Some(GB))),
        );
    }
    for i in 5..10 {
        f.push(i * 1000, &host(Some(500 * GB)), None);
    }
    let w = f.finish().unwrap();
    assert_eq!(w.bytes, 0, "{}", w.to_words());
    assert_eq!(w.counters, 2);
    assert!(w.host_wide, "part of the run was counted on the host");
    assert!(
        w.to_words().contains("added up from 2 counters"),
        "{}",
        w.to_words()
    );
}

#[test]
fn a_move_to_another_cgroup_counts_each_counters_own_growth() {
    // /a wrote 1 GiB, then the run moved to /b (its counter at 300 GiB) and
    // wrote 2 GiB there: 3 GiB, not the 299 GiB between the two counters.
    let mut f = WrittenFold::default();
    f.push(0, &host(Some(900 * GB)), Some(&scoped("/a", Some(0))));
    f.push(1000, &host(Some(900 * GB)), Some(&scoped("/a", Some(GB))));
    f.push(
        2000,
        &host(Some(900 * GB)),
        Some(&scoped("/b", Some(300 * GB))),
    );
    f.push(
        3000,
        &host(Some(900 * GB)),
        Some(&scoped("/b", Some(302 * GB))),
    );
    let w = f.finish().unwrap();
    assert_eq!(w.bytes, 3 * GB);
    assert_eq!(w.counters, 2);
    assert!(!w.host_wide);
    assert_eq!(w.span_ms, 3000);
    // Back to /a: a third baseline, even though /a was seen before (its
    // counter went on while the run was elsewhere).
    f.push(
        4000,
        &host(Some(900 * GB)),
        Some(&scoped("/a", Some(5 * GB))),
    );
    f.push(
        5000,
        &host(Some(900 * GB)),
        Some(&scoped("/a", Some(6 * GB))),
    );
    let w = f.finish().unwrap();
    assert_eq!((w.bytes, w.counters), (4 * GB, 3));
}

#[test]
fn one_counter_is_said_as_before_and_its_json_has_no_counters_field() {
    let mut f = WrittenFold::default();
    f.push(0, &host(Some(GB)), Some(&scoped("/a", Some(0))));
    f.push(60_000, &host(Some(GB)), Some(&scoped("/a", Some(GB))));
    let w = f.finish().unwrap();
    assert_eq!(w.counters, 1);
    assert_eq!(w.to_words(), "1.0 GiB, 1.0 GiB/min");
    let json = serde_json::to_value(w).unwrap();
    assert!(json.get("counters").is_none(), "{json}");
}

#[test]
fn a_clock_set_back_a_day_keeps_todays_figure() {
    let mut d = Daily::default();
    assert_eq!(d.push(20_001, Some(10 * GB)), Some(0));
    assert_eq!(d.push(20_001, Some(13 * GB)), Some(3 * GB));
    // The clock or the time zone goes back into yesterday: still today.
    assert_eq!(d.push(20_000, Some(14 * GB)), Some(4 * GB));
    assert_eq!(d.push(20_001, Some(15 * GB)), Some(5 * GB));
    // The next day starts from 0 as before.
    assert_eq!(d.push(20_002, Some(16 * GB)), Some(GB));
}
