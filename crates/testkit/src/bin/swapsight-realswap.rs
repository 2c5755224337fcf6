//! Real swap for tests in other languages (python/tests): makes the same
//! swap file and memory cgroup as [`swapsight_testkit::RealSwap::new`] — the same locks, stale
//! clean-up and cgroup v1/v2 rules — prints one JSON line
//! (`{"cgroup": PATH, "version": 1|2, "swapfile": PATH}`), and removes both
//! when its stdin ends (the test closed it, or the test process died).
//!
//!   swapsight-realswap SWAP_MIB LIMIT_MIB [no-cgroup-swap]
//!
//! `no-cgroup-swap` makes a cgroup that may not swap (its swap limit 0),
//! as [`swapsight_testkit::CgroupSwap::None`].
//!
//! Exits 3 with the reason on stderr when this machine cannot run real-swap
//! tests outside CI; under `CI=true` that is a panic (exit 101), as in the
//! Rust tests.

#[cfg(target_os = "linux")]
fn main() {
    use std::io::{Read, Write};
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let cgroup_swap = match args.last().map(String::as_str) {
        Some("no-cgroup-swap") => {
            args.pop();
            swapsight_testkit::CgroupSwap::None
        }
        _ => swapsight_testkit::CgroupSwap::Allowed,
    };
    let sizes: Vec<u64> = args
        .iter()
        .map(|a| a.parse().expect("SWAP_MIB LIMIT_MIB: whole MiB"))
        .collect();
    let [swap_mib, limit_mib] = sizes[..] else {
        eprintln!("usage: swapsight-realswap SWAP_MIB LIMIT_MIB [no-cgroup-swap]");
        std::process::exit(2);
    };
    let Some(rs) = swapsight_testkit::RealSwap::with(swap_mib, limit_mib, cgroup_swap) else {
        std::process::exit(3);
    };
    let line = serde_json::json!({
        "cgroup": rs.cgroup,
        "version": rs.version,
        "swapfile": rs.swapfile,
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).ok();
    drop(out);
    // Held until stdin ends; whatever it says is ignored.
    let _ = std::io::copy(
        &mut std::io::stdin().lock().take(u64::MAX),
        &mut std::io::sink(),
    );
    drop(rs);
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("swapsight-realswap: real swap tests run on Linux only");
    std::process::exit(3);
}
