//! The answer in words: one summary line, then what was counted, each bound
//! with its figure and source, the settings that would make it fit, notes.

use std::fmt::Write as _;
use std::time::Duration;

use super::{Answer, Bound, BoundId, Framework, IfOver, Model, Verdict};
use crate::util::units::{format_bytes, format_duration, format_growth, thousands};

/// Files (and files left out) listed one by one; the rest are summed.
const LISTED: usize = 10;

pub(crate) fn gb(b: u64) -> String {
    format_bytes(i64::try_from(b).unwrap_or(i64::MAX))
}

fn named(b: &Bound) -> String {
    format!("{} ({})", b.name, gb(b.bytes))
}

fn joined(bounds: &[&Bound]) -> String {
    bounds
        .iter()
        .map(|b| named(b))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `fits only by swapping: needs 12.0 GiB, above free memory now (9.1 GiB),
/// within physical memory (23.5 GiB)`.
pub fn summary(verdict: Verdict, need: u64, tokens: Option<u64>, bounds: &[Bound]) -> String {
    let general: Vec<&Bound> = bounds.iter().filter(|b| b.framework.is_none()).collect();
    let over: Vec<&Bound> = general.iter().copied().filter(|b| b.over).collect();
    let hard_within = general
        .iter()
        .copied()
        .filter(|b| !b.over && b.if_over == IfOver::DoesNotFit)
        .min_by_key(|b| b.bytes);
    let at = tokens.map_or(String::new(), |t| {
        format!(" at {} tokens", super::kv::thousands(t))
    });
    let head = format!("{}: needs {}{at}", verdict.label(), gb(need));
    match verdict {
        Verdict::Fits => match general.iter().min_by_key(|b| b.bytes) {
            Some(b) => format!(
                "{head}; the closest bound is {}, {} to spare",
                named(b),
                gb(b.bytes - need)
            ),
            None => head,
        },
        Verdict::FitsOnlyBySwapping => {
            let within = hard_within.map_or(String::new(), |b| format!(", within {}", named(b)));
            format!("{head}, above {}{within}", joined(&over))
        }
        Verdict::DoesNotFit => {
            let hard: Vec<&Bound> = over
                .iter()
                .copied()
                .filter(|b| b.if_over == IfOver::DoesNotFit)
                .collect();
            format!("{head}, above {}", joined(&hard))
        }
    }
}

fn consequence(b: &Bound, need: u64) -> String {
    let short = gb(need.saturating_sub(b.bytes));
    match (b.if_over, b.framework) {
        (IfOver::DoesNotFit, _) => format!("{short} over: does not fit"),
        (IfOver::Raises, _) => {
            format!("{short} over: PyTorch raises \"MPS backend out of memory\"")
        }
        (IfOver::Swaps, Some(Framework::Mlx)) => {
            format!("{short} over: MLX waits for memory to free, then allocates past it")
        }
        (IfOver::Swaps, _)
            if matches!(
                b.id,
                BoundId::GpuWiredLimit | BoundId::RecommendedWorkingSet
            ) =>
        {
            format!("{short} over: past it Metal pages the GPU's memory")
        }
        (IfOver::Swaps, _) => format!("{short} short: the rest would come from swap"),
    }
}

fn model_lines(out: &mut String, model: &Model) {
    match model {
        Model::Size { bytes, given } => {
            let _ = writeln!(out, "model: {given} ({}, as given)", gb(*bytes));
        }
        Model::Files(w) => {
            let n = w.files.len();
            let by = if w.indexes.is_empty() {
                String::new()
            } else {
                format!(" (the shards {} names)", w.indexes.join(", "))
            };
            let s = if n == 1 { "" } else { "s" };
            let _ = writeln!(
                out,
                "model: {} — {n} file{s}, {} ({} bytes){by}",
                w.path,
                gb(w.bytes),
                thousands(w.bytes)
            );
            // Each file's exact size beside the binary figure: the digits
            // `ls -l` prints, and the hub's decimal "4.98 GiB" is their start
            // (docs/units.md).
            let listed = &w.files[..n.min(LISTED)];
            let width = listed
                .iter()
                .map(|f| thousands(f.bytes).len())
                .max()
                .unwrap_or(0);
            for f in listed {
                let link = f
                    .link
                    .as_ref()
                    .map_or(String::new(), |l| format!(" -> {l}"));
                let _ = writeln!(
                    out,
                    "  {:>9}  {:>width$} bytes  {}{link}",
                    gb(f.bytes),
                    thousands(f.bytes),
                    f.path
                );
            }
            if n > LISTED {
                let rest: u64 =
                    crate::util::units::saturating_sum(w.files[LISTED..].iter().map(|f| f.bytes));
                let _ = writeln!(out, "  {:>9}  … and {} more files", gb(rest), n - LISTED);
            }
            for l in w.left_out.iter().take(LISTED) {
                let _ = writeln!(out, "  left out {}  {}: {}", gb(l.bytes), l.path, l.why);
            }
            if w.left_out.len() > LISTED {
                let _ = writeln!(
                    out,
                    "  left out: {} more (--json lists them)",
                    w.left_out.len() - LISTED
                );
            }
            if !w.missing.is_empty() {
                let more = w.missing.len().saturating_sub(LISTED);
                let more = if more > 0 {
                    format!(" and {more} more (--json lists them)")
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "  missing: {}{more} (named by the index, not there: a loader would fail)",
                    w.missing[..w.missing.len().min(LISTED)].join(", ")
                );
            }
        }
    }
}

impl Answer {
    /// The answer as the command line prints it.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}\n", self.summary);
        model_lines(&mut out, &self.model);
        if let Some(p) = &self.past_run {
            let on = match &p.command {
                Some(c) => format!("{c} on {}", p.hostname),
                None => p.hostname.clone(),
            };
            let _ = writeln!(
                out,
                "past run: {} — peak footprint {} of {} at {} ({on}, {}, {}; that run: {}, swap grew {})",
                p.path,
                gb(p.peak_footprint_bytes),
                p.of.words(),
                format_duration(Duration::from_millis(p.peak_at_ms)),
                p.os,
                gb(p.phys_bytes),
                p.verdict.label(),
                format_growth(p.swap_growth_bytes)
            );
            let why = if self.needed_bytes > self.model_bytes {
                format!(
                    "the past run's peak, above the model's {}",
                    gb(self.model_bytes)
                )
            } else {
                "the model, at or above the past run's peak".into()
            };
            let _ = writeln!(out, "needs {}: {why}", gb(self.needed_bytes));
        }
        if let Some(c) = &self.comparison {
            super::text_plan::comparison_lines(&mut out, c);
        }
        super::text_plan::need_lines(&mut out, self.context.as_ref(), &self.need);
        if let Some(l) = &self.largest_context {
            super::text_plan::largest_line(&mut out, l, &self.bounds);
        }
        let _ = writeln!(out, "\nbounds (needs {}):", gb(self.needed_bytes));
        let mut framework = None;
        for b in &self.bounds {
            if b.framework.is_some() && b.framework != framework {
                framework = b.framework;
                let fw = b.framework.map_or("", Framework::label);
                let _ = writeln!(out, "  for {fw} only (not in the answer above):");
            }
            let (mark, then) = if b.over {
                ("OVER", format!(": {}", consequence(b, self.needed_bytes)))
            } else {
                ("ok  ", String::new())
            };
            let _ = writeln!(
                out,
                "  {mark} {:>9}  {} — {}{then}",
                gb(b.bytes),
                b.name,
                b.source
            );
        }
        // Bounds left out for the same reason, on one line.
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for s in &self.skipped {
            match groups.iter_mut().find(|(why, _)| *why == s.why) {
                Some((_, names)) => names.push(s.name),
                None => groups.push((&s.why, vec![s.name])),
            }
        }
        if !groups.is_empty() {
            let _ = writeln!(out, "not here:");
            for (why, names) in groups {
                let _ = writeln!(out, "  {}: {why}", names.join(", "));
            }
        }
        if !self.settings.is_empty() {
            let _ = writeln!(out, "\nwhat would make it fit:");
            for s in &self.settings {
                let _ = writeln!(out, "  {}\n    {}\n    risk: {}", s.line, s.effect, s.risk);
            }
        }
        let model_notes = match &self.model {
            Model::Files(w) => w.notes.as_slice(),
            Model::Size { .. } => &[],
        };
        if !model_notes.is_empty() || !self.notes.is_empty() {
            let _ = writeln!(out, "\nnotes:");
            for n in model_notes.iter().chain(&self.notes) {
                let _ = writeln!(out, "  - {n}");
            }
        }
        out
    }
}
