use super::*;
use crate::probe::{ProcessSample, SystemSample};

fn proc(pid: u32, ppid: u32) -> ProcessSample {
    ProcessSample {
        pid,
        ppid,
        name: format!("p{pid}").into(),
        footprint_bytes: 1 << 20,
        start_time: 1,
        ..Default::default()
    }
}

fn sample() -> Sample {
    Sample {
        t_ms: 0,
        system: SystemSample {
            phys_bytes: 1 << 30,
            free_pct: 50.0,
            page_size: 4096,
            ..SystemSample::default()
        },
        // 10 records itself: 11 is its recorder, 12 a worker it started.
        processes: vec![proc(10, 1), proc(11, 10), proc(12, 10)],
        scope: None,
    }
}

#[test]
fn a_recorder_inside_the_tree_it_watches_is_not_watched() {
    let mut m = Monitor::new(Some(10), crate::step::detect::DetectorConfig::default());
    assert_eq!(m.step(sample()).watched, [10, 11, 12]);
    m.exclude = Some(11);
    assert_eq!(m.step(sample()).watched, [10, 12]);
    // The root is watched whoever it is.
    m.exclude = Some(10);
    assert_eq!(m.step(sample()).watched, [10, 11, 12]);
}

#[test]
fn a_job_stalling_in_its_cgroup_raises_the_level_on_a_calm_host() {
    use crate::step::pressure::{Level, Pressure, PressureConfig, PsiLine};
    let psi = |some10: f64| Pressure {
        some: Some(PsiLine {
            avg10: some10,
            ..PsiLine::default()
        }),
        full: Some(PsiLine::default()),
        ..Pressure::default()
    };
    let cfg = PressureConfig {
        hold_ms: 2_000,
        ..PressureConfig::default()
    };
    let mut m =
        Monitor::new(Some(10), crate::step::detect::DetectorConfig::default()).with_pressure(cfg);
    let mut last = None;
    for i in 0..=10u64 {
        let mut s = sample();
        s.t_ms = i * 500;
        // The machine: calm. The job's cgroup: 45 % of its time stalled.
        s.system.pressure = Some(psi(0.5));
        s.scope = Some(crate::probe::Scope {
            path: "/job".into(),
            version: 2,
            limit_bytes: 1 << 29,
            pressure: Some(psi(45.0)),
            ..Default::default()
        });
        last = Some(m.step(s));
    }
    let tick = last.unwrap();
    let scope_level = tick.sample.scope.as_ref().unwrap().pressure.unwrap().level;
    assert_eq!(
        scope_level,
        Some(Level::Critical),
        "some avg10 45 % held 5 s"
    );
    let sys = tick.sample.system.pressure.unwrap();
    assert_eq!(
        sys.level,
        Some(Level::Critical),
        "the worse of the two is in force"
    );
    assert_eq!(
        sys.some.unwrap().avg10,
        0.5,
        "the machine's own figures stay its own"
    );

    // No scope PSI: the machine's level alone.
    let mut m = Monitor::new(Some(10), crate::step::detect::DetectorConfig::default());
    let mut s = sample();
    s.system.pressure = Some(psi(0.5));
    assert_eq!(
        m.step(s).sample.system.pressure.unwrap().level,
        Some(Level::Normal)
    );
}
