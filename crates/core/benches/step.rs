//! The detector's share of a steady tick: [`Monitor::step`] (the watched
//! tree and the detector) on a sample of idle processes, as the sampler
//! hands it over between full ticks — every process carried with the
//! figures of its last read, the clock stepping by the default interval.
//! No I/O: the samples are made before the clock starts, so what is timed is
//! the step alone. Between two ticks the sampler sleeps and the machine
//! runs other things, so a tick finds its data out of the cache: the cold
//! rows write over a buffer larger than the cache before each step (not
//! timed); the warm rows step back to back. Prints a Markdown table;
//! compare builds by running it on each in turn (the ratio), since the
//! machine is noisy.
//!
//! `cargo bench -p swapsight --bench step` (`SWAPSIGHT_BENCH_ROUNDS`, 15).

use std::time::{Duration, Instant};

use swapsight::{DetectorConfig, Monitor, ProcessSample, Sample, SystemSample};

/// Ticks timed in each round.
const TICKS: usize = 200;

/// Written over between cold ticks: more than any cache here.
const EVICT_BYTES: usize = 64 << 20;

fn processes(n: u32) -> Vec<ProcessSample> {
    (0..n)
        .map(|i| ProcessSample {
            pid: 100 + i * 3,
            ppid: 1,
            name: format!("idle-{i}").into(),
            cmdline: Some(format!("/usr/bin/idle-{i} --serve").into()),
            footprint_bytes: (1 + u64::from(i % 97)) << 20,
            pageins: u64::from(i % 13),
            swap_bytes: Some(0),
            start_time: 1_000 + u64::from(i),
            readable: true,
            ..Default::default()
        })
        .collect()
}

fn sample(t_ms: u64, procs: &[ProcessSample]) -> Sample {
    Sample {
        t_ms,
        system: SystemSample {
            phys_bytes: 24 << 30,
            free_pct: 80.0,
            swap_used_bytes: 0,
            swap_total_bytes: 2 << 30,
            page_size: 4096,
            ..Default::default()
        },
        processes: procs.to_vec(),
        scope: None,
    }
}

fn main() {
    let rounds: usize = std::env::var("SWAPSIGHT_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    println!("\nThe detector's step on idle processes: {TICKS} ticks a round, {rounds} rounds\n");
    println!("| processes | cache | per tick (min) | per tick (median) | per process (median) |");
    println!("|---:|---|---:|---:|---:|");
    let mut evict = vec![0u8; EVICT_BYTES];
    for n in [365u32, 1_000] {
        for cold in [false, true] {
            let procs = processes(n);
            let mut monitor = Monitor::new(None, DetectorConfig::default());
            let mut t_ms = 0u64;
            // The windows filled, as after the first minute of a recording.
            for _ in 0..120 {
                t_ms += 500;
                std::hint::black_box(monitor.step(sample(t_ms, &procs)).activity.len());
            }
            let mut per_tick: Vec<Duration> = Vec::with_capacity(rounds);
            for round in 0..rounds {
                let samples: Vec<Sample> = (0..TICKS)
                    .map(|k| sample(t_ms + 500 * (k as u64 + 1), &procs))
                    .collect();
                t_ms += 500 * TICKS as u64;
                let mut spent = Duration::ZERO;
                for s in samples {
                    if cold {
                        evict.fill(round as u8);
                        std::hint::black_box(&evict);
                    }
                    let start = Instant::now();
                    std::hint::black_box(monitor.step(s).activity.len());
                    spent += start.elapsed();
                }
                per_tick.push(spent / TICKS as u32);
            }
            per_tick.sort_unstable();
            let median = per_tick[per_tick.len() / 2];
            println!(
                "| {n} | {} | {:.1} µs | {:.1} µs | {:.0} ns |",
                if cold { "cold" } else { "warm" },
                per_tick[0].as_secs_f64() * 1e6,
                median.as_secs_f64() * 1e6,
                median.as_secs_f64() * 1e9 / f64::from(n)
            );
        }
    }
}
