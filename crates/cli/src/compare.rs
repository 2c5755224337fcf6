//! `swapsight compare`: several runs side by side, and a chart of them.

use std::path::PathBuf;
use std::process::ExitCode;

use swapsight::compare::{compare, RowFold, RunRow, TableFormat, MAX_RUNS, MIN_RUNS};
use swapsight::export::compare_plot::{RunSeries, SeriesBuilder};
use swapsight::export::ExportFormat;
use swapsight::trace::Record;

/// The chart's size in pixels.
const PLOT_SIZE: (u32, u32) = (1200, 675);

use crate::exit;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "One row per run: duration, peak footprint of the watched tree, swap \
growth, minimum free memory, verdict, and when the first process was flagged. With --plot, one \
chart overlays the runs (watched footprint solid, swap growth dashed, from each run's start); when \
every run carries the same phase marks, the phases are lined up.

Examples:
  swapsight compare eager.jsonl offload.jsonl staged.jsonl
  swapsight compare a.jsonl b.jsonl --label before --label after --format md
  swapsight compare *.jsonl --plot runs.png"
)]
pub struct Args {
    /// Traces to compare (2 to 20)
    #[arg(value_name = "TRACE", required = true)]
    pub traces: Vec<PathBuf>,
    /// Name of a run, in the order of the traces [default: the file's stem]
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// text, md, json or csv
    #[arg(long, default_value = "text", value_parser = format)]
    pub format: TableFormat,
    /// Also draw the runs to this image (.png or .svg)
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

fn format(s: &str) -> Result<TableFormat, String> {
    TableFormat::parse(s).ok_or_else(|| "expected text, md, json or csv".to_string())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let n = args.traces.len();
    if !(MIN_RUNS..=MAX_RUNS).contains(&n) {
        return Err(exit::fail(
            exit::USAGE,
            format!("compare takes {MIN_RUNS} to {MAX_RUNS} traces, got {n}"),
        ));
    }
    if args.label.len() > n {
        return Err(exit::fail(
            exit::USAGE,
            format!("{} labels for {n} traces", args.label.len()),
        ));
    }
    let image = match &args.plot {
        Some(p) => Some((
            p,
            ExportFormat::from_path(p)
                .and_then(ExportFormat::image)
                .ok_or_else(|| {
                    exit::fail(
                        exit::USAGE,
                        format!(
                            "cannot tell the image format of '{}': name it .png or .svg",
                            p.display()
                        ),
                    )
                })?,
        )),
        None => None,
    };
    let (rows, series) = fold_runs(&args.traces, &args.label, image.is_some())?;
    let cmp = compare(rows);
    if let Some((path, fmt)) = image {
        let (w, h) = PLOT_SIZE;
        let bytes = swapsight::export::compare_plot::render_series(&series, &cmp, w, h, fmt)?;
        crate::output::write_file(path, |out| Ok(out.write_all(&bytes)?))?;
    }
    crate::exit::print_stdout(&cmp.render(args.format))?;
    Ok(ExitCode::SUCCESS)
}

/// Each trace's row, and its chart's lines when `plot`, named by `labels`
/// in order (else the file's stem). Each trace streams, once: its report,
/// its row and its chart's lines (thinned to the chart's width as they
/// come) in the same pass. What is held per run is its row and its lines,
/// never its samples. `swapsight mcp`'s compare tool reads runs this way too.
pub(crate) fn fold_runs(
    traces: &[PathBuf],
    labels: &[String],
    plot: bool,
) -> anyhow::Result<(Vec<RunRow>, Vec<RunSeries>)> {
    let n = traces.len();
    let mut series = Vec::with_capacity(n);
    let mut rows = Vec::with_capacity(n);
    for (i, path) in traces.iter().enumerate() {
        let mut reader = crate::input::open_trace(path)?;
        let label = labels.get(i).cloned().unwrap_or_else(|| {
            path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            )
        });
        let mut fold = RowFold::for_header(reader.header());
        let watching = reader.header().watching();
        let mut lines = plot.then(|| SeriesBuilder::new(PLOT_SIZE.0, watching));
        let report = swapsight::report::report_stream(&mut reader, None, |r| {
            fold.push(r);
            if let (Some(b), Record::Sample(s)) = (lines.as_mut(), r) {
                b.push(s);
            }
        })?;
        crate::input::done(path, report.samples, reader.notes(), "compare")?;
        rows.push(fold.row(&label, reader.header(), &report));
        if let Some(b) = lines {
            series.push(b.finish(fold.boundaries()));
        }
    }
    Ok((rows, series))
}
