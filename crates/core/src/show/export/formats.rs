//! Every export format, once: its name (`--format`, `?format=`, the app's
//! command), file extension, media type, label and writer. The shells keep
//! only their own part — `swapsight export`/`plot` a flag, `serve` an HTTP
//! header, the app a save dialog — and which of the formats they offer.

use std::borrow::Cow;
use std::io::{BufRead, Seek, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{csv, perfetto, prometheus, ExportError, NextSample, Skeleton};
use crate::record::trace::{Record, Trace, TraceError, TraceReader, TraceSample};

/// A format a trace can be exported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// The trace itself, as its file holds it.
    Jsonl,
    /// One row per sample and process.
    Csv,
    /// Chrome trace JSON (counter tracks) for ui.perfetto.dev.
    Perfetto,
    /// Prometheus text exposition of the last sample.
    Prometheus,
    /// The chart as a PNG image.
    Png,
    /// The chart as an SVG image.
    Svg,
}

/// What the writers need besides the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// Prometheus: per-process series for at most this many processes.
    pub max_processes: usize,
    /// PNG and SVG: size and lines of the chart.
    #[cfg(feature = "plot")]
    pub plot: super::plot::PlotOptions,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            max_processes: prometheus::DEFAULT_MAX_PROCESSES,
            #[cfg(feature = "plot")]
            plot: super::plot::PlotOptions::default(),
        }
    }
}

impl ExportFormat {
    pub(crate) const ALL: [ExportFormat; 6] = [
        ExportFormat::Jsonl,
        ExportFormat::Csv,
        ExportFormat::Perfetto,
        ExportFormat::Prometheus,
        ExportFormat::Png,
        ExportFormat::Svg,
    ];

    /// What the UI offers for a recording, in its order — the app's save
    /// dialog and `serve`'s `?format=` alike.
    pub const UI: [ExportFormat; 4] = [
        ExportFormat::Jsonl,
        ExportFormat::Csv,
        ExportFormat::Perfetto,
        ExportFormat::Png,
    ];

    /// The name a flag, a query or a command takes.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Csv => "csv",
            ExportFormat::Perfetto => "perfetto",
            ExportFormat::Prometheus => "prometheus",
            ExportFormat::Png => "png",
            ExportFormat::Svg => "svg",
        }
    }

    /// The format named `name` (as [`ExportFormat::name`] spells it).
    pub fn parse(name: &str) -> Option<ExportFormat> {
        ExportFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// `"csv, perfetto or prometheus"`: the names of `formats`, for a
    /// message saying what is expected.
    pub fn names(formats: &[ExportFormat]) -> String {
        match formats {
            [] => String::new(),
            [one] => one.name().to_owned(),
            [rest @ .., last] => {
                let rest: Vec<&str> = rest.iter().map(|f| f.name()).collect();
                format!("{} or {}", rest.join(", "), last.name())
            }
        }
    }

    /// File extension (Perfetto reads `.json`).
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Csv => "csv",
            ExportFormat::Perfetto => "json",
            ExportFormat::Prometheus => "prom",
            ExportFormat::Png => "png",
            ExportFormat::Svg => "svg",
        }
    }

    /// The format a file name asks for, by its extension (any case).
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        ExportFormat::ALL.into_iter().find(|f| f.extension() == ext)
    }

    /// The image a chart format draws; `None` for the other formats.
    #[cfg(feature = "plot")]
    pub fn image(self) -> Option<super::plot::ImageFormat> {
        use super::plot::ImageFormat;
        match self {
            ExportFormat::Png => Some(ImageFormat::Png),
            ExportFormat::Svg => Some(ImageFormat::Svg),
            _ => None,
        }
    }

    /// `trace.jsonl` → `trace.csv` (or `trace.json`, `trace.png`, …).
    pub fn file_name_for(self, trace: &Path) -> String {
        let stem = trace
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("swapsight");
        format!("{stem}.{}", self.extension())
    }

    /// HTTP `Content-Type`.
    pub fn media_type(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "application/x-ndjson",
            ExportFormat::Csv => "text/csv; charset=utf-8",
            ExportFormat::Perfetto => "application/json",
            ExportFormat::Prometheus => prometheus::CONTENT_TYPE,
            ExportFormat::Png => "image/png",
            ExportFormat::Svg => "image/svg+xml",
        }
    }

    /// Name in a save dialog's list of file types.
    pub fn label(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "swapsight trace (JSON Lines)",
            ExportFormat::Csv => "CSV",
            ExportFormat::Perfetto => "Perfetto / Chrome trace",
            ExportFormat::Prometheus => "Prometheus text",
            ExportFormat::Png => "PNG chart",
            ExportFormat::Svg => "SVG chart",
        }
    }

    /// Writes `trace` as this format. JSONL is the trace file itself, not
    /// drawn from a read trace: that one is [`ExportFormat::write_file`]'s.
    pub fn write(
        self,
        trace: &Trace,
        opts: &ExportOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        match self {
            ExportFormat::Jsonl => Err(ExportError::NotDrawn(self.name())),
            ExportFormat::Csv | ExportFormat::Perfetto => Scanned {
                format: self,
                skeleton: Skeleton::of(trace),
                last: None,
            }
            .rows(&mut super::samples_of(trace), out),
            ExportFormat::Prometheus => {
                let snap = prometheus::Snapshot::from_trace(trace).ok_or(ExportError::NoSamples)?;
                let text = prometheus::render(&snap, opts.max_processes);
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(ExportError::io("prometheus"))
            }
            ExportFormat::Png | ExportFormat::Svg => chart(self, trace, opts, out),
        }
    }

    /// Writes the trace at `path` as this format: JSONL as the file holds
    /// it, the others drawn from it as it streams ([`ExportFormat::scan`],
    /// then [`Scanned::write`]): the file is opened (and, but for JSONL,
    /// read through once) before the first byte goes to `out`.
    pub fn write_file(
        self,
        path: &Path,
        opts: &ExportOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        if self == ExportFormat::Jsonl {
            let cannot_read = |source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            };
            let mut file = std::fs::File::open(path).map_err(cannot_read)?;
            std::io::copy(&mut file, out).map_err(ExportError::io(self.name()))?;
            return out.flush().map_err(ExportError::io(self.name()));
        }
        let mut reader = TraceReader::open(path)?;
        self.scan(&mut reader)?.write(&mut reader, opts, out)
    }
}

