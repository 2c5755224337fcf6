//! `swapsight plot`: a trace as one chart (PNG or SVG) with the report's
//! verdict in its title.

use std::path::PathBuf;
use std::process::ExitCode;

use swapsight::export::plot::{Chart, ImageFormat, PlotOptions, MAX_SIDE, MIN_SIDE};
use swapsight::export::ExportFormat;

use crate::exit;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The chart: footprint lines of the watched and largest processes, swap growth as \
a filled area (where the trace watched a tree, other processes only where the report suspects them; \
--all-processes for the largest), free memory (dashed, right axis), and the stretches the live detector flagged as false \
fit, overflow or hidden memory shaded behind them. Memory in GiB (1 GiB = 1024³ bytes), time in seconds \
from the first sample.

Examples:
  swapsight plot run.jsonl -o run.png
  swapsight plot run.jsonl -o run.svg --processes 3 --size 1600x900"
)]
pub struct Args {
    /// Trace to read (written by `swapsight record` or `guard`)
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Image to write; the extension picks the format (.png or .svg)
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Footprint lines for N processes: the watched tree first, then the largest
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = processes, allow_hyphen_values = true)]
    pub processes: usize,
    /// Image size in pixels
    #[arg(long, value_name = "WxH", default_value = "1200x675", value_parser = size)]
    pub size: (u32, u32),
    /// Beside a watched tree, lines for the largest other processes too (by default only
    /// those the report suspects of a false fit or an overflow get one)
    #[arg(long)]
    pub all_processes: bool,
}

/// The formats `plot` draws, by the output's extension.
const IMAGES: [ExportFormat; 2] = [ExportFormat::Png, ExportFormat::Svg];

/// `--processes`: 0 to 8 lines (more would not tell apart by colour).
fn processes(s: &str) -> Result<usize, String> {
    let n = crate::args::count(s)?;
    if n > 8 {
        return Err("must be 0 to 8".into());
    }
    Ok(n)
}

/// `1200x675` → (1200, 675).
fn size(s: &str) -> Result<(u32, u32), String> {
    let why = || "expected WIDTHxHEIGHT in pixels, like 1200x675".to_string();
    let (w, h) = s.split_once(['x', 'X', '×']).ok_or_else(why)?;
    let w: u32 = w.trim().parse().map_err(|_| why())?;
    let h: u32 = h.trim().parse().map_err(|_| why())?;
    if !(MIN_SIDE..=MAX_SIDE).contains(&w) || !(MIN_SIDE..=MAX_SIDE).contains(&h) {
        return Err(format!("each side must be {MIN_SIDE} to {MAX_SIDE} pixels"));
    }
    Ok((w, h))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let output = args.output.ok_or_else(|| {
        exit::fail(
            exit::USAGE,
            "where to? add -o FILE.png or -o FILE.svg (see --help)",
        )
    })?;
    let format = ExportFormat::from_path(&output)
        .filter(|f| IMAGES.contains(f))
        .ok_or_else(|| {
            exit::fail(
                exit::USAGE,
                format!(
                    "cannot tell the image format of '{}': name it .png or .svg",
                    output.display()
                ),
            )
        })?;
    let opts = PlotOptions {
        width: args.size.0,
        height: args.size.1,
        processes: args.processes,
        all_processes: args.all_processes,
    };
    // Streamed: the report and the time range in one pass, the lines
    // (thinned to the chart's width) in the next.
    let mut reader = crate::input::open_trace(&args.trace)?;
    let chart = Chart::streamed(&mut reader, &opts)?;
    crate::input::done(&args.trace, chart.report().samples, reader.notes(), "draw")?;
    // Drawn whole before the file is touched: a chart that cannot be drawn
    // says so without a "cannot write" in front.
    let image = format.image().unwrap_or(ImageFormat::Png);
    let bytes = chart.render(&opts, image)?;
    crate::output::write_file(&output, |out| Ok(out.write_all(&bytes)?))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
#[path = "plot_tests.rs"]
mod tests;
