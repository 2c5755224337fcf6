//! The report as a person reads it in a terminal.

use std::fmt::Write;

use super::{secs, ProcessReport, Report};
use crate::step::detect::State;
use crate::step::forecast::{short_eta, Outcome};
use crate::step::pressure::{Level, PressureSummary};
use crate::util::units::format_bytes;

impl Report {
    /// The report as a person reads it in a terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.run_text(&mut out);
        self.tables_text(&mut out);
        for p in &self.processes {
            process_text(&mut out, p);
        }
        if self.processes.is_empty() {
            let _ = writeln!(out, "\n(no processes in the trace)");
        }
        self.read_text(&mut out);
        out
    }

    /// The verdict, the run's figures, its scope, the memory outside the
    /// footprints, pressure and the forecasts.
    fn run_text(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "verdict: {}  ({})",
            self.verdict.label().to_uppercase(),
            self.summary
        );
        if let Some(cmd) = &self.command {
            let _ = writeln!(out, "command: {}", cmd.join(" "));
        }
        let _ = writeln!(
            out,
            "run: {} over {} samples; memory {}; swap grew {} (tolerance {}); free memory at least {:.0} %",
            secs(self.duration_ms),
            self.samples,
            format_bytes(self.phys_bytes as i64),
            format_bytes(self.swap_growth_bytes),
            format_bytes(self.swap_tolerance_bytes as i64),
            self.min_free_pct
        );
        if let Some(off) = self.swap_off {
            let _ = writeln!(
                out,
                "swap could not grow: {}; a swap budget could not be broken, nor a false fit show as swap",
                off.to_words()
            );
        }
        if self.scopes.len() > 1 {
            let _ = writeln!(
                out,
                "scopes: the run moved between {} cgroups, each with its own figures (judged in the worst):",
                self.scopes.len()
            );
            for scope in &self.scopes {
                let _ = writeln!(out, "{}", scope.to_text());
            }
        } else if let Some(scope) = &self.scope {
            let _ = writeln!(out, "{}", scope.to_text());
        }
        let f = &self.footprints;
        let unreadable = match f.max_unreadable {
            0 => String::new(),
            1 => " (1 process unreadable)".to_string(),
            n => format!(" ({n} processes unreadable)"),
        };
        let _ = writeln!(
            out,
            "memory not explained by footprints: {} at the start, {} at its peak (+{}); readable footprints covered at least {:.0} % of used memory{unreadable}",
            format_bytes(f.unexplained_first_bytes),
            format_bytes(f.unexplained_peak_bytes),
            format_bytes(f.unexplained_growth_bytes),
            f.min_coverage * 100.0,
        );
        if f.gpu_peak_bytes > 0 || f.outside_footprint_peak_bytes > 0 {
            let _ = writeln!(
                out,
                "GPU memory up to {}; outside the footprints up to {}",
                format_bytes(f.gpu_peak_bytes as i64),
                format_bytes(f.outside_footprint_peak_bytes as i64)
            );
        }
        if let Some(g) = &f.gpu_at_peak {
            let _ = writeln!(out, "at that peak: {}", g.to_words());
        }
        if let Some(w) = &self.swap_written {
            let _ = writeln!(out, "swap written: {}", w.to_words());
        }
        if let Some(p) = &self.pressure {
            let _ = writeln!(out, "{}", pressure_line(p));
        }
        for o in &self.forecasts {
            let _ = writeln!(out, "{}", forecast_line(o));
        }
    }

    /// The counters' and the phases' tables, indented under their titles.
    fn tables_text(&self, out: &mut String) {
        if !self.counters.is_empty() {
            let _ = writeln!(out, "\ncounters:");
            for line in super::counters::to_text(&self.counters).lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        for c in &self.caches {
            let _ = writeln!(out, "allocator cache: {}", c.words);
        }
        if !self.phases.is_empty() {
            let _ = writeln!(out, "\nby phase:");
            for line in super::by_phase::to_text(&self.phases).lines() {
                let _ = writeln!(out, "  {line}");
            }
            let _ = writeln!(out, "  run: {}", self.verdict.label());
        }
    }

    /// What the read of the trace skipped or found cut off.
    fn read_text(&self, out: &mut String) {
        if self.skipped_lines > 0 {
            let _ = writeln!(out, "\nskipped {} malformed line(s):", self.skipped_lines);
            for p in self.problems.iter().take(10) {
                let _ = writeln!(out, "  {p}");
            }
            let shown = self.problems.len().min(10);
            if self.skipped_lines > shown {
                let _ = writeln!(out, "  … and {} more", self.skipped_lines - shown);
            }
        }
        if self.truncated_last_line {
            let _ = writeln!(
                out,
                "\n(the last line was cut off: the recorder was stopped mid-write)"
            );
        }
    }
}

