//! `swapsight export`: a trace as CSV, Chrome trace JSON (Perfetto) or
//! Prometheus text, to stdout or a file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use swapsight::export::{prometheus, ExportError, ExportFormat, ExportOptions};

/// The formats `export` writes (charts are `plot`'s).
const FORMATS: [ExportFormat; 3] = [
    ExportFormat::Csv,
    ExportFormat::Perfetto,
    ExportFormat::Prometheus,
];

/// `--format`: one of [`FORMATS`].
fn format(s: &str) -> Result<ExportFormat, String> {
    ExportFormat::parse(&s.to_ascii_lowercase())
        .filter(|f| FORMATS.contains(f))
        .ok_or_else(|| format!("expected {}", ExportFormat::names(&FORMATS)))
}

/// The format a file name asks for: `.csv`, `.json`, `.prom`.
fn format_of(path: &std::path::Path) -> Option<ExportFormat> {
    ExportFormat::from_path(path).filter(|f| FORMATS.contains(f))
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Column, series and metric names with their units: docs/exports.md.

Examples:
  swapsight export run.jsonl --format csv -o run.csv
  swapsight export run.jsonl -o run.json                      Perfetto; open it in ui.perfetto.dev
  swapsight export run.jsonl --format prometheus              the last sample, as /metrics shows it

A malformed line is named on stderr and skipped, as `swapsight report` does."
)]
pub struct Args {
    /// Trace to read (written by `swapsight record` or `guard`)
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Output format: csv, perfetto or prometheus [default: from the -o
    /// extension: .csv, .json, .prom]
    #[arg(short, long, value_name = "FORMAT", value_parser = format)]
    pub format: Option<ExportFormat>,
    /// File to write [default: stdout]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Prometheus: per-process series for at most N processes (flagged,
    /// then watched, then largest)
    #[arg(long, value_name = "N", default_value_t = prometheus::DEFAULT_MAX_PROCESSES, value_parser = crate::args::count, allow_hyphen_values = true)]
    pub processes: usize,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = args
        .format
        .or_else(|| args.output.as_deref().and_then(format_of))
        .ok_or_else(|| {
            crate::exit::fail(
                crate::exit::USAGE,
                "which format? add --format csv, perfetto or prometheus (see --help)",
            )
        })?;
    // Streamed: what the format needs besides the samples in one pass, then
    // the samples again, one at a time, as they are written.
    let mut reader = crate::input::open_trace(&args.trace)?;
    let scanned = format.scan(&mut reader)?;
    crate::input::done(&args.trace, scanned.samples(), reader.notes(), "export")?;
    let opts = ExportOptions {
        max_processes: args.processes,
        ..ExportOptions::default()
    };
    let write = |out: &mut dyn Write| scanned.write(&mut reader, &opts, out);
    // An I/O failure is said once, with the path: "cannot write FILE: <why>".
    let plain = |e: ExportError| match e {
        ExportError::Io { source, .. } => anyhow::Error::from(source),
        e => e.into(),
    };
    match &args.output {
        Some(path) => crate::output::write_file(path, |out| write(out).map_err(plain))?,
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match write(&mut out) {
                Err(ExportError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.map_err(plain).context("cannot write to stdout")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
