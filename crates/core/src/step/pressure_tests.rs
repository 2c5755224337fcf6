use super::*;

fn psi(some10: f64, full10: f64) -> Pressure {
    Pressure {
        some: Some(PsiLine {
            avg10: some10,
            ..PsiLine::default()
        }),
        full: Some(PsiLine {
            avg10: full10,
            ..PsiLine::default()
        }),
        ..Pressure::default()
    }
}

fn quick() -> PressureConfig {
    PressureConfig {
        hold_ms: 2_000,
        clear_ms: 2_000,
        ..PressureConfig::default()
    }
}

#[test]
fn raw_level_follows_the_documented_thresholds() {
    let cfg = PressureConfig::default();
    assert_eq!(cfg.raw_level(&psi(9.99, 0.0)), Level::Normal);
    assert_eq!(cfg.raw_level(&psi(10.0, 0.0)), Level::Warning);
    assert_eq!(cfg.raw_level(&psi(40.0, 0.0)), Level::Critical);
    assert_eq!(cfg.raw_level(&psi(20.0, 60.0)), Level::Critical);
    assert_eq!(cfg.raw_level(&psi(20.0, 59.0)), Level::Warning);
}

#[test]
fn no_pressure_figures_is_no_level_not_normal() {
    let mut g = PressureGauge::new(quick());
    assert_eq!(g.step(0, None), None);
    assert_eq!(g.step(500, Some(&Pressure::default())), None);
}

#[test]
fn a_level_is_raised_only_after_it_held() {
    let mut g = PressureGauge::new(quick());
    let mut seen = Vec::new();
    for i in 0..10 {
        seen.push(g.step(i * 500, Some(&psi(15.0, 0.0))).unwrap());
    }
    // held from 0: raised at 2000 ms (the fifth tick)
    assert_eq!(seen[..4], [Level::Normal; 4]);
    assert_eq!(seen[4..], [Level::Warning; 6]);
}

#[test]
fn a_short_spike_is_not_a_level() {
    let mut g = PressureGauge::new(quick());
    for i in 0..40 {
        // one tick in four over the critical line
        let some = if i % 4 == 0 { 50.0 } else { 1.0 };
        assert_eq!(g.step(i * 500, Some(&psi(some, 0.0))), Some(Level::Normal));
    }
}

#[test]
fn hovering_at_the_threshold_does_not_flap() {
    let mut g = PressureGauge::new(quick());
    let mut changes = 0;
    let mut last = Level::Normal;
    for i in 0..200u64 {
        // sustained above for 3 s, then hovering 9.9 / 10.1 tick by tick
        let some = if i < 6 {
            12.0
        } else if i % 2 == 0 {
            9.9
        } else {
            10.1
        };
        let level = g.step(i * 500, Some(&psi(some, 0.0))).unwrap();
        if level != last {
            changes += 1;
            last = level;
        }
    }
    assert_eq!(changes, 1, "raised once, never cleared while hovering");
    assert_eq!(last, Level::Warning);
}

#[test]
fn a_level_clears_after_calm_and_steps_down() {
    let mut g = PressureGauge::new(quick());
    let mut t = 0;
    let mut at = |g: &mut PressureGauge, some: f64, secs: u64| {
        let mut l = Level::Normal;
        for _ in 0..secs * 2 {
            l = g.step(t, Some(&psi(some, 0.0))).unwrap();
            t += 500;
        }
        l
    };
    assert_eq!(at(&mut g, 45.0, 3), Level::Critical);
    assert_eq!(at(&mut g, 15.0, 1), Level::Critical, "not cleared yet");
    assert_eq!(at(&mut g, 15.0, 2), Level::Warning, "one step down");
    assert_eq!(at(&mut g, 0.0, 3), Level::Normal);
}

#[test]
fn the_macos_kernel_level_is_taken_as_is() {
    let mut g = PressureGauge::new(PressureConfig::default());
    let p = Pressure {
        kernel_level: Some(Level::Critical),
        ..Pressure::default()
    };
    assert_eq!(g.step(0, Some(&p)), Some(Level::Critical));
}

#[test]
fn level_names_parse_and_print() {
    for l in Level::ALL {
        assert_eq!(l.as_str().parse::<Level>(), Ok(l));
    }
    let err = "warn".parse::<Level>().unwrap_err();
    assert!(err.contains("'warn'"), "{err}");
    assert_eq!(
        serde_json::to_string(&Level::Warning).unwrap(),
        "\"warning\""
    );
}

