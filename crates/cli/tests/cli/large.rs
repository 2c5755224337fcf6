//! Large traces are read as they stream: a ~100 MB trace (an overnight
//! recording is ten times that) is judged in bounded memory, far below the
//! size of the trace (issue 20, item 13; docs/benchmarks.md, P5).

use std::io::Write;
use std::process::Stdio;

use crate::util::*;

/// Highest peak RSS `report` may reach on the 100 MB trace. Streamed, it
/// holds ~11 MB (the run's swap series and per-process figures); holding
/// the trace took 241 MB.
const CEILING_MIB: i64 = 64;

/// Peak RSS, in KiB, of the child `pid` once it ends (`wait4` reaps it and
/// reports its own usage, not that of the test binary's other children), and
/// whether it exited 0.
#[cfg(unix)]
fn wait_peak_kib(pid: u32) -> (i64, bool) {
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both pointers are to live locals.
    let got = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(got, pid as libc::pid_t, "wait4 failed");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // ru_maxrss is in KiB on Linux, in bytes on macOS.
    let kib = if cfg!(target_os = "macos") {
        usage.ru_maxrss / 1024
    } else {
        usage.ru_maxrss
    };
    (kib, ok)
}

#[cfg(unix)]
#[test]
fn a_100_mb_trace_is_reported_under_a_memory_ceiling() {
    let dir = TempDir::new("large");
    let trace = dir.join("overnight.jsonl");
    {
        let file = std::fs::File::create(&trace).unwrap();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let samples = swapsight::synth::busy_samples_for(100 << 20, 20);
        swapsight::synth::write_busy(&mut out, samples, 20, 0).unwrap();
        out.flush().unwrap();
    }
    let size = std::fs::metadata(&trace).unwrap().len();
    assert!(size > 95 << 20, "{size} bytes");
    let report = dir.join("report.txt");
    // Reaped by `wait4` (which tells its own peak), not by `Child::wait`.
    #[allow(clippy::zombie_processes)]
    let child = swapsight()
        .arg("report")
        .arg(&trace)
        .stdout(std::fs::File::create(&report).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (peak_kib, ok) = wait_peak_kib(child.id());
    eprintln!("report of {} MB: peak RSS {} KiB", size >> 20, peak_kib);
    // The trace is deleted at once: 100 MB is not left behind on a failure.
    std::fs::remove_file(&trace).unwrap();
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(ok, "report failed: {text}");
    assert!(text.contains("FALSE FIT"), "{text}");
    assert!(
        peak_kib <= CEILING_MIB * 1024,
        "report of a {} MB trace peaked at {} MiB (ceiling {CEILING_MIB} MiB)",
        size >> 20,
        peak_kib / 1024
    );
}
