use super::*;

const MIB: f64 = (1u64 << 20) as f64;
const GIB: u64 = 1 << 30;

/// A Linux-like system sample: 16 GiB, 8 GiB of swap, `swap_mib` in use and
/// `free_mib` free.
fn sys(swap_mib: f64, free_mib: f64) -> SystemSample {
    let phys = 16 * GIB;
    SystemSample {
        phys_bytes: phys,
        free_pct: free_mib * MIB / phys as f64 * 100.0,
        swap_used_bytes: (swap_mib.max(0.0) * MIB) as u64,
        swap_total_bytes: 8 * GIB,
        ..SystemSample::default()
    }
}

fn budget(mib: u64) -> ForecastConfig {
    ForecastConfig {
        swap_budget_bytes: Some(mib << 20),
        ..ForecastConfig::default()
    }
}

/// Runs `swap(t_s)` every 500 ms for `secs`; (t_s, forecast, fired) per
/// tick. Free memory stays at 8 GiB.
fn run(
    cfg: ForecastConfig,
    secs: f64,
    swap: impl Fn(f64) -> f64,
) -> Vec<(f64, Forecast, Vec<Limit>)> {
    let mut f = Forecaster::new(cfg);
    let mut out = Vec::new();
    let mut t_ms = 0u64;
    while (t_ms as f64) <= secs * 1000.0 {
        let t = t_ms as f64 / 1000.0;
        let (fc, fired) = f.step(t_ms, &sys(swap(t), 8192.0));
        out.push((t, fc, fired));
        t_ms += 500;
    }
    out
}

