//! Writes a large synthetic trace (`synth::write_busy`: 20 processes at
//! 500 ms, swap climbing in the second half) of about SIZE megabytes, for
//! the large-trace benchmarks (docs/benchmarks.md, P5):
//!
//!     cargo run --release -p swapsight --example synth_trace -- OUT.jsonl 1024 [PHASES]
//!
//! With PHASES, that many phase marks at even steps, each written after the
//! sample of its time, as a recording writes them.
//!
//! It streams: writing a gigabyte costs no more memory than one sample.

use std::io::Write;

use swapsight::synth;

const PROCESSES: usize = 20;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), Some(mb)) = (args.next(), args.next()) else {
        eprintln!("usage: synth_trace OUT.jsonl SIZE_MB");
        std::process::exit(2);
    };
    let mb: u64 = mb.to_string_lossy().parse().unwrap_or_else(|_| {
        eprintln!("SIZE_MB: a whole number of megabytes");
        std::process::exit(2);
    });
    let phases: usize = args
        .next()
        .and_then(|p| p.to_string_lossy().parse().ok())
        .unwrap_or(0);
    let samples = synth::busy_samples_for(mb << 20, PROCESSES);
    let file = std::fs::File::create(&out)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    synth::write_busy(&mut w, samples, PROCESSES, phases)?;
    w.flush()?;
    eprintln!("{} samples", samples);
    Ok(())
}
