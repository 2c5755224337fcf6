//! P3 benchmark: a 1-hour trace (7,200 samples at 500 ms, 20 processes) read
//! from disk, reported on, and drawn as a PNG — what `swapsight plot` does.
//! Goal: report + PNG together in 0.5 s or less (release build).
//!
//! Run: `cargo bench -p swapsight --bench plot` (prints a Markdown table;
//! `SWAPSIGHT_BENCH_RUNS=N` sets the number of timed runs, default 7).

use std::time::{Duration, Instant};

use swapsight::export::plot::{self, PlotOptions};
use swapsight::export::{self, Format};
use swapsight::{report, synth, trace};

/// Bytes in a MiB: sizes are binary (docs/units.md).
const MIB: f64 = (1u64 << 20) as f64;

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f();
        times.push(start.elapsed());
        last = Some(out);
    }
    times.sort_unstable();
    (
        times[0],
        times[times.len() / 2],
        last.expect("at least one run"),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs: usize = if quick {
        1
    } else {
        std::env::var("SWAPSIGHT_BENCH_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(7)
    };
    let (samples, procs) = if quick { (200, 20) } else { (7_200, 20) };
    let trace = synth::busy_trace(samples, procs);
    let dir = std::env::temp_dir().join(format!("swapsight-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("busy.jsonl");
    let bytes = synth::to_jsonl(&trace);
    std::fs::write(&path, &bytes).expect("write trace");

    let (read_min, read_med, trace) = time(runs, || trace::read(&path).expect("readable"));
    let (rep_min, rep_med, rep) = time(runs, || report::report(&trace, None));
    let opts = PlotOptions::default();
    let (png_min, png_med, png) = time(runs, || plot::png(&trace, &rep, &opts).expect("png"));
    let (both_min, both_med, _) = time(runs, || {
        let r = report::report(&trace, None);
        plot::png(&trace, &r, &opts).expect("png")
    });
    let (svg_min, svg_med, svg) = time(runs, || plot::svg(&trace, &rep, &opts).expect("svg"));
    let (csv_min, csv_med, csv) = time(runs, || {
        let mut out = Vec::new();
        export::write(&trace, Format::Csv, &mut out).expect("csv");
        out.len()
    });
    let (pf_min, pf_med, pf) = time(runs, || {
        let mut out = Vec::new();
        export::write(&trace, Format::Perfetto, &mut out).expect("perfetto");
        out.len()
    });
    std::fs::remove_dir_all(&dir).ok();

    println!(
        "trace: {} samples × {} processes, {:.1} MiB on disk; {} run(s), times in ms\n",
        trace.samples.len(),
        procs,
        bytes.len() as f64 / MIB,
        runs
    );
    println!("| step | min | median | output |");
    println!("|---|---:|---:|---|");
    println!(
        "| `trace::read` from disk | {} | {} | {} samples |",
        ms(read_min),
        ms(read_med),
        trace.samples.len()
    );
    println!(
        "| `report::report` | {} | {} | verdict {} |",
        ms(rep_min),
        ms(rep_med),
        rep.verdict
    );
    println!(
        "| PNG 1200×675 (`plot::png`) | {} | {} | {} KiB |",
        ms(png_min),
        ms(png_med),
        png.len() / 1024
    );
    println!(
        "| **report + PNG** | **{}** | **{}** | goal ≤ 500 |",
        ms(both_min),
        ms(both_med)
    );
    println!(
        "| SVG 1200×675 (`plot::svg`) | {} | {} | {} KiB |",
        ms(svg_min),
        ms(svg_med),
        svg.len() / 1024
    );
    println!(
        "| CSV export | {} | {} | {:.1} MiB |",
        ms(csv_min),
        ms(csv_med),
        csv as f64 / MIB
    );
    println!(
        "| Perfetto export | {} | {} | {:.1} MiB |",
        ms(pf_min),
        ms(pf_med),
        pf as f64 / MIB
    );
}
