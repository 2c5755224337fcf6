//! Large traces are read as they stream: a ~100 MiB trace (an overnight
//! recording is ten times that) is judged in bounded memory, far below the
//! size of the trace (issue 20, item 13; docs/benchmarks.md, P5).

use std::io::Write;
use std::process::Stdio;

use crate::util::*;

/// Highest peak RSS `report` may reach on the 100 MiB trace. Streamed, it
/// holds ~11 MiB (the run's swap series and per-process figures); holding
/// the trace took 241 MiB.
const CEILING_MIB: i64 = 64;

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
    // The peak from GNU time, whose own child `report` is: a child of this
    // test process would start its peak at the test process's own.
    let mut cmd = swapsight();
    cmd.arg("report").arg(&trace);
    let (code, err, peak_kib, _) =
        measured_to(cmd, Stdio::from(std::fs::File::create(&report).unwrap()));
    let (ok, peak_kib) = (code == Some(0), peak_kib as i64);
    eprintln!("report of {} MiB: peak RSS {} KiB", size >> 20, peak_kib);
    // The trace is deleted at once: 100 MiB is not left behind on a failure.
    std::fs::remove_file(&trace).unwrap();
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(ok, "report failed: {err}{text}");
    assert!(text.contains("FALSE FIT"), "{text}");
    assert!(
        peak_kib <= CEILING_MIB * 1024,
        "report of a {} MiB trace peaked at {} MiB (ceiling {CEILING_MIB} MiB)",
        size >> 20,
        peak_kib / 1024
    );
}
