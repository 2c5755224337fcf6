//! A peer for the self-cost benchmark (`scripts/bench-record`): what a Rust
//! monitor built on the `sysinfo` crate does each tick — a full process
//! refresh and the memory figures — at the same pace as `swapsight record`:
//!
//!     cargo run --release -p swapsight --example sysinfo_loop -- 500 20
//!
//! (every 500 ms for 20 s).

use std::time::{Duration, Instant};
use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, RefreshKind, System};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("INTERVAL_MS SECONDS"))
        .collect();
    let (interval, secs) = match args[..] {
        [i, s] => (Duration::from_millis(i), Duration::from_secs(s)),
        _ => (Duration::from_millis(500), Duration::from_secs(20)),
    };
    let mut sys = System::new_with_specifics(RefreshKind::nothing());
    let start = Instant::now();
    let mut ticks = 0u64;
    while start.elapsed() < secs {
        let tick = Instant::now();
        sys.refresh_memory();
        sys.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::everything(),
        );
        ticks += 1;
        std::thread::sleep(interval.saturating_sub(tick.elapsed()));
    }
    eprintln!("{ticks} ticks, {} processes", sys.processes().len());
}
