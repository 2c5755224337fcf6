//! P1 tick cost: one full swapsight sample of every process, against peers
//! in the same run — the whole sampler tick (the sample stepped through the
//! watched tree and the detector, what the app's sampler thread does each
//! tick), the `sysinfo` crate's full process refresh, its
//! memory-only refresh, and a bare loop that only reads the same `/proc`
//! files swapsight reads (no parsing). Prints a Markdown table; ratios are
//! what to compare, since the machine is noisy. Besides wall-clock times it
//! gives the CPU time each tick cost the process (`getrusage`), which other
//! load on a shared machine disturbs far less than the wall clock.
//!
//! `cargo bench -p swapsight --bench tick` (as is), and with
//! `SWAPSIGHT_BENCH_EXTRA=1000` to start 1,000 idle processes for the run.

use std::fs::File;
use std::io::Read;
use std::time::{Duration, Instant};

use swapsight::probe::native;
use swapsight::{DetectorConfig, Monitor, Sample};
use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, RefreshKind, System};

/// A count from the environment, or `default`.
fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` idle processes that live for the run.
fn idle_processes(n: usize) -> Vec<std::process::Child> {
    let mut idle = Vec::new();
    for _ in 0..n {
        match std::process::Command::new("sleep").arg("600").spawn() {
            Ok(c) => idle.push(c),
            Err(e) => {
                eprintln!("could only start {} idle processes: {e}", idle.len());
                break;
            }
        }
    }
    idle
}

fn main() {
    let extra = env_count("SWAPSIGHT_BENCH_EXTRA", 0);
    let runs = env_count("SWAPSIGHT_BENCH_RUNS", 60);
    let idle = idle_processes(extra);

    // The first tick of a new probe also reads every process's name once
    // (`/proc/PID/exe` and `cmdline`); later ticks use the cache.
    let mut probe = native().expect("probe");
    let started = Instant::now();
    let procs = probe.sample().expect("sample").1.len();
    let first_tick = started.elapsed();
    let swapsight = time(runs, || {
        let (_, p) = probe.sample().expect("sample");
        std::hint::black_box(p.len());
    });

    // What the sampler thread does each tick: the sample, then the watched
    // tree and the detector. The clock steps by the default interval so the
    // detector's windows fill as they do live.
    let mut monitor = Monitor::new(None, DetectorConfig::default());
    let mut t_ms = 0u64;
    let sampler_tick = time(runs, || {
        let (system, processes) = probe.sample().expect("sample");
        t_ms += 500;
        let tick = monitor.step(Sample {
            t_ms,
            system,
            processes,
            scope: None,
        });
        std::hint::black_box(tick.activity.len());
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
    let bare = bare_reads(runs, &user_pids);

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

    let peers = [
        ("sampler tick (sample + tree + detector)", &sampler_tick),
        ("bare loop reading the same files", &bare),
        ("sysinfo full refresh (`everything()`)", &sysinfo_full),
        ("sysinfo memory-only refresh", &sysinfo_mem),
    ];
    print_table(procs, extra, runs, &swapsight, &peers, first_tick);
    added_by_pressure(&sampler_tick);
    print_goals(&swapsight, &sysinfo_full, &bare);
}

/// What a bare loop costs that only reads the files swapsight reads: stat
/// of every pid, status of the non-kernel ones (`user_pids`; swapsight
/// skips kernel threads after stat).
fn bare_reads(runs: usize, user_pids: &std::collections::HashSet<u32>) -> Stats {
    let mut buf = Vec::with_capacity(8192);
    time(runs, || {
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
    })
}

/// The Markdown table: swapsight's probe, then each peer, with ratios.
fn print_table(
    procs: usize,
    extra: usize,
    runs: usize,
    swapsight: &Stats,
    peers: &[(&str, &Stats)],
    first_tick: Duration,
) {
    println!("\nP1 tick cost: {procs} processes visible ({extra} extra idle), {runs} runs each, times in ms\n");
    println!("| probe | min | median | swapsight ÷ this (median) | CPU per tick (mean) | swapsight ÷ this (CPU) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let row = |name: &str, t: &Stats| {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            ms(t.min),
            ms(t.median),
            swapsight.median.as_secs_f64() / t.median.as_secs_f64(),
            ms(t.cpu),
            swapsight.cpu.as_secs_f64() / t.cpu.as_secs_f64()
        )
    };
    row("swapsight `probe.sample()`", swapsight);
    for (name, t) in peers {
        row(name, t);
    }
    println!(
        "\nswapsight's first tick (every process named once): {:.2} ms",
        ms(first_tick)
    );
}

/// The goals, as ratios against the peers.
fn print_goals(swapsight: &Stats, sysinfo_full: &Stats, bare: &Stats) {
    println!(
        "\nswapsight vs sysinfo full: {:.2}× its cost (goal ≤ 0.20); vs bare reads: {:.2}× (goal ≤ 1.5); by CPU time: {:.2}× and {:.2}×",
        swapsight.median.as_secs_f64() / sysinfo_full.median.as_secs_f64(),
        swapsight.median.as_secs_f64() / bare.median.as_secs_f64(),
        swapsight.cpu.as_secs_f64() / sysinfo_full.cpu.as_secs_f64(),
        swapsight.cpu.as_secs_f64() / bare.cpu.as_secs_f64()
    );
}

/// What memory pressure and time to trouble add to each tick, timed alone
/// over many calls (each is microseconds against a tick of milliseconds,
/// below what the tick's own noise on a shared machine could show): the PSI
/// read and parse, the pressure gauge and the forecaster's step.
fn added_by_pressure(tick: &Stats) {
    use swapsight::forecast::{ForecastConfig, Forecaster};
    use swapsight::pressure::{PressureConfig, PressureGauge};
    const N: u32 = 20_000;
    let each = |f: &mut dyn FnMut(u64)| {
        let s = Instant::now();
        for i in 0..u64::from(N) {
            f(i);
        }
        s.elapsed() / N
    };
    #[cfg(target_os = "linux")]
    let psi = {
        let mut buf = vec![0; 8192];
        let mut src =
            swapsight::probe::linux::psi::PsiSource::open(std::path::Path::new("/proc"), &mut buf);
        each(&mut |_| {
            std::hint::black_box(src.read(&mut buf));
        })
    };
    #[cfg(not(target_os = "linux"))]
    let psi = Duration::ZERO;
    let mut sys = swapsight::SystemSample {
        phys_bytes: 16 << 30,
        free_pct: 50.0,
        swap_total_bytes: 8 << 30,
        ..Default::default()
    };
    let mut forecaster = Forecaster::new(ForecastConfig {
        swap_budget_bytes: Some(1 << 30),
        ..ForecastConfig::default()
    });
    let step = each(&mut |i| {
        sys.swap_used_bytes = i * (10 << 20);
        std::hint::black_box(forecaster.step(i * 500, &sys));
    });
    let mut gauge = PressureGauge::new(PressureConfig::default());
    let line = swapsight::pressure::PsiLine {
        avg10: 12.0,
        avg60: 3.0,
        total_us: 1,
    };
    let p = swapsight::pressure::Pressure {
        some: Some(line),
        full: Some(line),
        ..Default::default()
    };
    let level = each(&mut |i| {
        std::hint::black_box(gauge.step(i * 500, Some(&p)));
    });
    let added = psi + step + level;
    println!(
        "\nadded by memory pressure and the forecast, per tick: PSI read {:.2} µs, forecaster step {:.2} µs, pressure level {:.3} µs; {:.2} µs in all, {:.3} % of the sampler tick's median",
        psi.as_secs_f64() * 1e6,
        step.as_secs_f64() * 1e6,
        level.as_secs_f64() * 1e6,
        added.as_secs_f64() * 1e6,
        added.as_secs_f64() / tick.median.as_secs_f64() * 100.0
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
    /// CPU time (user + system) per run, mean.
    cpu: Duration,
}

fn time(runs: usize, mut f: impl FnMut()) -> Stats {
    f(); // warm caches
    let runs = runs.max(1);
    let cpu0 = cpu_time();
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    let cpu = cpu_time().saturating_sub(cpu0) / u32::try_from(runs).unwrap_or(u32::MAX);
    t.sort_unstable();
    Stats {
        min: t[0],
        median: t[t.len() / 2],
        cpu,
    }
}

/// CPU time this process has used, user and system.
fn cpu_time() -> Duration {
    // SAFETY: rusage is plain old data; all-zero is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
