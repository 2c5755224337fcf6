//! P1 tick cost: one full swapsight sample of every process, against peers
//! in the same run — the `sysinfo` crate's full process refresh, its
//! memory-only refresh, and a bare loop that only reads the same `/proc`
//! files swapsight reads (no parsing). Prints a Markdown table; ratios are
//! what to compare, since the machine is noisy.
//!
//! `cargo bench -p swapsight --bench tick` (as is), and with
//! `SWAPSIGHT_BENCH_EXTRA=1000` to start 1,000 idle processes for the run.

use std::fs::File;
use std::io::Read;
use std::time::{Duration, Instant};

use swapsight::probe::native;
use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, RefreshKind, System};

fn main() {
    let extra: usize = std::env::var("SWAPSIGHT_BENCH_EXTRA")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let runs: usize = std::env::var("SWAPSIGHT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut idle = Vec::new();
    for _ in 0..extra {
        match std::process::Command::new("sleep").arg("600").spawn() {
            Ok(c) => idle.push(c),
            Err(e) => {
                eprintln!("could only start {} idle processes: {e}", idle.len());
                break;
            }
        }
    }

    let mut probe = native().expect("probe");
    let procs = probe.sample().expect("sample").1.len();
    let swapsight = time(runs, || {
        let (_, p) = probe.sample().expect("sample");
        std::hint::black_box(p.len());
    });

    // The same files swapsight reads: stat of every pid, status of the
    // non-kernel ones (swapsight skips kernel threads after stat).
    let user_pids: std::collections::HashSet<u32> = probe
        .sample()
        .expect("sample")
        .1
        .iter()
        .map(|p| p.pid)
        .collect();
    let mut buf = Vec::with_capacity(8192);
    let bare = time(runs, || {
        let mut n = 0usize;
        read_into("/proc/meminfo", &mut buf);
        for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let name = e.file_name();
            let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if read_into(&format!("/proc/{pid}/stat"), &mut buf) {
                n += buf.len();
                if user_pids.contains(&pid) {
                    read_into(&format!("/proc/{pid}/status"), &mut buf);
                    n += buf.len();
                }
            }
        }
        std::hint::black_box(n);
    });

    let mut full = System::new_with_specifics(RefreshKind::nothing());
    let sysinfo_full = time(runs, || {
        full.refresh_memory();
        full.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::everything(),
        );
        std::hint::black_box(full.processes().len());
    });
    let mut mem = System::new_with_specifics(RefreshKind::nothing());
    let sysinfo_mem = time(runs, || {
        mem.refresh_memory();
        mem.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().with_memory(),
        );
        std::hint::black_box(mem.processes().len());
    });

    for mut c in idle {
        let _ = c.kill();
        let _ = c.wait();
    }

    println!("\nP1 tick cost: {procs} processes visible ({extra} extra idle), {runs} runs each, times in ms\n");
    println!("| probe | min | median | swapsight ÷ this (median) |");
    println!("|---|---:|---:|---:|");
    let row = |name: &str, t: &Stats| {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} |",
            ms(t.min),
            ms(t.median),
            swapsight.median.as_secs_f64() / t.median.as_secs_f64()
        )
    };
    row("swapsight `probe.sample()`", &swapsight);
    row("bare loop reading the same files", &bare);
    row("sysinfo full refresh (`everything()`)", &sysinfo_full);
    row("sysinfo memory-only refresh", &sysinfo_mem);
    println!(
        "\nswapsight vs sysinfo full: {:.2}× its cost (goal ≤ 0.20); vs bare reads: {:.2}× (goal ≤ 1.5)",
        swapsight.median.as_secs_f64() / sysinfo_full.median.as_secs_f64(),
        swapsight.median.as_secs_f64() / bare.median.as_secs_f64()
    );
}

fn read_into(path: &str, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .is_ok()
}

struct Stats {
    min: Duration,
    median: Duration,
}

fn time(runs: usize, mut f: impl FnMut()) -> Stats {
    f(); // warm caches
    let mut t: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort_unstable();
    Stats {
        min: t[0],
        median: t[t.len() / 2],
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
