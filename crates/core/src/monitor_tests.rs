use super::*;
use crate::probe::{ProcessSample, SystemSample};

fn proc(pid: u32, ppid: u32) -> ProcessSample {
    ProcessSample {
        pid,
        ppid,
        name: format!("p{pid}"),
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
    let mut m = Monitor::new(Some(10), crate::DetectorConfig::default());
    assert_eq!(m.step(sample()).watched, [10, 11, 12]);
    m.exclude = Some(11);
    assert_eq!(m.step(sample()).watched, [10, 12]);
    // The root is watched whoever it is.
    m.exclude = Some(10);
    assert_eq!(m.step(sample()).watched, [10, 11, 12]);
}