/// Deterministic noise in [-1, 1]: splitmix64 of `i` (no dependency, the
/// same every run).
fn noise(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

#[test]
fn a_linear_ramp_is_forecast_to_the_budget() {
    // 20 MiB/s from 100 MiB: the 512 MiB budget (612 MiB in use) at 25.6 s
    let ticks = run(budget(512), 24.0, |t| 100.0 + 20.0 * t);
    let first = ticks
        .iter()
        .find(|(_, f, _)| f.swap_budget_s.is_some())
        .unwrap();
    assert!(first.0 <= 4.0, "rising only after {} s", first.0);
    for (t, f, _) in ticks.iter().filter(|(t, ..)| *t >= 4.0) {
        let truth = 25.6 - t;
        let est = f.swap_budget_s.unwrap();
        assert!(
            (est - truth).abs() < 0.05 * truth,
            "at {t}: {est} vs {truth}"
        );
    }
    // fired once (the default horizon is 5 min)
    let fired: Vec<_> = ticks.iter().flat_map(|(_, _, l)| l.clone()).collect();
    assert_eq!(
        fired,
        [Limit::SwapBudget],
        "swap-full is 380 s away: over the horizon"
    );
    let full = ticks.last().unwrap().1.swap_full_s.unwrap();
    assert!((full - (8192.0 - 580.0) / 20.0).abs() < 1.0, "{full}");
    assert_eq!(
        ticks.last().unwrap().1.free_floor_s,
        None,
        "free memory is flat"
    );
}

#[test]
fn one_burst_alone_is_not_a_trend() {
    // flat at 300 MiB, one 400 MiB burst at 10 s, flat after
    let ticks = run(budget(512), 40.0, |t| if t < 10.0 { 300.0 } else { 700.0 });
    assert!(ticks
        .iter()
        .all(|(_, f, fired)| f.is_empty() && fired.is_empty()));
}

#[test]
fn a_ramp_with_a_burst_stays_forecast_and_recovers() {
    // 20 MiB/s, with a 150 MiB burst at 12 s (7.5 s of the ramp's growth in
    // one interval). The truth after it is the distance left at the true
    // rate. A least-squares line is pulled by a step while the step is in
    // its window (10 s), most when it sits mid-window: the estimate may run
    // short then, never by more than 60 %, and is back within 5 % once the
    // burst has left the window. It never stops forecasting.
    let swap = |t: f64| 100.0 + 20.0 * t + if t >= 12.0 { 150.0 } else { 0.0 };
    let ticks = run(budget(1024), 40.0, swap);
    let mut worst: f64 = 0.0;
    for (t, f, _) in ticks.iter().filter(|(t, ..)| *t >= 4.0) {
        let truth = (1124.0 - swap(*t)) / 20.0;
        if truth < 1.0 {
            continue;
        }
        let est = f.swap_budget_s.unwrap_or_else(|| panic!("lost at {t}"));
        let err = (est - truth).abs() / truth;
        worst = worst.max(err);
        assert!(err <= 0.6, "at {t}: {est} vs {truth}");
        if *t >= 12.0 + 10.5 || *t < 12.0 {
            assert!(err <= 0.05, "at {t}: {est} vs {truth}");
        }
    }
    assert!(worst > 0.2, "the burst did pull the line ({worst})");
}

#[test]
fn a_plateau_is_not_at_this_rate_within_window_and_clear() {
    let swap = |t: f64| 100.0 + 20.0 * t.min(15.0);
    let ticks = run(budget(2048), 60.0, swap);
    assert!(ticks
        .iter()
        .any(|(t, f, _)| *t < 15.0 && f.swap_budget_s.is_some()));
    // the slope halves within the window, then clear_ms more
    let cleared = ticks
        .iter()
        .find(|(t, f, _)| *t > 15.0 && f.swap_budget_s.is_none())
        .unwrap()
        .0;
    assert!(cleared <= 15.0 + 10.0 + 5.0, "cleared at {cleared}");
    assert!(ticks
        .iter()
        .filter(|(t, ..)| *t >= cleared)
        .all(|(_, f, _)| f.is_empty()));
}

#[test]
fn a_fall_is_never_forecast() {
    let ticks = run(budget(64), 30.0, |t| 2000.0 - 30.0 * t);
    assert!(ticks.iter().all(|(_, f, _)| f.is_empty()));
}

#[test]
fn noise_around_a_level_is_never_forecast() {
    let ticks = run(budget(64), 300.0, |t| {
        500.0 + 30.0 * noise((t * 2.0) as u64)
    });
    let hits: Vec<_> = ticks
        .iter()
        .filter(|(_, f, _)| !f.is_empty())
        .map(|(t, ..)| *t)
        .collect();
    assert!(hits.is_empty(), "forecast at {hits:?}");
}

#[test]
fn a_noisy_ramp_is_forecast_within_a_quarter() {
    // ±15 MiB around a 20 MiB/s ramp (1.5 ticks' growth either way)
    let swap = |t: f64| 100.0 + 20.0 * t + 15.0 * noise((t * 2.0) as u64);
    let ticks = run(budget(2048), 90.0, swap);
    for (t, f, _) in ticks.iter().filter(|(t, ..)| *t >= 10.0) {
        let truth = (2148.0 - (100.0 + 20.0 * t)) / 20.0;
        if truth < 5.0 {
            continue;
        }
        let est = f.swap_budget_s.unwrap_or_else(|| panic!("lost at {t}"));
        assert!(
            (est - truth).abs() <= 0.25 * truth,
            "at {t}: {est} vs {truth}"
        );
    }
}

#[test]
fn a_rate_hovering_at_the_threshold_does_not_flap() {
    // per interval alternately 0.8 and 1.3 MiB/s, then 0.55 and 1.0 (mean
    // 1.05 and 0.78 MiB/s: around the 1 MiB/s line), with a little noise
    let mut y = 300.0;
    let mut series = Vec::new();
    for i in 0..600u64 {
        let rate = match (i / 100 % 2, i % 2) {
            (0, 0) => 0.8,
            (0, _) => 1.3,
            (_, 0) => 0.55,
            _ => 1.0,
        };
        y += rate * 0.5 + 0.2 * noise(i);
        series.push(y);
    }
    let ticks = run(budget(100_000), 299.5, |t| series[(t * 2.0) as usize]);
    let changes = ticks
        .windows(2)
        .filter(|w| w[0].1.swap_budget_s.is_some() != w[1].1.swap_budget_s.is_some())
        .count();
    assert!(changes <= 2, "{changes} changes between forecast and not");
}

#[test]
fn a_forecast_hovering_at_the_horizon_fires_once() {
    // horizon 20 s; a ramp that stalls and resumes so the time left
    // hovers around 20 s
    let cfg = ForecastConfig {
        horizon_ms: 20_000,
        ..budget(1024)
    };
    let swap = |t: f64| {
        let active = if t < 20.0 { t } else { 20.0 + (t - 20.0) * 0.2 };
        100.0 + 40.0 * active + 5.0 * noise((t * 2.0) as u64)
    };
    let ticks = run(cfg, 60.0, swap);
    let fired: usize = ticks
        .iter()
        .map(|(_, _, l)| l.iter().filter(|&&l| l == Limit::SwapBudget).count())
        .sum();
    assert_eq!(fired, 1);
}

#[test]
fn free_memory_falling_is_forecast_to_the_floor() {
    // 16 GiB, free falls 50 MiB/s from 4 GiB; the floor is 5 % (819.2 MiB)
    let mut f = Forecaster::new(ForecastConfig::default());
    let mut last = Forecast::default();
    for i in 0..40u64 {
        let t = i as f64 * 0.5;
        last = f.step(i * 500, &sys(0.0, 4096.0 - 50.0 * t)).0;
    }
    let truth = (4096.0 - 50.0 * 19.5 - 819.2) / 50.0;
    let est = last.free_floor_s.unwrap();
    assert!((est - truth).abs() < 0.05 * truth, "{est} vs {truth}");
    assert_eq!(last.swap_budget_s, None, "no budget set");
}

#[test]
fn no_swap_full_where_swap_grows_on_demand() {
    let cfg = ForecastConfig {
        swap_full: false,
        ..budget(512)
    };
    let ticks = run(cfg, 20.0, |t| 100.0 + 20.0 * t);
    assert!(ticks.iter().all(|(_, f, _)| f.swap_full_s.is_none()));
    assert!(ticks.last().unwrap().1.swap_budget_s.is_some());
}

#[test]
fn the_window_stays_bounded_and_the_sums_exact() {
    // 100,000 ticks at 10 ms: the window holds at most its points, and the
    // running sums equal a fit from scratch
    let mut f = Forecaster::new(budget(512));
    for i in 0..100_000u64 {
        f.step(i * 10, &sys(100.0 + (i % 7) as f64, 8192.0));
    }
    let s = &f.swap;
    assert!(s.points.len() <= MAX_POINTS);
    let n = s.points.len() as i128;
    let st: i128 = s.points.iter().map(|p| i128::from(p.0)).sum();
    let sty: i128 = s
        .points
        .iter()
        .map(|p| i128::from(p.0) * i128::from(p.1))
        .sum();
    assert_eq!((s.n, s.st, s.sty), (n, st, sty));
    assert_eq!(s.recent(999_990, 3000).count(), MAX_STEPS + 1);
}

#[test]
fn a_clock_that_does_not_move_changes_nothing() {
    let mut f = Forecaster::new(budget(512));
    f.step(1000, &sys(100.0, 8192.0));
    f.step(1000, &sys(900.0, 8192.0));
    assert_eq!(f.swap.points.len(), 1);
}

#[test]
fn etas_read_short() {
    assert_eq!(describe(Limit::SwapBudget, 40.2), "swap budget in ~40 s");
    assert_eq!(
        describe(Limit::FreeFloor, 185.0),
        "free memory floor in ~3 min"
    );
    assert_eq!(short_eta(0.3), "now");
    assert_eq!(short_eta(f64::INFINITY), "a long while");
}

#[test]
fn a_replay_says_when_it_fired_how_early_and_how_far_off() {
    // 20 MiB/s from 100 MiB, budget 256 MiB (356 in use at 12.8 s); the
    // horizon 10 s: fires once the time left is under 10 s
    let cfg = ForecastConfig {
        horizon_ms: 10_000,
        ..budget(256)
    };
    let mut replay = Replay::new(cfg);
    for i in 0..40u64 {
        let t = i as f64 * 0.5;
        replay.push(i * 500, &sys(100.0 + 20.0 * t, 8192.0));
    }
    let outcomes = replay.finish();
    let o = outcomes
        .iter()
        .find(|o| o.limit == Limit::SwapBudget)
        .unwrap();
    assert_eq!(o.fired_ms, Some(3000), "rising from 3 s, 9.8 s left then");
    assert_eq!(o.reached_ms, Some(13_000));
    assert_eq!(o.lead_s(), Some(10.0));
    let err = o.error().unwrap();
    assert!(err.abs() < 0.05, "{err}");
    assert!(outcomes.iter().all(|o| o.limit != Limit::FreeFloor));
}

#[test]
fn a_limit_reached_without_warning_is_said_so() {
    // one jump past the budget: reached, never fired
    let mut replay = Replay::new(budget(256));
    for i in 0..20u64 {
        let swap = if i < 10 { 100.0 } else { 600.0 };
        replay.push(i * 500, &sys(swap, 8192.0));
    }
    let o = replay.finish()[0];
    assert_eq!(
        (o.limit, o.fired_ms, o.reached_ms),
        (Limit::SwapBudget, None, Some(5000))
    );
    assert_eq!(o.lead_s(), None);
}

/// Steps a forecaster with `cfg` every 500 ms for `secs` through `tick`
/// (given the forecaster, t in ms and in s); the forecaster and the last
/// (t, forecast).
fn drive(
    cfg: ForecastConfig,
    secs: f64,
    mut tick: impl FnMut(&mut Forecaster, u64, f64) -> Forecast,
) -> (Forecaster, (f64, Forecast)) {
    let mut f = Forecaster::new(cfg);
    let mut last = (0.0, Forecast::default());
    let mut t_ms = 0u64;
    while t_ms as f64 <= secs * 1000.0 {
        let t = t_ms as f64 / 1000.0;
        last = (t, tick(&mut f, t_ms, t));
        t_ms += 500;
    }
    (f, last)
}

/// A 1 GiB v2 scope with `usage_mib` charged and `swap_mib` of its own swap.
fn scope(usage_mib: f64, swap_mib: Option<f64>, swap_limit_mib: Option<u64>) -> Scope {
    Scope {
        path: "/job".into(),
        version: 2,
        limit_bytes: GIB,
        usage_bytes: (usage_mib * MIB) as u64,
        swap_bytes: swap_mib.map(|m| (m * MIB) as u64),
        swap_limit_bytes: swap_limit_mib.map(|m| m << 20),
        ..Scope::default()
    }
}

#[test]
fn inside_a_scope_the_budget_is_forecast_on_the_scopes_own_swap() {
    // The host's swap creeps at 0.5 MiB/s (not at this rate); the job's own
    // swap climbs 32 MiB/s from 40 MiB. The guard counts the job's swap
    // (Budget::spent_in): 512 MiB of growth is reached at 16 s.
    let mut f = Forecaster::new(budget(512));
    let mut said = None;
    let mut t_ms = 0u64;
    while t_ms <= 12_000 {
        let t = t_ms as f64 / 1000.0;
        let host = sys(3000.0 + 0.5 * t, 8192.0);
        let sc = scope(900.0, Some(40.0 + 32.0 * t), None);
        let (fc, _) = f.step_in(t_ms, &host, Some(&sc));
        said = fc.swap_budget_s.map(|s| (t, s));
        t_ms += 500;
    }
    let (t, s) = said.expect("the job's swap is rising");
    assert!(
        (t + s - 16.0).abs() < 0.5,
        "at {t} s said {s} s: crossing at {}",
        t + s
    );
    // The host alone: nothing in sight.
    let mut host_only = Forecaster::new(budget(512));
    let mut t_ms = 0u64;
    let mut last = Forecast::default();
    while t_ms <= 12_000 {
        let t = t_ms as f64 / 1000.0;
        last = host_only.step(t_ms, &sys(3000.0 + 0.5 * t, 8192.0)).0;
        t_ms += 500;
    }
    assert_eq!(last.swap_budget_s, None);
}

#[test]
fn inside_a_scope_the_free_floor_and_swap_full_are_the_scopes() {
    // Usage climbs 20 MiB/s in a 1 GiB limit while the host stays free;
    // the job's swap climbs 16 MiB/s towards its own 256 MiB swap limit.
    let cfg = ForecastConfig {
        free_floor_pct: 5.0,
        ..ForecastConfig::default()
    };
    let (f, (t, fc)) = drive(cfg, 10.0, |f, t_ms, t| {
        let sc = scope(300.0 + 20.0 * t, Some(16.0 * t), Some(256));
        f.step_in(t_ms, &sys(3000.0, 8192.0), Some(&sc)).0
    });
    // The floor: 95 % of 1 GiB used, 972.8 MiB, at (972.8 - 300) / 20 s.
    let floor_at = (0.95 * 1024.0 - 300.0) / 20.0;
    let s = fc.free_floor_s.expect("the job's memory is filling");
    assert!((t + s - floor_at).abs() < 0.5, "{} vs {floor_at}", t + s);
    let s = fc.swap_full_s.expect("the job's swap is filling its limit");
    assert!((t + s - 16.0).abs() < 0.5, "{}", t + s);
    assert_eq!(
        f.reached_in(
            &sys(3000.0, 8192.0),
            Some(&scope(1000.0, Some(300.0), Some(256)))
        ),
        [Limit::FreeFloor, Limit::SwapFull]
    );
}

#[test]
fn a_scope_that_may_not_swap_has_no_swap_to_fill() {
    // memory.swap.max 0: the job's swap stays 0 of 0; its usage climbs to
    // its limit, where the OOM killer waits (the free floor's forecast).
    let cfg = ForecastConfig {
        free_floor_pct: 5.0,
        ..ForecastConfig::default()
    };
    let mut replay = Replay::new(cfg);
    for i in 0..=20u64 {
        let t = i as f64 / 2.0;
        let sc = scope(300.0 + 80.0 * t, Some(0.0), Some(0));
        replay.push_in(i * 500, &sys(3000.0, 8192.0), Some(&sc));
    }
    let outcomes = replay.finish();
    assert!(
        outcomes.iter().all(|o| o.limit != Limit::SwapFull),
        "{outcomes:?}"
    );
    let floor = outcomes.iter().find(|o| o.limit == Limit::FreeFloor);
    assert!(
        floor.is_some_and(|o| o.reached_ms.is_some()),
        "{outcomes:?}"
    );
}

#[test]
fn entering_a_scope_starts_its_series_anew() {
    // The host's used memory climbs 50 MiB/s for 8 s (a rise the forecaster
    // takes up), then the command joins its cgroup, whose usage is flat at
    // 800 MiB: a line through both would go on rising towards the job's
    // floor; the job's own series has nothing rising.
    let cfg = ForecastConfig {
        free_floor_pct: 5.0,
        ..ForecastConfig::default()
    };
    let mut f = Forecaster::new(cfg);
    let mut before = Forecast::default();
    for i in 0..=16u64 {
        let t = i as f64 / 2.0;
        before = f.step(i * 500, &sys(100.0, 15384.0 - 50.0 * t)).0;
    }
    assert!(
        before.free_floor_s.is_some(),
        "the host's rise is seen: {before:?}"
    );
    for i in 17..=20u64 {
        let sc = scope(800.0, Some(0.0), None);
        let now = f.step_in(i * 500, &sys(100.0, 15000.0), Some(&sc)).0;
        assert_eq!(now.free_floor_s, None, "at {} ms: {now:?}", i * 500);
    }
}

#[test]
fn on_macos_swap_is_full_when_the_volume_of_the_swap_files_is() {
    // Swap grows 32 MiB/s from 1 GiB while the volume holding the swap files
    // has 2 GiB left at the start (its free space falls as the files grow).
    // swap_full off, as on macOS: the volume is the wall, not the total.
    let cfg = ForecastConfig {
        swap_full: false,
        ..ForecastConfig::default()
    };
    let (_, (t, fc)) = drive(cfg, 10.0, |f, t_ms, t| {
        let mut s = sys(1024.0 + 32.0 * t, 8192.0);
        s.swap_volume_free_bytes = Some(((2048.0 - 32.0 * t) * MIB) as u64);
        f.step(t_ms, &s).0
    });
    let s = fc.swap_full_s.expect("the volume is filling");
    assert!((t + s - 64.0).abs() < 0.5, "full at {} s, not 64 s", t + s);
    // Without the volume's figure and with swap_full off: nothing.
    let mut f = Forecaster::new(ForecastConfig {
        swap_full: false,
        ..ForecastConfig::default()
    });
    let mut none = Forecast::default();
    for i in 0..=20u64 {
        none = f.step(i * 500, &sys(1024.0 + 16.0 * i as f64, 8192.0)).0;
    }
    assert_eq!(none.swap_full_s, None);
}

/// Regression: a 16 GiB Mac with 500 GiB free on its disk was told swap was
/// over an hour from full at 100 MiB/s, the volume's free space; the
/// kernel's compressor pool (4 × 16 GiB, less what it holds) is the wall,
/// about ten minutes away, and the forecast names it.
#[test]
fn on_a_16_gb_mac_with_a_large_disk_swap_is_full_at_the_compressor_pool() {
    use crate::probe::macos::parse::swap_room;
    let cfg = ForecastConfig {
        swap_full: false,
        ..ForecastConfig::default()
    };
    let mac = |t: f64| {
        let mut s = sys(2048.0 + 100.0 * t, 512.0);
        let volume = 500 * GIB - (100.0 * t * MIB) as u64;
        let compressed = 3 * GIB;
        s.compressed_bytes = compressed;
        s.swap_volume_free_bytes = Some(volume);
        s.swap_room = Some(swap_room(
            Some(volume),
            0,
            s.swap_used_bytes,
            compressed,
            16 * GIB,
        ));
        s
    };
    let (_, (t, fc)) = drive(cfg.clone(), 10.0, |f, t_ms, t| f.step(t_ms, &mac(t)).0);
    let s = fc.swap_full_s.expect("swap is filling");
    // 64 GiB pool − 3 GiB compressed − 2 GiB swapped at the start, at
    // 100 MiB/s: 59 × 1024 / 100 = 604 s from t = 0.
    assert!((t + s - 604.2).abs() < 2.0, "full at {} s", t + s);
    assert_eq!(fc.swap_full_wall, Some(SwapWall::Compressor));
    // The same run judged by the volume alone, as before: hours away.
    let (_, (_, by_volume)) = drive(cfg.clone(), 10.0, |f, t_ms, t| {
        let s = SystemSample {
            swap_room: None,
            ..mac(t)
        };
        f.step(t_ms, &s).0
    });
    assert!(by_volume.swap_full_s.unwrap() > 3600.0, "{by_volume:?}");
    assert_eq!(by_volume.swap_full_wall, None);
    // The report's replay keeps the wall beside the forecast.
    let mut replay = Replay::new(ForecastConfig {
        horizon_ms: 900_000,
        ..cfg
    });
    for i in 0..=20u64 {
        replay.push(i * 500, &mac(i as f64 / 2.0));
    }
    let out = replay.finish();
    let full = out.iter().find(|o| o.limit == Limit::SwapFull).unwrap();
    assert_eq!(full.wall, Some(SwapWall::Compressor), "{out:?}");
}

#[test]
fn swap_that_lands_in_steps_is_forecast_as_its_mean_rate() {
    // Swap written behind other I/O lands in steps (a real trace: 35–50 MiB
    // every 1.25 s, nothing between, 32 MiB/s on the whole): most ticks see
    // no growth, yet it climbs as steadily as a ramp. From 100 MiB the
    // 1024 MiB budget (1124 MiB in use) comes with the 26th step, at 32.5 s;
    // the forecast says so within 25 % once its window holds the steps
    // (10 s), to the last 2 s (within a step of it).
    let swap = |t: f64| 100.0 + 40.0 * (t / 1.25).floor();
    let ticks = run(budget(1024), 30.0, swap);
    let first = ticks.iter().find(|(_, f, _)| f.swap_budget_s.is_some());
    let first = first.expect("swap climbing in steps was never forecast").0;
    assert!(first <= 6.0, "forecast only from {first} s");
    for (t, f, _) in ticks.iter().filter(|(t, ..)| (10.0..=30.5).contains(t)) {
        let truth = 32.5 - t;
        let est = f.swap_budget_s.unwrap_or_else(|| panic!("lost at {t}"));
        assert!(
            (est - truth).abs() <= 0.25 * truth,
            "at {t}: {est} vs {truth}"
        );
    }
}

#[test]
fn one_burst_over_two_ticks_is_not_a_trend() {
    // 400 MiB over two ticks (1 s of page-outs), flat before and after.
    let swap = |t: f64| 300.0 + 400.0 * (t - 10.0).clamp(0.0, 1.0);
    let ticks = run(budget(512), 40.0, swap);
    assert!(ticks.iter().all(|(_, f, _)| f.swap_budget_s.is_none()));
}
