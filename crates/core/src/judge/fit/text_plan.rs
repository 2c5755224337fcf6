//! The plan in words: each line of the need with its formula and the files
//! its figures came from, and the largest context under each kind of
//! bound.

use std::fmt::Write as _;

use super::kv::thousands;
use super::plan::{Context, Largest, NeedLine};
use super::{gb, Bound, IfOver};

/// The files a line's figures came from (`config.json`), not the flags
/// and defaults, once each.
fn files(line: &NeedLine) -> String {
    let mut out: Vec<&str> = Vec::new();
    for i in &line.inputs {
        let s = i.source.as_str();
        let flag_or_default = s.starts_with("--") || s.starts_with("default") || s.is_empty();
        if !flag_or_default && !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        String::new()
    } else {
        format!(" ({})", out.join(", "))
    }
}

/// `need at 8,192 tokens × 1 sequence (--context), mlx (…), KV at bf16 (…):`
/// and a row per line.
pub fn need_lines(out: &mut String, context: Option<&Context>, lines: &[NeedLine]) {
    match context {
        Some(c) => {
            let s = if c.parallel == 1 { "" } else { "s" };
            let _ =
                writeln!(
                out,
                "\nneed at {} tokens × {} sequence{s} ({}); runtime {} ({}); KV cache at {} ({}):",
                thousands(c.tokens),
                c.parallel,
                if c.asked { "--context" } else { "a short context: --context to change" },
                c.runtime.name(),
                c.runtime_source,
                c.kv_dtype,
                c.kv_dtype_source
            );
        }
        None => {
            let _ = writeln!(out, "\nneed:");
        }
    }
    for l in lines {
        let _ = writeln!(
            out,
            "  {:<20} {:>9} = {}{}",
            l.name,
            gb(l.bytes),
            l.formula,
            files(l)
        );
    }
}

/// The tightest bound of a kind: `up to 38,646 tokens`, and its name.
fn class(largest: &Largest, bounds: &[Bound], over: IfOver) -> Option<(String, &'static str)> {
    let (at, b) = largest
        .bounds
        .iter()
        .zip(bounds)
        .filter(|(_, b)| b.framework.is_none() && b.if_over == over)
        .min_by_key(|(a, _)| a.tokens.map_or(-1, |t| t as i128))?;
    let said = match (at.tokens, at.at_model_max) {
        (None, _) => "at no context (the weights alone are over it)".to_string(),
        (Some(t), true) => format!("to its whole {} tokens", thousands(t)),
        (Some(t), false) if t >= super::need::SEARCH_CAP => {
            format!("beyond {} tokens", thousands(t))
        }
        (Some(t), false) => format!("up to {} tokens", thousands(t)),
    };
    Some((said, b.name))
}

/// `context: fits up to 41,234 tokens before swapping (free memory now);
/// up to 72,000 within physical memory; the model's own maximum is
/// 131,072 (config.json: max_position_embeddings)`.
pub fn largest_line(out: &mut String, largest: &Largest, bounds: &[Bound]) {
    let mut parts = Vec::new();
    if let Some((s, name)) = class(largest, bounds, IfOver::Swaps) {
        parts.push(format!("fits {s} before swapping ({name})"));
    }
    if let Some((s, name)) = class(largest, bounds, IfOver::DoesNotFit) {
        parts.push(format!("{s} within {name}"));
    }
    match (&largest.model_max_tokens, &largest.model_max_source) {
        (Some(m), Some(from)) => parts.push(format!(
            "the model's own maximum is {} ({from})",
            thousands(*m)
        )),
        _ => parts.push("the model's own maximum was not read".into()),
    }
    let _ = writeln!(out, "context: {}", parts.join("; "));
    for (at, b) in largest.bounds.iter().zip(bounds) {
        if let (Some(fw), Some(t)) = (b.framework, at.tokens) {
            let _ = writeln!(
                out,
                "  for {} only: up to {} tokens within its {}",
                fw.label(),
                thousands(t),
                b.name
            );
        }
    }
}

/// `  1.2 GiB estimated vs 1.3 GiB WHAT: error -7.7 % (-100 MiB)`.
fn error_line(
    out: &mut String,
    estimated: u64,
    measured: u64,
    what: &str,
    error: (i64, Option<f64>),
) {
    let pct = error.1.map_or("n/a".to_string(), |p| format!("{p:+.1} %"));
    let sign = if error.0 < 0 { "-" } else { "+" };
    let _ = writeln!(
        out,
        "  {:>9} estimated vs {:>9} {what}: error {pct} ({sign}{})",
        gb(estimated),
        gb(measured),
        gb(error.0.unsigned_abs()),
    );
}

/// `estimated 1.2 GiB vs measured …` lines, as the text prints them, and
/// the need's parts against what the run's counters say each held.
pub(crate) fn comparison_lines(out: &mut String, c: &super::verify::Comparison) {
    let _ = writeln!(out, "estimated vs measured peak:");
    for m in &c.measured {
        error_line(
            out,
            c.estimated_bytes,
            m.bytes,
            &m.name,
            (m.error_bytes, m.error_pct),
        );
    }
    if c.by_line.is_empty() {
        return;
    }
    let _ = writeln!(out, "estimated vs measured, per line:");
    for l in &c.by_line {
        error_line(
            out,
            l.estimated_bytes,
            l.measured_bytes,
            &format!("{} ({})", l.name, l.measured_from),
            (l.error_bytes, l.error_pct),
        );
    }
}
