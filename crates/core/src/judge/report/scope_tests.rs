use super::*;
use crate::probe::ScopeEvents;

fn scope(usage_mib: u64, swap_mib: u64, max: u64, oom_kill: u64) -> Scope {
    Scope {
        path: "/job".into(),
        version: 2,
        limit_bytes: 256 << 20,
        usage_bytes: usage_mib << 20,
        swap_bytes: Some(swap_mib << 20),
        events: ScopeEvents {
            max: Some(max),
            oom_kill: Some(oom_kill),
            ..ScopeEvents::default()
        },
        ..Scope::default()
    }
}

#[test]
fn no_scope_in_any_sample_is_no_summary() {
    let mut f = ScopeFold::default();
    f.note(None, 0);
    assert_eq!(f.finish(), None);
}

#[test]
fn peaks_and_the_events_of_the_run_are_kept() {
    let mut f = ScopeFold::default();
    // Counters from before the run are not the run's.
    f.note(Some(&scope(100, 0, 40, 2)), 0);
    f.note(Some(&scope(256, 300, 90, 2)), 500);
    f.note(Some(&scope(200, 200, 95, 3)), 1000);
    f.note(None, 1500);
    let s = f.finish().unwrap();
    assert_eq!(s.peak_usage_bytes, 256 << 20);
    assert_eq!(s.peak_swap_bytes, Some(300 << 20));
    assert_eq!(s.limit_hits, 55);
    assert_eq!(s.oom_kills, 1);
    assert_eq!(s.first_oom_kill_ms, Some(1000));
    assert_eq!(s.samples, 3);
    assert_eq!(s.inside(), "inside a 256 MiB cgroup limit");
    let text = s.to_text();
    assert!(
        text.contains("ended by: the cgroup's OOM killer (1 process killed at 1.0s)"),
        "{text}"
    );
    assert!(text.contains("no swap limit of its own"), "{text}");
}

#[test]
fn a_run_without_an_oom_kill_says_nothing_of_one() {
    let mut f = ScopeFold::default();
    f.note(Some(&scope(100, 0, 0, 0)), 0);
    f.note(Some(&scope(250, 10, 3, 0)), 500);
    let s = f.finish().unwrap();
    assert_eq!((s.oom_kills, s.first_oom_kill_ms), (0, None));
    assert!(!s.to_text().contains("ended by"));
}

#[test]
fn an_oom_kill_seen_after_the_samples_ended_the_run() {
    let mut f = ScopeFold::default();
    f.note(Some(&scope(250, 0, 10, 0)), 0);
    f.note(Some(&scope(256, 0, 90, 0)), 500);
    f.note_oom_event(700);
    let s = f.finish().unwrap();
    assert_eq!((s.oom_kills, s.first_oom_kill_ms), (1, Some(700)));
    // Without a scope in any sample there is no scope to have killed.
    let mut f = ScopeFold::default();
    f.note_oom_event(700);
    assert_eq!(f.finish(), None);
}

#[test]
fn the_scopes_own_pressure_peak_is_kept_and_said() {
    use crate::step::pressure::{Level, Pressure, PsiLine};
    let with = |level: Level, some10: f64| Scope {
        pressure: Some(Pressure {
            some: Some(PsiLine {
                avg10: some10,
                ..PsiLine::default()
            }),
            level: Some(level),
            ..Pressure::default()
        }),
        ..scope(100, 0, 0, 0)
    };
    let mut f = ScopeFold::default();
    f.note(Some(&with(Level::Normal, 3.0)), 0);
    f.note(Some(&with(Level::Critical, 52.5)), 500);
    f.note(Some(&with(Level::Warning, 20.0)), 1000);
    let s = f.finish().unwrap();
    assert_eq!(s.peak_pressure, Some(Level::Critical));
    assert_eq!(s.pressure_some_avg10_peak, Some(52.5));
    assert!(
        s.to_text()
            .contains("its own pressure peaked at critical (PSI some avg10 up to 52.5 %)"),
        "{}",
        s.to_text()
    );
    // A v1 scope (no memory.pressure): nothing said.
    let mut f = ScopeFold::default();
    f.note(Some(&scope(100, 0, 0, 0)), 0);
    let s = f.finish().unwrap();
    assert_eq!(s.peak_pressure, None);
    assert!(!s.to_text().contains("pressure"), "{}", s.to_text());
}

/// Regression: a process that joined cgroup A (256 MiB), filled 225 MiB,
/// freed it, moved to B and exited was reported as B with A's peak ("…/advB:
/// usage peaked at 226 MiB"), and "free memory at least 100 %". Each cgroup
/// is listed with its own figures, the run judged in the worst, and its
/// lowest free memory kept across the move.
#[test]
fn a_run_that_moves_between_cgroups_lists_each_with_its_own_figures() {
    use crate::record::trace::{Header, Mark, Trace, TraceSample};
    const MIB: u64 = 1 << 20;
    let in_cgroup = |path: &str, limit_mib: u64, usage_mib: u64| Scope {
        path: path.into(),
        version: 2,
        limit_bytes: limit_mib * MIB,
        usage_bytes: usage_mib * MIB,
        swap_bytes: Some(0),
        ..Scope::default()
    };
    let sample = |t_ms: u64, sc: Scope| TraceSample {
        sample: crate::probe::Sample {
            t_ms,
            system: crate::probe::SystemSample {
                phys_bytes: 16 << 30,
                free_pct: 60.0,
                ..Default::default()
            },
            processes: vec![crate::probe::ProcessSample {
                pid: 9,
                name: "adv".into(),
                footprint_bytes: sc.usage_bytes,
                ..Default::default()
            }],
            scope: Some(sc),
        },
        watched: vec![9],
        forecast: None,
    };
    let mut header = Header::new(crate::probe::HostInfo::default(), 500, 0);
    header.watch_pid = Some(9);
    let t = Trace {
        header: Some(header),
        samples: vec![
            sample(0, in_cgroup("/advA", 256, 10)),
            sample(500, in_cgroup("/advA", 256, 225)),
            sample(1000, in_cgroup("/advA", 256, 12)),
            sample(1500, in_cgroup("/advB", 1024, 5)),
            sample(2000, in_cgroup("/advB", 1024, 4)),
        ],
        marks: Vec::<Mark>::new(),
        ..Trace::default()
    };
    let r = crate::judge::report::report(&t, None);
    let paths: Vec<(&str, u64)> = r
        .scopes
        .iter()
        .map(|s| (s.path.as_str(), s.peak_usage_bytes / MIB))
        .collect();
    assert_eq!(paths, [("/advA", 225), ("/advB", 5)]);
    assert_eq!(r.scopes[0].samples + r.scopes[1].samples, 5);
    assert_eq!(
        r.scope.as_ref().unwrap().path,
        "/advA",
        "judged in the worst"
    );
    assert!(r.min_free_pct < 13.0, "free at least {}", r.min_free_pct);
    let text = r.to_text();
    assert!(text.contains("the run moved between 2 cgroups"), "{text}");
    assert!(
        text.contains("/advA): usage peaked at 225 MiB")
            && text.contains("/advB): usage peaked at 5 MiB"),
        "{text}"
    );
}