impl ExportFormat {
    /// The first pass of an export of a streamed trace: what the format
    /// needs besides the samples (the last sample too, for Prometheus).
    /// [`Scanned::write`] does the rest.
    pub fn scan<R: BufRead>(self, reader: &mut TraceReader<R>) -> Result<Scanned, ExportError> {
        let mut skeleton = Skeleton {
            header: Some(reader.header().clone()),
            ..Skeleton::default()
        };
        let mut last = None;
        while let Some(record) = reader.next_record()? {
            match record {
                Record::Sample(s) if self == ExportFormat::Prometheus => {
                    skeleton.sample(&s);
                    last = Some(s);
                }
                r => skeleton.push(r),
            }
        }
        Ok(Scanned {
            format: self,
            skeleton,
            last,
        })
    }
}

/// An export of a streamed trace, its first pass done: how many samples
/// there are is known before a byte is written.
pub struct Scanned {
    format: ExportFormat,
    skeleton: Skeleton,
    last: Option<TraceSample>,
}

impl Scanned {
    /// Samples the first pass found.
    pub fn samples(&self) -> usize {
        self.skeleton.samples
    }

    /// Writes the export: the samples are read again, one at a time (the
    /// reader is rewound to the lines the first pass read).
    pub fn write<R: BufRead + Seek>(
        self,
        reader: &mut TraceReader<R>,
        opts: &ExportOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        let format = self.format;
        if format == ExportFormat::Jsonl {
            return Err(ExportError::NotDrawn(format.name()));
        }
        if format == ExportFormat::Prometheus {
            let (Some(last), Some((_, first_swap))) = (&self.last, self.skeleton.first) else {
                return Err(ExportError::NoSamples);
            };
            let snap = prometheus::Snapshot {
                sample: &last.sample,
                watched: &last.watched,
                states: super::StateTimeline::from_flags(&self.skeleton.flags).final_states(),
                swap_growth_bytes: crate::util::units::signed_diff(
                    last.sample.system.swap_used_bytes,
                    first_swap,
                ),
                forecast: last.forecast.unwrap_or_default(),
                counters: prometheus::last_counters(&self.skeleton.counters),
            };
            let text = prometheus::render(&snap, opts.max_processes);
            return out
                .write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(ExportError::io("prometheus"));
        }
        if matches!(format, ExportFormat::Png | ExportFormat::Svg) {
            // An empty chart would say nothing; the text formats refuse too.
            if self.skeleton.samples == 0 {
                return Err(ExportError::NoSamples);
            }
        }
        reader.rewind()?;
        if matches!(format, ExportFormat::Png | ExportFormat::Svg) {
            #[cfg(feature = "plot")]
            return streamed_chart(format, reader, opts, out);
            #[cfg(not(feature = "plot"))]
            return chart(format, &Trace::default(), opts, out);
        }
        let mut next = || loop {
            match reader.next_record()? {
                Some(Record::Sample(s)) => return Ok(Some(Cow::Owned(s))),
                Some(_) => {}
                None => return Ok(None),
            }
        };
        self.rows(&mut next, out)
    }

    /// The rows of CSV or the events of Perfetto, from the samples `next` yields.
    fn rows(&self, next: &mut NextSample<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        match self.format {
            ExportFormat::Csv => csv::write(&self.skeleton, next, out),
            _ => perfetto::write(&self.skeleton, next, out),
        }
    }
}

#[cfg(feature = "plot")]
fn streamed_chart<R: BufRead + Seek>(
    format: ExportFormat,
    reader: &mut TraceReader<R>,
    opts: &ExportOptions,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let image = format.image().unwrap_or(super::plot::ImageFormat::Png);
    let chart = super::plot::Chart::streamed(reader, &opts.plot)?;
    let bytes = chart.render(&opts.plot, image)?;
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .map_err(ExportError::io(format.name()))
}

impl std::fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(feature = "plot")]
fn chart(
    format: ExportFormat,
    trace: &Trace,
    opts: &ExportOptions,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    use super::plot::{self, ImageFormat};
    // An empty chart would say nothing; the text formats refuse too.
    if trace.samples.is_empty() {
        return Err(ExportError::NoSamples);
    }
    let image = format.image().unwrap_or(ImageFormat::Png);
    let report = crate::judge::report::report(trace, None);
    let bytes = plot::render(trace, &report, &opts.plot, image)?;
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .map_err(ExportError::io(format.name()))
}

#[cfg(not(feature = "plot"))]
fn chart(
    format: ExportFormat,
    _trace: &Trace,
    _opts: &ExportOptions,
    _out: &mut dyn Write,
) -> Result<(), ExportError> {
    Err(ExportError::Draw(format!(
        "this build draws no {} charts (feature `plot` is off)",
        format.name()
    )))
}

#[cfg(test)]
#[path = "formats_tests.rs"]
mod tests;
