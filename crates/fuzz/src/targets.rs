//! The fuzz targets. Each takes one input and returns `Err` with the broken
//! property; a panic is caught by the runner and is a failure too.
//!
//! Properties: nothing panics; every rejection of a trace is one line that
//! names the file and the line; what the reader keeps passes its own range
//! checks and its lists of problems stay capped, and no string it keeps
//! holds a character the cleaning rule replaces; each exporter's output is
//! well-formed for its format; cleaned text holds no control or bidi
//! character, cleaning it again changes nothing, and ordinary text is kept.

use std::path::Path;
use std::time::Duration;

use swapsight::export::{self, csv::text_cell, plot, prometheus, Format};
use swapsight::text;
use swapsight::trace::{self, Record, Trace, TraceError, KEPT_PROBLEMS};

use crate::alloc::measure;
use crate::cli_args;

/// The targets, in the order the runner takes them.
pub const ALL: [&str; 9] = [
    "trace",
    "report",
    "csv",
    "perfetto",
    "prometheus",
    "plot",
    "units",
    "text",
    "model",
];

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

fn one_line(what: &str, text: &str) -> Result<(), String> {
    ensure!(
        !text.is_empty() && !text.contains('\n'),
        "{what} is not one line: {text:?}"
    );
    Ok(())
}

/// Reads `bytes` as the file `f.jsonl` and checks what the reader says.
pub fn read(bytes: &[u8]) -> Result<Option<Trace>, String> {
    let lines = bytes.split(|&b| b == b'\n').count();
    match measure(|| trace::read_from(bytes, Path::new("f.jsonl"))) {
        Err(e) => {
            let msg = e.to_string();
            one_line("a rejection", &msg)?;
            if !matches!(e, TraceError::Empty { .. }) {
                // "f.jsonl:7: …" or "f.jsonl:7-1006: …"
                let rest = msg.strip_prefix("f.jsonl:").unwrap_or("");
                let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let n: usize = n
                    .parse()
                    .map_err(|_| format!("no line number in {msg:?}"))?;
                ensure!((1..=lines).contains(&n), "line {n} of {lines} in {msg:?}");
            }
            Ok(None)
        }
        Ok(t) => {
            ensure!(t.header.is_some(), "a trace without a header");
            ensure!(
                t.problems.len() <= KEPT_PROBLEMS && t.problems.len() <= t.bad_lines,
                "{} problems kept of {} bad lines",
                t.problems.len(),
                t.bad_lines
            );
            for p in &t.problems {
                one_line("a skipped line's reason", &p.to_string())?;
                ensure!(
                    (1..=lines).contains(&p.line),
                    "problem on line {} of {lines}",
                    p.line
                );
            }
            let header = Record::Header(t.header().clone());
            let records = t
                .samples
                .iter()
                .cloned()
                .map(Record::Sample)
                .chain(t.flags.iter().cloned().map(Record::Flag))
                .chain(t.events.iter().cloned().map(Record::Event));
            let marks = t.marks.iter().cloned().map(Record::Mark);
            for r in std::iter::once(header).chain(records).chain(marks) {
                trace::check(&r).map_err(|e| format!("kept a record that fails its check: {e}"))?;
                if !matches!(r, Record::Sample(_)) {
                    all_clean(&serde_json::to_string(&r).map_err(|e| format!("{e}"))?)?;
                }
            }
            // Samples are most of a trace and hold two strings a process:
            // checked as they are, since serialising each sample again would
            // cost a third of the inputs a run tries.
            for p in t.samples.iter().flat_map(|s| &s.sample.processes) {
                for s in std::iter::once(&p.name).chain(&p.cmdline) {
                    ensure!(
                        !s.chars().any(text::is_unsafe),
                        "the reader kept {s:?} uncleaned"
                    );
                }
            }
            Ok(Some(t))
        }
    }
}

/// No string of a record, as JSON, holds a character the cleaning rule
/// replaces: raw, or escaped (JSON escapes C0 controls, `\n` or `\u001b`; a
/// backslash there starts an escape, as no key holds one). Cheaper than a
/// walk over a `serde_json::Value`, and blind to which field it is.
fn all_clean(json: &str) -> Result<(), String> {
    if let Some(c) = json.chars().find(|&c| text::is_unsafe(c)) {
        return Err(format!("the reader kept {c:?} in {json:.300}"));
    }
    let b = json.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let control = match b.get(i + 1) {
            Some(b'b' | b'f' | b'n' | b'r' | b't') => true,
            Some(b'u') => {
                b.get(i + 2..i + 4) == Some(b"00") && matches!(b.get(i + 4), Some(b'0' | b'1'))
            }
            _ => false,
        };
        ensure!(
            !control,
            "the reader kept a control character in {json:.300}"
        );
        i += 2;
    }
    Ok(())
}