#[test]
fn a_fold_counts_time_at_each_level_and_the_stall() {
    let mut fold = PressureFold::new(quick());
    let at = |some10: f64, total_us: u64, level: Level| Pressure {
        some: Some(PsiLine {
            avg10: some10,
            avg60: 0.0,
            total_us,
        }),
        level: Some(level),
        ..Pressure::default()
    };
    fold.push(0, Some(&at(1.0, 1_000_000, Level::Normal)), None);
    fold.push(1000, Some(&at(12.0, 1_200_000, Level::Normal)), None);
    fold.push(3000, Some(&at(15.0, 1_700_000, Level::Warning)), None);
    fold.push(3500, Some(&at(45.0, 2_000_000, Level::Critical)), None);
    let s = fold.finish().unwrap();
    assert_eq!(s.levels.peak, Level::Critical);
    assert_eq!(
        (
            s.levels.normal_ms,
            s.levels.warning_ms,
            s.levels.critical_ms
        ),
        (1000, 2000, 500)
    );
    assert_eq!(s.some_avg10_peak, Some(45.0));
    assert_eq!(s.some_stall_ms, Some(1000));
    assert_eq!(s.full_avg10_peak, None);
}

#[test]
fn a_fold_without_pressure_is_none_and_old_traces_are_derived() {
    assert_eq!(PressureFold::default().finish(), None);
    let mut fold = PressureFold::new(quick());
    for i in 0..10 {
        fold.push(i * 500, None, None);
    }
    assert_eq!(fold.finish(), None);
    // PSI recorded without a level (an older writer): derived again
    let mut fold = PressureFold::new(quick());
    for i in 0..10 {
        fold.push(i * 500, Some(&psi(15.0, 0.0)), None);
    }
    let s = fold.finish().unwrap();
    assert_eq!(s.levels.peak, Level::Warning);
    assert_eq!((s.levels.normal_ms, s.levels.warning_ms), (1500, 3000));
}

#[test]
fn thresholds_with_warning_at_or_above_critical_are_a_problem() {
    let cfg = |warn, critical| PressureConfig {
        warn_some_avg10: warn,
        critical_some_avg10: critical,
        ..PressureConfig::default()
    };
    assert_eq!(PressureConfig::default().problem(), None);
    assert_eq!(cfg(5.0, 20.0).problem(), None);
    assert_eq!(
        cfg(50.0, 40.0).problem().as_deref(),
        Some("--pressure-warn 50 must be below --pressure-critical 40")
    );
    assert!(cfg(40.0, 40.0).problem().is_some());
}

/// Regression: merged dispatch flags (warning, then back to normal, before
/// the handler ran) were read as the highest, warning, though the machine
/// was calm again; the kernel's level now is the latest of them.
#[test]
fn merged_dispatch_flags_take_the_latest_level_not_the_highest() {
    let never = || -> Option<Level> { panic!("one flag needs no second look") };
    assert_eq!(Level::from_dispatch_data(0x2, never), Some(Level::Warning));
    assert_eq!(Level::from_dispatch_data(0x10, never), None);
    assert_eq!(
        Level::from_dispatch_data(0x2 | 0x1, || Some(Level::Normal)),
        Some(Level::Normal)
    );
    assert_eq!(
        Level::from_dispatch_data(0x4 | 0x2, || Some(Level::Warning)),
        Some(Level::Warning)
    );
    // The kernel's level unreadable: the highest, as before.
    assert_eq!(
        Level::from_dispatch_data(0x4 | 0x1, || None),
        Some(Level::Critical)
    );
}

/// Regression (issue 32, one rule for the level): a trace without a
/// recorded level had its level derived from the host's PSI alone, while
/// the live monitor takes the worse of the host's and the scope's. A job
/// stalling inside its cgroup on a calm host is under pressure in both.
#[test]
fn a_derived_level_is_the_worse_of_the_host_and_the_scope_as_live() {
    let calm = psi(0.5, 0.0);
    let stalled = psi(15.0, 0.0);
    let mut fold = PressureFold::new(quick());
    let mut live = LevelInForce::new(quick());
    let mut in_force = Vec::new();
    for i in 0..10 {
        fold.push(i * 500, Some(&calm), Some(&stalled));
        in_force.push(live.step(i * 500, Some(&calm), Some(&stalled)).0);
    }
    let s = fold.finish().unwrap();
    assert_eq!(s.levels.peak, Level::Warning, "{s:?}");
    assert_eq!(in_force.last(), Some(&Some(Level::Warning)));
    // The host's alone stays normal.
    let mut host_only = PressureFold::new(quick());
    for i in 0..10 {
        host_only.push(i * 500, Some(&calm), None);
    }
    assert_eq!(host_only.finish().unwrap().levels.peak, Level::Normal);
}