/// One process: its badge and name, its figures, its evidence.
fn process_text(out: &mut String, p: &ProcessReport) {
    let _ = writeln!(
        out,
        "\n{} {} (pid {}){}",
        badge(p.verdict),
        p.name,
        p.pid,
        if p.watched { " [watched]" } else { "" }
    );
    let _ = writeln!(
        out,
        "  peak footprint {} at {}; swap growth {}; min free {:.0} %; page-ins {:.0}/s (peak {:.0}/s){}",
        format_bytes(p.peak_footprint_bytes as i64),
        secs(p.peak_footprint_at_ms),
        format_bytes(p.swap_growth_bytes),
        p.min_free_pct,
        p.pageins_per_s,
        p.peak_pageins_per_s,
        p.first_flag_ms
            .map(|t| format!("; first flagged at {}", secs(t)))
            .unwrap_or_default()
    );
    if p.peak_gpu_bytes.is_some() || p.peak_outside_footprint_bytes.is_some() {
        let _ = writeln!(
            out,
            "  GPU memory up to {}; outside the footprint up to {}",
            format_bytes(p.peak_gpu_bytes.unwrap_or(0) as i64),
            format_bytes(p.peak_outside_footprint_bytes.unwrap_or(0) as i64)
        );
    }
    let _ = writeln!(out, "  {}", p.evidence);
}

fn badge(s: State) -> &'static str {
    match s {
        State::Fits => "[fits]         ",
        State::HiddenMemory => "[hidden memory]",
        State::Overflow => "[OVERFLOW]     ",
        State::FalseFit => "[FALSE FIT]    ",
    }
}

/// `pressure: peak warning; normal 12.0s, warning 8.0s, critical 0.0s; PSI
/// some avg10 up to 13.9 %, full up to 2.2 %; tasks stalled 2.7s`
fn pressure_line(p: &PressureSummary) -> String {
    let times = Level::ALL
        .iter()
        .map(|&l| format!("{l} {}", secs(p.levels.ms_at(l))))
        .collect::<Vec<_>>()
        .join(", ");
    let mut line = format!("pressure: peak {}; {times}", p.levels.peak);
    if let Some(some) = p.some_avg10_peak {
        line += &format!("; PSI some avg10 up to {some:.1} %");
        if let Some(full) = p.full_avg10_peak {
            line += &format!(", full up to {full:.1} %");
        }
    }
    if let Some(ms) = p.some_stall_ms {
        line += &format!("; tasks stalled {}", secs(ms));
    }
    line
}

/// `forecast: swap budget — fired at 15.5s saying ~9 s; reached at 23.8s,
/// 8.3s later (estimate +14 %)`
fn forecast_line(o: &Outcome) -> String {
    let what = match o.wall {
        Some(wall) => format!("{} ({})", o.limit.label(), wall.label()),
        None => o.limit.label().to_string(),
    };
    let fired = o
        .fired_ms
        .zip(o.estimate_s)
        .map(|(t, est)| format!("fired at {} saying {}", secs(t), short_eta(est)));
    let reached = o.reached_ms.map(|t| format!("reached at {}", secs(t)));
    match (fired, reached) {
        (Some(f), Some(r)) => {
            let lead = o
                .lead_s()
                .map_or_else(String::new, |l| format!(", {l:.1}s later"));
            let err = o
                .error()
                .map_or_else(String::new, |e| format!(" (estimate {:+.0} %)", e * 100.0));
            format!("forecast: {what} — {f}; {r}{lead}{err}")
        }
        (Some(f), None) => format!("forecast: {what} — {f}; not reached"),
        (None, Some(r)) => format!("forecast: {what} — {r} with no forecast before it"),
        (None, None) => format!("forecast: {what} — nothing"),
    }
}