pub fn trace_target(bytes: &[u8]) -> Result<(), String> {
    read(bytes).map(drop)
}

pub fn report_target(bytes: &[u8]) -> Result<(), String> {
    let Some(t) = read(bytes)? else {
        return Ok(());
    };
    let r = measure(|| swapsight::report::report(&t, None));
    ensure!(
        r.samples == t.samples.len(),
        "report counts {} samples",
        r.samples
    );
    ensure!(
        r.skipped_lines == t.bad_lines,
        "report skipped {}",
        r.skipped_lines
    );
    let text = measure(|| r.to_text());
    ensure!(text.starts_with("verdict: "), "report text: {text:.200}");
    serde_json::to_string(&r).map_err(|e| format!("report JSON: {e}"))?;
    Ok(())
}

fn export(bytes: &[u8], format: Format) -> Result<Option<Vec<u8>>, String> {
    let Some(t) = read(bytes)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    match measure(|| export::write(&t, format, &mut out)) {
        Ok(()) => Ok(Some(out)),
        Err(export::ExportError::NoSamples) if t.samples.is_empty() => Ok(None),
        Err(e) => Err(format!("{format} export failed: {e}")),
    }
}

pub fn csv_target(bytes: &[u8]) -> Result<(), String> {
    if let Some(out) = export(bytes, Format::Csv)? {
        ensure!(
            out.starts_with(b"time_s,unix_time_ms,"),
            "CSV without its header row"
        );
    }
    Ok(())
}

pub fn perfetto_target(bytes: &[u8]) -> Result<(), String> {
    if let Some(out) = export(bytes, Format::Perfetto)? {
        let v: serde_json::Value = serde_json::from_slice(&out)
            .map_err(|e| format!("Perfetto output is not JSON: {e}"))?;
        ensure!(
            v["traceEvents"].is_array(),
            "Perfetto output without traceEvents"
        );
    }
    Ok(())
}

pub fn prometheus_target(bytes: &[u8]) -> Result<(), String> {
    let Some(t) = read(bytes)? else {
        return Ok(());
    };
    let Some(snap) = prometheus::Snapshot::from_trace(&t) else {
        ensure!(t.samples.is_empty(), "no snapshot of a trace with samples");
        return Ok(());
    };
    let text = measure(|| prometheus::render(&snap, prometheus::DEFAULT_MAX_PROCESSES));
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        // `name{labels} value`: the value is the last field and a number.
        let value = line.rsplit(' ').next().unwrap_or("");
        let ok = value.parse::<f64>().is_ok() || matches!(value, "NaN" | "+Inf" | "-Inf");
        ensure!(ok && line.contains(' '), "bad exposition line {line:?}");
    }
    Ok(())
}

pub fn plot_target(bytes: &[u8]) -> Result<(), String> {
    let Some(t) = read(bytes)? else {
        return Ok(());
    };
    if t.samples.is_empty() {
        return Ok(());
    }
    let r = measure(|| swapsight::report::report(&t, None));
    let opts = plot::PlotOptions {
        width: plot::MIN_SIDE,
        height: plot::MIN_SIDE,
        processes: 3,
        all_processes: false,
    };
    match measure(|| plot::svg(&t, &r, &opts)) {
        Ok(svg) => ensure!(svg.starts_with("<svg"), "not an SVG: {svg:.100}"),
        Err(e) => one_line("a plot error", &e.to_string())?,
    }
    Ok(())
}

/// Sizes, durations and counts as typed on the command line.
pub fn units_target(s: &str) -> Result<(), String> {
    use swapsight::units;
    let _ = units::parse_size(s);
    if let Ok(d) = units::parse_duration(s) {
        let _ = units::format_duration(d);
    }
    for result in [
        cli_args::size(s).map(|b| {
            (b > 0 && b <= trace::MAX_BYTES)
                .then_some(())
                .ok_or(format!("size {b}"))
        }),
        cli_args::interval(s).map(|d| {
            (cli_args::MIN_INTERVAL..=cli_args::MAX_INTERVAL)
                .contains(&d)
                .then_some(())
                .ok_or(format!("interval {d:?}"))
        }),
        cli_args::duration(s).map(|d| {
            (Duration::from_millis(1)..=cli_args::MAX_DURATION)
                .contains(&d)
                .then_some(())
                .ok_or(format!("duration {d:?}"))
        }),
        cli_args::count(s).map(|n| {
            (s.trim().parse::<usize>() == Ok(n))
                .then_some(())
                .ok_or(format!("count {n}"))
        }),
        cli_args::percent(s).map(|p| {
            (0.0..=100.0)
                .contains(&p)
                .then_some(())
                .ok_or(format!("percent {p}"))
        }),
    ] {
        match result {
            Ok(Ok(())) => {}
            Ok(Err(what)) => return Err(format!("{s:?} accepted out of bounds: {what}")),
            Err(why) => one_line("an argument error", &why)?,
        }
    }
    let _ = units::format_bytes(units::signed_diff(s.len() as u64, u64::MAX));
    Ok(())
}

