use super::*;
use crate::probe::SystemSample;
use crate::step::detect::{Evidence, State};

fn tick(procs: Vec<ProcessSample>, watched: Vec<u32>, flagged: &[u32]) -> Tick {
    Tick {
        sample: Sample {
            t_ms: 0,
            system: SystemSample::default(),
            processes: procs,
            scope: None,
        },
        watched,
        flags: Vec::new(),
        view: Default::default(),
        flagged: flagged
            .iter()
            .map(|&pid| Assessment {
                pid,
                name: String::new(),
                state: State::FalseFit,
                worst: State::FalseFit,
                evidence: Evidence::default(),
                since_ms: 0,
            })
            .collect(),
        activity: Vec::new(),
        forecast: Default::default(),
        forecast_fired: Vec::new(),
        scope_note: None,
    }
}

/// What `kept_processes` must give: everything sorted by footprint
/// (largest first, then pid), the first `n` kept and the watched and
/// flagged ones after them.
fn by_full_sort(t: &Tick, n: usize) -> Vec<u32> {
    let mut all: Vec<_> = t.sample.processes.iter().collect();
    all.sort_by(|a, b| {
        b.footprint_bytes
            .cmp(&a.footprint_bytes)
            .then(a.pid.cmp(&b.pid))
    });
    let flagged = |pid| t.flagged.iter().any(|a| a.pid == pid);
    all.iter()
        .enumerate()
        .filter(|(i, p)| *i < n || t.watched.contains(&p.pid) || flagged(p.pid))
        .map(|(_, p)| p.pid)
        .collect()
}

#[test]
fn the_kept_processes_are_the_largest_in_order_then_the_watched_and_flagged() {
    // A small LCG: many shapes, ties in footprint included, reproducibly.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    for round in 0..300 {
        let count = next(40) as u32;
        let procs: Vec<_> = (0..count)
            .map(|i| ProcessSample {
                pid: 1000 - i * 3,
                footprint_bytes: next(8) << 20,
                ..ProcessSample::default()
            })
            .collect();
        let pick = |k: u64, next: &mut dyn FnMut(u64) -> u64| -> Vec<u32> {
            (0..k)
                .filter_map(|_| procs.get(next(u64::from(count.max(1))) as usize))
                .map(|p| p.pid)
                .collect()
        };
        let watched = pick(next(4), &mut next);
        let flagged = pick(next(3), &mut next);
        let t = tick(procs.clone(), watched, &flagged);
        for n in [0, 1, 3, 10, 50] {
            let kept: Vec<u32> = t
                .kept_processes(n)
                .processes
                .iter()
                .map(|p| p.pid)
                .collect();
            assert_eq!(kept, by_full_sort(&t, n), "round {round}, n {n}");
        }
    }
}
