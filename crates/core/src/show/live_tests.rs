use super::*;
use crate::step::detect::{State, SystemView};
use std::path::Path;
use std::time::Duration;

fn live(dir: &Path) -> Live {
    Live::scripted(dir)
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swapsight-live-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn flags_the_paging_process_and_notifies_once() {
    let dir = tmp("flag");
    let l = live(&dir);
    let updates = l.subscribe(1000);
    let mut notices = Vec::new();
    let mut flagged_row = None;
    for u in updates.iter().take(150) {
        notices.extend(u.notices.iter().cloned());
        if let Some(r) = u
            .snapshot
            .processes
            .iter()
            .find(|r| r.pid == 7 && r.state == State::FalseFit)
        {
            flagged_row = Some((r.clone(), u.snapshot.title.clone()));
        }
    }
    let (row, title) = flagged_row.expect("pid 7 flagged");
    assert!(row.evidence.contains("false fit"), "{}", row.evidence);
    assert!(row.pageins_per_s > 1000.0, "{row:?}");
    assert!(
        title.starts_with('⇡') && title.ends_with("⚠ false fit"),
        "{title}"
    );
    assert_eq!(
        notices.iter().filter(|n| n.pid == 7).count(),
        1,
        "{notices:?}"
    );
    // p7 is small (7 MiB) yet kept in the table: flagged rows always are.
    let s = l.snapshot().unwrap();
    assert!(s.processes.iter().any(|r| r.pid == 7));
    assert!(s.processes.len() <= 10 + 1);
    assert!(!l.history(Some(1)).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn records_and_replays() {
    let dir = tmp("rec");
    let l = live(&dir);
    l.wait_snapshot(Duration::from_secs(2)).unwrap();
    // pid 0 is no process: refused for every shell alike (issue 24, item 3).
    assert!(matches!(l.pin(Some(0)), Err(LiveError::BadPid)));
    assert!(matches!(l.start_recording(Some(0)), Err(LiveError::BadPid)));
    // Regression (issue 33 item 13): pid 2^31 was taken and written as a
    // negative watch_pid; a pid of no process watched nothing.
    // A pid no process has here (macOS never goes past 99999).
    let unused = (1..PID_MAX_LIMIT)
        .rev()
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    for pid in [1u32 << 31, u32::MAX, PID_MAX_LIMIT + 1, unused] {
        assert!(
            matches!(l.start_recording(Some(pid)), Err(LiveError::NoSuchPid(p)) if p == pid),
            "{pid}"
        );
        assert!(matches!(l.pin(Some(pid)), Err(LiveError::NoSuchPid(_))));
    }
    // The scripted probe's pid 7, and this test's own process (to the OS).
    l.pin(Some(std::process::id())).unwrap();
    l.pin(Some(7)).unwrap();
    let path = l.start_recording(None).unwrap();
    assert!(matches!(
        l.start_recording(None),
        Err(LiveError::AlreadyRecording(_))
    ));
    std::thread::sleep(Duration::from_millis(400));
    let (stopped, samples) = l.stop_recording().unwrap();
    assert_eq!(stopped, path);
    assert!(samples >= 5, "{samples}");
    assert!(matches!(l.stop_recording(), Err(LiveError::NotRecording)));
    assert_eq!(l.last_recording(), Some(path.clone()));
    let r = replay(&path).unwrap();
    assert_eq!(r.points.len() as u64, samples);
    assert_eq!(r.report.samples as u64, samples);
    let t = crate::record::trace::read(&path).unwrap();
    assert_eq!(t.header().watch_pid, Some(7));
    // By name, as a UI asks: the same replay, named rather than pathed.
    let name = crate::record::recordings::file_name(&path);
    let [listed] = &l.recordings().unwrap()[..] else {
        panic!("one recording")
    };
    assert_eq!(listed.name, name);
    let named = l.replay_recording(&name).unwrap();
    assert_eq!(named.path, Path::new(&name));
    assert_eq!(named.points, r.points);
    assert_eq!(l.report_recording(&name).unwrap().samples as u64, samples);
    assert!(matches!(
        l.replay_recording("../x.jsonl"),
        Err(LiveError::Recording(RecordingError::BadName(_)))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn marks_reach_the_recording_the_snapshot_and_the_replay() {
    let dir = tmp("marks");
    let l = live(&dir);
    l.wait_snapshot(Duration::from_secs(2)).unwrap();
    assert_eq!(l.mark_path(), None);
    let path = l.start_recording(None).unwrap();
    let mark = l.mark_path().expect("a mark path while recording");
    crate::record::marks::write_mark(&mark, "warmup").unwrap();
    let updates = l.subscribe(100);
    let phase_seen = updates
        .iter()
        .take(50)
        .find(|u| u.snapshot.phase.as_deref() == Some("warmup"))
        .expect("the snapshot names the phase under way");
    assert_eq!(phase_seen.snapshot.phases.len(), 1);
    assert!(phase_seen.snapshot.phases[0].start_ms <= phase_seen.snapshot.t_ms);
    crate::record::marks::write_mark(&mark, "/").unwrap();
    let ended = updates
        .iter()
        .take(50)
        .find(|u| u.snapshot.phase.is_none())
        .expect("the end mark closes it");
    assert_eq!(ended.snapshot.phases.len(), 1);
    l.stop_recording().unwrap();
    assert_eq!(l.mark_path(), None);
    let r = replay(&path).unwrap();
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["warmup"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_replayed_python_false_fit_on_a_mac_carries_the_mps_advice() {
    let t = crate::synth::seed_offload();
    let r = replay_trace(Path::new("offload.jsonl"), &t);
    let python = r.processes.iter().find(|p| p.pid == 4243).unwrap();
    assert_eq!(python.state, State::FalseFit);
    assert!(
        python
            .evidence
            .contains("export PYTORCH_MPS_LOW_WATERMARK_RATIO="),
        "{}",
        python.evidence
    );
    assert!(r
        .processes
        .iter()
        .filter(|p| p.pid != 4243)
        .all(|p| !p.evidence.contains("PYTORCH_MPS")));
}

/// A replay's chart follows the processes the report names (here the
/// watched python), not the largest processes of each sample as live does:
/// the bystanders, larger than python early on, are not followed.
#[test]
fn a_replay_follows_the_processes_the_report_names() {
    let t = crate::synth::seed_offload();
    let r = replay_trace(Path::new("offload.jsonl"), &t);
    let followed: std::collections::BTreeSet<u32> = r
        .points
        .iter()
        .flat_map(|p| p.footprints.iter().map(|&(pid, _)| pid))
        .collect();
    let named: std::collections::BTreeSet<u32> =
        r.report.processes.iter().map(|p| p.pid).take(8).collect();
    assert!(followed.contains(&4243), "{followed:?}");
    assert_eq!(followed, named);
    let first = &t.samples[0].sample.processes;
    let largest_at_start = first.iter().max_by_key(|p| p.footprint_bytes).unwrap();
    assert!(
        !followed.contains(&largest_at_start.pid),
        "{} ({}) followed",
        largest_at_start.name,
        largest_at_start.pid
    );
}

#[test]
fn titles() {
    let mut v = SystemView::default();
    assert_eq!(title(&v, State::Fits), "");
    v.swap_growth_bytes = 2_254_857_830;
    assert_eq!(title(&v, State::Fits), "⇡2.1G");
    assert_eq!(title(&v, State::FalseFit), "⇡2.1G ⚠ false fit");
    v.swap_growth_bytes = 0;
    assert_eq!(title(&v, State::Overflow), "⚠ overflow");
}

#[test]
fn titles_carry_the_pressure_glyph_and_the_time_to_trouble_when_soon() {
    use crate::step::forecast::Limit;
    use crate::step::pressure::Level;
    use display::full_title;
    let mut v = SystemView::default();
    let soon = 300.0;
    assert_eq!(full_title(&v, State::Fits, None, None, soon), "");
    assert_eq!(
        full_title(&v, State::Fits, Some(Level::Normal), None, soon),
        ""
    );
    assert_eq!(
        full_title(&v, State::Fits, Some(Level::Warning), None, soon),
        "◐"
    );
    let budget = Some((Limit::SwapBudget, 40.2));
    assert_eq!(
        full_title(&v, State::Overflow, Some(Level::Critical), budget, soon),
        "● ⏱40s ⚠ overflow"
    );
    v.swap_growth_bytes = 2_254_857_830;
    assert_eq!(
        full_title(&v, State::FalseFit, Some(Level::Warning), budget, soon),
        "⇡2.1G ◐ ⏱40s ⚠ false fit"
    );
    assert_eq!(
        full_title(&v, State::Fits, None, Some((Limit::FreeFloor, 185.0)), soon),
        "⇡2.1G ⏱3min"
    );
    // Further than the horizon: no time in the title.
    assert_eq!(
        full_title(&v, State::Fits, None, Some((Limit::FreeFloor, 900.0)), soon),
        "⇡2.1G"
    );
}

#[test]
fn pressure_and_forecast_notify_once_as_they_come() {
    use crate::step::forecast::{Forecast, Limit};
    use crate::step::pressure::Level;
    use display::{forecast_notices, pressure_notice};
    assert!(pressure_notice(None, None).is_none());
    assert!(pressure_notice(None, Some(Level::Normal)).is_none());
    let n = pressure_notice(Some(Level::Normal), Some(Level::Warning)).unwrap();
    assert_eq!(n.title, "Memory pressure: warning");
    assert!(pressure_notice(Some(Level::Warning), Some(Level::Warning)).is_none());
    assert!(pressure_notice(Some(Level::Critical), Some(Level::Warning)).is_none());
    assert!(pressure_notice(Some(Level::Warning), Some(Level::Critical)).is_some());

    let mut tick = crate::synth::scripted_ticks(1, 500).remove(0);
    assert!(forecast_notices(&tick).is_empty());
    tick.forecast = Forecast {
        swap_budget_s: Some(40.2),
        ..Forecast::default()
    };
    tick.forecast_fired = vec![Limit::SwapBudget];
    let n = forecast_notices(&tick);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Swap budget in ~40 s");
}

#[test]
fn nobody_looking_slows_the_sampler_unless_a_recording_runs() {
    let dir = tmp("idle");
    let l = live(&dir);
    let base = Duration::from_millis(20);
    assert_eq!(l.interval(), base);
    l.set_idle(true);
    assert_eq!(l.interval(), base * IDLE_SLOWDOWN);
    let updates = l.subscribe(100);
    let _ = updates.recv_timeout(Duration::from_secs(5));
    let t: Vec<u64> = updates.iter().take(6).map(|u| u.point.t_ms).collect();
    let spanned = t[5] - t[0];
    assert!(
        spanned >= 4 * 40,
        "five idle intervals took {spanned} ms ({t:?})"
    );
    // A recording keeps its interval, idle or not.
    l.start_recording(None).unwrap();
    assert_eq!(l.interval(), base);
    l.stop_recording().unwrap();
    assert_eq!(l.interval(), base * IDLE_SLOWDOWN);
    l.set_idle(false);
    assert_eq!(l.interval(), base);
}

/// The app (and serve) record through [`Live`], `record` and `guard` drive
/// the session themselves: the same scripted run gives the same lines
/// either way, header aside (its writer and start time). Issue 24, item 2.
/// A recording stopped within a tick of its start waits for the next
/// tick, so its trace has a sample to report and replay. Two seconds
/// between ticks: without the wait the stop comes first and the trace
/// has none ("no samples").
#[test]
fn a_recording_stopped_at_once_still_has_a_sample() {
    let dir = tmp("at-once");
    let l = Live::scripted_every(&dir, Duration::from_secs(2));
    l.wait_snapshot(Duration::from_secs(5)).unwrap();
    let path = l.start_recording(None).unwrap();
    let asked = std::time::Instant::now();
    let (stopped, samples) = l.stop_recording().unwrap();
    assert_eq!(stopped, path);
    assert_eq!(samples, 1, "the stop did not wait for the next tick");
    assert!(asked.elapsed() < FIRST_SAMPLE_WAIT, "{:?}", asked.elapsed());
    let t = crate::record::trace::read(&path).unwrap();
    assert_eq!(t.samples.len(), 1);
    assert_eq!(replay(&path).unwrap().report.samples, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_live_recording_and_a_cli_recording_of_one_run_are_the_same_lines() {
    use crate::record::session::{self, RecordingSession};
    use std::time::Instant;
    let dir = tmp("same");
    let hour = Duration::from_secs(3600);
    // A sampler whose probe answers only at the end of the test: the run's
    // ticks are fed here, and the sampler's own never reach the recording.
    let (gate, gated) = std::sync::mpsc::channel::<()>();
    let mut script = crate::probe::scripted::ScriptedProbe::false_fit();
    let probe = crate::probe::scripted::ScriptedProbe::new(16 << 30, move |_| {
        let _ = gated.recv();
        crate::probe::Probe::sample(&mut script).expect("scripted")
    });
    let cfg = LiveConfig {
        sampler: SamplerConfig {
            interval: hour,
            history: 2,
            ..SamplerConfig::default()
        },
        rows: 10,
        recordings_dir: dir.clone(),
        ..LiveConfig::default()
    };
    let l = Live::start(Box::new(probe), cfg).unwrap();
    let live_path = l.start_recording(None).unwrap();
    let live_marks = l.mark_path().unwrap();

    let cli_path = dir.join("cli.jsonl");
    let header = session::header(
        l.host(),
        &session::Plan {
            interval: hour,
            top_n: RECORDING_TOP_N,
            watch: None,
            command: &[],
            verb: "record",
            detector: crate::step::detect::DetectorConfig::default(),
            pressure: Default::default(),
            pressure_absent: None,
            forecast: Default::default(),
        },
    );
    let inbox = crate::record::marks::MarkInbox::create(&cli_path).ok();
    let mut cli = RecordingSession::create(&cli_path, &header, inbox).unwrap();
    let cli_marks = cli.mark_path().unwrap().to_path_buf();

    // The marks written before each tick (and "tail" before the end).
    let script: [&[&str]; 6] = [&[], &["load"], &[], &["/"], &["decode", "/decode"], &[]];
    // Instants past any real one: the stop's own clock reads no time since.
    let base = Instant::now() + hour;
    let ticks = crate::synth::scripted_ticks(script.len() as u64, 500);
    let deliver = |lines: &[&str]| {
        for line in lines {
            crate::record::marks::write_mark(&live_marks, line).unwrap();
            crate::record::marks::write_mark(&cli_marks, line).unwrap();
        }
        if !lines.is_empty() {
            // The readers look every 50 ms.
            std::thread::sleep(Duration::from_millis(400));
        }
    };
    for (i, (tick, lines)) in ticks.iter().zip(script).enumerate() {
        let now = base + Duration::from_millis(500 * i as u64);
        deliver(lines);
        on_tick(&l.inner, tick, now);
        cli.turn(Some(tick), now);
        cli.turn(None, now);
    }
    deliver(&["tail"]);
    l.stop_recording().unwrap();
    let last = base + Duration::from_millis(500 * (ticks.len() as u64 - 1));
    cli.finish_marks(last);
    cli.event("recording-stop", "stopped by the user", None, None);

    let lines = |p: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (mut a, mut b) = (lines(&live_path), lines(&cli_path));
    for h in [&mut a[0], &mut b[0]] {
        h["start_unix_ms"] = 0.into();
        h["writer"] = "".into();
    }
    let marks: Vec<(u64, &str)> = a
        .iter()
        .filter(|v| v["type"] == "mark")
        .map(|v| (v["t_ms"].as_u64().unwrap(), v["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        marks,
        [
            (500, "load"),
            (1500, "load"),
            (2000, "decode"),
            (2000, "decode"),
            (2500, "tail")
        ],
        "{a:#?}"
    );
    assert_eq!(a.len(), b.len(), "live {a:#?}\ncli {b:#?}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    drop(gate);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The app's recordings wrote the default detector settings into their
/// header whatever the session's detector was; `report` replays a trace
/// with its header's settings, so they must be the ones in force.
#[test]
fn a_live_recording_says_which_detector_settings_it_ran_with() {
    let dir = tmp("detector");
    let mut cfg = LiveConfig {
        recordings_dir: dir.clone(),
        ..LiveConfig::default()
    };
    cfg.sampler.interval = Duration::from_millis(20);
    cfg.sampler.detector.window_ms = 4_000;
    let l = Live::start(
        Box::new(crate::probe::scripted::ScriptedProbe::false_fit()),
        cfg,
    )
    .unwrap();
    l.wait_snapshot(Duration::from_secs(2)).unwrap();
    let path = l.start_recording(None).unwrap();
    l.stop_recording().unwrap();
    let t = crate::record::trace::read(&path).unwrap();
    assert_eq!(t.header().detector.window_ms, 4_000);
    assert!(
        t.header().writer.ends_with(" live"),
        "{}",
        t.header().writer
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_level_between_ticks_redraws_the_title() {
    use crate::step::pressure::Level;
    let dir = tmp("level-now");
    let l = live(&dir);
    let s = l.wait_snapshot(Duration::from_secs(5)).unwrap();
    let before = s.title.clone();
    let s = s.with_level(Level::Critical, 300.0);
    assert_eq!(s.system.pressure.unwrap().level, Some(Level::Critical));
    assert!(s.title.contains('●'), "{before:?} → {:?}", s.title);
    assert_eq!(Level::from_dispatch(4), Some(Level::Critical));
    assert_eq!(Level::from_dispatch(3), None);
}

#[test]
fn counters_of_a_live_recording_reach_metrics_and_the_replay_draws_them() {
    let dir = tmp("counters");
    let l = live(&dir);
    l.wait_snapshot(Duration::from_secs(2)).unwrap();
    let path = l.start_recording(None).unwrap();
    let mark = l.mark_path().expect("a mark path while recording");
    let line = |v: f64| {
        crate::record::marks::counter_line("torch.mps.driver_allocated", v, "bytes").unwrap()
    };
    crate::record::marks::write_mark(&mark, &line(1e9)).unwrap();
    crate::record::marks::write_mark(&mark, &line(2.5e9)).unwrap();
    let updates = l.subscribe(100);
    let seen = updates.iter().take(50).find_map(|_| {
        l.prometheus(5).filter(|m| {
            m.contains("swapsight_counter_bytes{name=\"torch.mps.driver_allocated\"} 2500000000")
        })
    });
    assert!(seen.is_some(), "{:?}", l.prometheus(5));
    l.stop_recording().unwrap();
    // The recording is over: /metrics no longer shows its counters.
    assert!(!l.prometheus(5).unwrap().contains("swapsight_counter"));
    let r = replay(&path).unwrap();
    assert_eq!(r.counters.len(), 1);
    let values: Vec<f64> = r.counters[0].points.iter().map(|p| p.value).collect();
    assert_eq!(values, [1e9, 2.5e9]);
    assert_eq!(r.counters[0].unit, "bytes");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Regression: on macOS only the dispatch source notified, and XNU tells
/// one process at a time, so a short warning could end before swapsight's
/// turn and go unannounced. The tick's level notifies too, each rise once
/// whichever source tells first.
#[test]
fn a_pressure_rise_is_announced_once_by_whichever_source_tells_first() {
    use crate::step::pressure::Level;
    let mut a = PressureAnnouncer::default();
    // The dispatch source never tells: the tick announces the warning.
    assert!(a.on_tick(Level::Normal, 0).is_none());
    let n = a.on_tick(Level::Warning, 1_000).expect("the tick tells");
    assert_eq!(n.title, "Memory pressure: warning");
    // The late event of the same level: nothing more.
    assert!(a.on_event(Level::Warning, 1_300).is_none());
    assert!(a.on_tick(Level::Warning, 2_000).is_none());
    // The event first: critical once; the tick read just before the event
    // (still warning) is not a fall, so the next tick's critical is quiet.
    assert!(a.on_event(Level::Critical, 2_500).is_some());
    assert!(a.on_tick(Level::Warning, 3_000).is_none());
    assert!(a.on_tick(Level::Critical, 3_500).is_none());
    // A real fall and a new rise announce again.
    assert!(a.on_tick(Level::Normal, 9_000).is_none());
    assert!(a.on_event(Level::Warning, 9_100).is_some());
}

/// A scripted probe that says it has no pressure figures, as Linux without
/// PSI does.
struct NoPsi(crate::probe::scripted::ScriptedProbe);

impl Probe for NoPsi {
    fn system(&mut self) -> Result<crate::probe::SystemSample, crate::probe::ProbeError> {
        self.0.system()
    }
    fn sample(
        &mut self,
    ) -> Result<
        (crate::probe::SystemSample, Vec<crate::probe::ProcessSample>),
        crate::probe::ProbeError,
    > {
        self.0.sample()
    }
    fn host(&mut self) -> Result<HostInfo, crate::probe::ProbeError> {
        self.0.host()
    }
    fn pressure_absent(&self) -> Option<String> {
        Some("/proc/pressure/memory: No such file or directory".into())
    }
    fn scope(&mut self, pid: u32) -> Result<Option<crate::probe::Scope>, crate::probe::ProbeError> {
        self.0.scope(pid)
    }
}

/// Regression (issue 32, the trace header): a recording started from the
/// app or `serve` had a header without the probe's reason for no pressure
/// and without the session's own thresholds, which `record`'s has; and a
/// session showing one user's commands (serve's) lost the run's cgroup,
/// its probe wrapper not passing `scope` on.
#[test]
fn a_live_recording_has_the_header_record_writes_and_keeps_its_scope() {
    let dir = tmp("header");
    let pressure = crate::step::pressure::PressureConfig {
        warn_some_avg10: 5.0,
        ..Default::default()
    };
    let probe = crate::probe::scripted::ScriptedProbe::false_fit().with_scope(|_, _| {
        Ok(Some(crate::probe::Scope {
            path: "/job".into(),
            version: 2,
            limit_bytes: 8 << 30,
            usage_bytes: 1 << 30,
            ..Default::default()
        }))
    });
    let cfg = LiveConfig {
        sampler: SamplerConfig {
            interval: Duration::from_millis(20),
            pressure: pressure.clone(),
            ..SamplerConfig::default()
        },
        recordings_dir: dir.clone(),
        commands_of: Some(0),
        ..LiveConfig::default()
    };
    let l = Live::start(Box::new(NoPsi(probe)), cfg).unwrap();
    l.wait_snapshot(Duration::from_secs(5)).unwrap();
    l.pin(Some(7)).unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while l.snapshot().and_then(|s| s.scope).is_none() {
        assert!(std::time::Instant::now() < until, "the scope never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let path = l.start_recording(None).unwrap();
    l.stop_recording().unwrap();
    let t = crate::record::trace::read(&path).unwrap();
    let h = t.header();
    assert_eq!(
        h.pressure_absent.as_deref(),
        Some("/proc/pressure/memory: No such file or directory")
    );
    assert_eq!(h.pressure, pressure);
    assert!(h.writer.ends_with(" live"), "{}", h.writer);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The live session names an allocator's cache as the report does: a
/// recording whose MLX cache grows while its active memory stays flat, on a
/// machine whose swap climbs (the scripted false fit).
#[test]
fn a_live_recording_names_a_growing_mlx_cache_while_swap_climbs() {
    let dir = tmp("caches");
    let l = live(&dir);
    l.wait_snapshot(Duration::from_secs(2)).unwrap();
    l.start_recording(None).unwrap();
    let mark = l.mark_path().expect("a mark path while recording");
    let gib = f64::from(1u32 << 30);
    for i in 0..6 {
        let active = crate::record::marks::counter_line("mlx.active", 4.0 * gib, "bytes").unwrap();
        let cache =
            crate::record::marks::counter_line("mlx.cache", f64::from(i) * gib, "bytes").unwrap();
        crate::record::marks::write_mark(&mark, &active).unwrap();
        crate::record::marks::write_mark(&mark, &cache).unwrap();
    }
    let updates = l.subscribe(200);
    let named = updates
        .iter()
        .take(150)
        .find_map(|u| u.snapshot.caches.first().cloned());
    let f = named.expect("the MLX cache named while swap climbs");
    assert_eq!(f.allocator, "MLX");
    assert!(
        f.words
            .starts_with("MLX cache grew 5.0 GiB while active stayed 4.0 GiB"),
        "{}",
        f.words
    );
    l.stop_recording().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