/// The bidi controls (Unicode `Bidi_Control`), listed here apart from the
/// rule so that the property does not take the rule's word for it.
const BIDI_CONTROLS: [char; 12] = [
    '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// The cleaning rule for text from outside: what it leaves holds no control
/// or bidi character, each character is kept or replaced by `?` one for one,
/// cleaning twice changes nothing, ordinary text (`ordinary`: other scripts,
/// emoji) is kept as it is, and the CSV cell of cleaned text starts no formula.
pub fn text_target(s: &str, ordinary: bool) -> Result<(), String> {
    let cleaned = measure(|| text::clean(s));
    if let Some(c) = cleaned
        .chars()
        .find(|c| c.is_control() || BIDI_CONTROLS.contains(c))
    {
        return Err(format!("{s:?} cleaned to {cleaned:?}, which holds {c:?}"));
    }
    ensure!(
        cleaned.chars().count() == s.chars().count()
            && s.chars()
                .zip(cleaned.chars())
                .all(|(a, b)| a == b || b == text::REPLACEMENT),
        "{s:?} cleaned to {cleaned:?}: not one for one"
    );
    ensure!(
        text::clean(&cleaned) == cleaned,
        "cleaning {cleaned:?} again changes it"
    );
    ensure!(
        !ordinary || cleaned == s,
        "ordinary text {s:?} cleaned to {cleaned:?}"
    );
    let cell = text_cell(&cleaned);
    ensure!(
        !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
        "CSV cell {cell:?} starts a formula"
    );
    Ok(())
}

#[cfg(test)]
#[path = "targets_tests.rs"]
mod tests;

/// A model's file as `fit` reads it (`kind` says which reader): a
/// rejection is one line; what is read gives a plan at two contexts whose
/// need does not shrink as the context grows, and whose words are each one
/// line.
pub fn model_target(kind: crate::models::Kind, bytes: &[u8]) -> Result<(), String> {
    use crate::models::Kind;
    use swapsight::fit::model::{self, safetensors};
    let mut described = swapsight::fit::Described::default();
    match kind {
        Kind::Config => match measure(|| model::config::from_config(bytes, "config.json")) {
            Ok(d) => described.description = Some(d),
            Err(why) => return one_line("a config's rejection", &why),
        },
        Kind::Safetensors => {
            let len = bytes.len() as u64;
            let header = measure(|| safetensors::header_len(bytes.get(..8).unwrap_or(bytes), len));
            let n = match header {
                Ok(n) => n,
                Err(why) => return one_line("a safetensors rejection", &why),
            };
            ensure!(
                n.saturating_add(8) <= len,
                "a header of {n} bytes past the file's {len}"
            );
            let json = &bytes[8..8 + n as usize];
            match measure(|| safetensors::sum_header(json, len - 8 - n)) {
                Ok(sum) => described.tensors = Some((sum, 1)),
                Err(why) => return one_line("a safetensors rejection", &why),
            }
        }
        Kind::Gguf => match measure(|| model::gguf::read_metadata(bytes)) {
            Ok(m) => {
                described.description = Some(measure(|| model::from_gguf_metadata(&m, "m.gguf")))
            }
            Err(model::gguf::GgufError::Bad(why)) => return one_line("a GGUF rejection", &why),
            Err(model::gguf::GgufError::Truncated) => return Ok(()),
        },
    }
    let figures = swapsight::fit::Figures {
        os: "linux".into(),
        system: swapsight::SystemSample {
            phys_bytes: 64 << 30,
            free_pct: 50.0,
            ..Default::default()
        },
        ..Default::default()
    };
    let plan_at = |tokens: u64| {
        let ask = swapsight::fit::Ask {
            context: Some(tokens),
            ..Default::default()
        };
        let model = swapsight::fit::Model::Size {
            bytes: 4 << 30,
            given: "4G".into(),
        };
        measure(|| swapsight::fit::plan(model, &described, None, &figures, &ask))
    };
    let (short, long) = (plan_at(1024), plan_at(65536));
    ensure!(
        long.needed_bytes >= short.needed_bytes,
        "the need shrank from {} at 1k to {} at 64k",
        short.needed_bytes,
        long.needed_bytes
    );
    for a in [&short, &long] {
        one_line("a plan's summary", &a.summary)?;
        for l in &a.need {
            one_line("a need line's formula", &l.formula)?;
        }
        let json = serde_json::to_string(a).map_err(|e| format!("plan JSON: {e}"))?;
        all_clean(&json)?;
    }
    Ok(())
}
