use super::*;
use crate::probe::scripted::ScriptedProbe;

fn sampler(history: usize) -> Sampler {
    Sampler::spawn(
        Box::new(ScriptedProbe::false_fit()),
        SamplerConfig {
            interval: Duration::from_millis(20),
            history,
            ..SamplerConfig::default()
        },
    )
}

#[test]
fn ring_buffer_is_bounded_and_ticks_carry_real_time() {
    let s = sampler(5);
    let rx = s.subscribe(100);
    let ticks: Vec<_> = rx.iter().take(12).collect();
    assert_eq!(s.recent().len(), 5);
    for w in ticks.windows(2) {
        let dt = w[1].sample.t_ms - w[0].sample.t_ms;
        assert!((10..=200).contains(&dt), "tick spacing {dt} ms");
    }
    assert_eq!(
        s.latest().unwrap().sample.t_ms,
        s.recent().last().unwrap().sample.t_ms
    );
    s.stop().unwrap();
}

#[test]
fn an_interval_past_the_end_of_the_clock_gives_one_tick_and_no_panic() {
    let s = Sampler::spawn(
        Box::new(ScriptedProbe::false_fit()),
        SamplerConfig {
            interval: Duration::MAX,
            history: 4,
            ..SamplerConfig::default()
        },
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.latest().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    // The first tick is at the start (a few ms in on a loaded machine).
    let first = s.latest().map(|t| t.sample.t_ms);
    assert!(first.is_some_and(|t| t < 1_000), "first tick at {first:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(s.recent().len(), 1);
    // Still serving commands: it did not panic computing the next deadline.
    assert!(!s.thread.as_ref().unwrap().is_finished());
    s.stop().unwrap();
}

#[test]
fn a_subscriber_that_never_reads_does_not_stall_the_others() {
    let s = sampler(2);
    let _stalled = s.subscribe(1);
    let rx = s.subscribe(100);
    assert_eq!(rx.iter().take(10).count(), 10);
}

#[test]
fn the_detector_runs_on_the_sampler_thread() {
    let s = sampler(2);
    let rx = s.subscribe(200);
    let flagged = rx.iter().take(150).any(|t| {
        t.flags
            .iter()
            .any(|f| f.pid == 7 && f.state == crate::step::detect::State::FalseFit)
    });
    assert!(flagged);
    // Dropping the handle stops the thread; the channel then ends.
    drop(s);
    assert!(rx.iter().count() < 300);
}

#[test]
fn a_shorter_interval_brings_a_tick_at_once_and_a_longer_one_spaces_them() {
    let s = Sampler::spawn(
        Box::new(ScriptedProbe::false_fit()),
        SamplerConfig {
            interval: Duration::from_secs(3600),
            history: 4,
            ..SamplerConfig::default()
        },
    );
    let rx = s.subscribe(100);
    // The first tick comes at once, possibly before the subscription
    // reached the sampler (then only the ring has it): waiting for it on
    // `rx` failed the test on a busy machine.
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while s.latest().is_none() {
        assert!(std::time::Instant::now() < until, "the first tick");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Its copy on `rx`, if it has one, is sent just after the ring's.
    let _ = rx.recv_timeout(Duration::from_millis(100));
    // An hour to the next one, unless the interval shortens.
    s.pacer().set_interval(Duration::from_millis(20));
    rx.recv_timeout(Duration::from_secs(5))
        .expect("a tick at once after the interval shortened");
    s.pacer().set_interval(Duration::from_millis(200));
    // Ticks of the 20 ms pace may already wait in the channel (a loaded
    // machine can keep this thread off the CPU for a while): drop them.
    std::thread::sleep(Duration::from_millis(60));
    while rx.try_recv().is_ok() {}
    let t: Vec<u64> = rx.iter().take(4).map(|t| t.sample.t_ms).collect();
    let gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    // Deadlines are absolute, so one late wake can shorten the next gap;
    // two in a row at 20 ms spacing cannot add up to 200 ms.
    assert!(gaps.iter().sum::<u64>() >= 2 * 200, "gaps {gaps:?}");
    s.stop().unwrap();
}

#[test]
fn the_watched_roots_scope_rides_each_tick() {
    let probe = ScriptedProbe::false_fit().with_scope(|pid, n| {
        Ok((pid == 7).then(|| crate::probe::Scope {
            path: "/job".into(),
            version: 2,
            limit_bytes: 256 << 20,
            usage_bytes: n << 20,
            ..Default::default()
        }))
    });
    let s = Sampler::spawn(
        Box::new(probe),
        SamplerConfig {
            interval: Duration::from_millis(20),
            watch: Some(7),
            ..SamplerConfig::default()
        },
    );
    let ticks: Vec<_> = s.subscribe(100).iter().take(3).collect();
    for t in &ticks {
        let scope = t.sample.scope.as_ref().expect("the root's scope");
        assert_eq!(scope.limit_bytes, 256 << 20);
        assert!(t.scope_note.is_none());
    }
    s.stop().unwrap();
}

#[test]
fn an_unreadable_scope_is_the_host_said_once() {
    // ScopeWatch itself: a sampler's first tick may come before a
    // subscriber is in, so the tick that says it is not always seen there.
    let mut probe = ScriptedProbe::false_fit().with_scope(|_, _| {
        Err(ProbeError::Io {
            what: "/sys/fs/cgroup/user.slice/memory.max".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        })
    });
    let mut watch = ScopeWatch::default();
    let reads: Vec<_> = (0..5).map(|_| watch.read(&mut probe, Some(7))).collect();
    assert!(reads.iter().all(|(scope, _)| scope.is_none()), "the host");
    let notes: Vec<_> = reads.iter().filter_map(|(_, note)| note.clone()).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("pid 7"), "{}", notes[0]);
    assert!(notes[0].contains("memory.max"), "{}", notes[0]);
    assert!(
        notes[0].contains("judging against the host"),
        "{}",
        notes[0]
    );
}
