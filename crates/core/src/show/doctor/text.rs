//! The doctor's report as a person reads it (and pastes into a bug
//! report): a table of swapsight's figures beside the tools', and the
//! number formats both sides use. Every text from outside goes through
//! [`clean_text`].

use super::{Report, Row, Status, Unit};

impl Report {
    /// The table a person reads (and pastes into a bug report).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "swapsight doctor on {} (kernel {}, {}); the tools read within {} ms\n",
            clean_text(&self.os_version, 120),
            clean_text(&self.kernel, 80),
            clean_text(&self.os, 40),
            self.span_ms
        ));
        if let Some(c) = self.child {
            out.push_str(&format!(
                "child: pid {} holding {} of touched memory\n",
                c.pid,
                format_bytes(c.size_bytes as f64)
            ));
        }
        out.push('\n');
        let header = [
            "figure",
            "swapsight",
            "tool",
            "difference",
            "tolerance",
            "",
            "read with",
        ];
        let mut cells: Vec<[String; 7]> = vec![header.map(String::from)];
        for r in &self.rows {
            cells.push([
                clean_text(&r.figure, 60),
                r.swapsight.map_or("-".into(), |v| show(v, r.unit)),
                r.tool.map_or("-".into(), |v| show(v, r.unit)),
                r.difference.map_or("-".into(), |v| show_signed(v, r.unit)),
                r.tolerance_text.clone(),
                status_word(r.status).into(),
                clean_text(&r.tool_name, 80),
            ]);
        }
        let widths: Vec<usize> = (0..7)
            .map(|i| {
                cells
                    .iter()
                    .map(|c| c[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for c in &cells {
            let mut line = String::new();
            for (i, cell) in c.iter().enumerate() {
                let pad = widths[i].saturating_sub(cell.chars().count());
                // Figures right-aligned, words left-aligned.
                if (1..=3).contains(&i) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if i + 1 < c.len() {
                        line.push_str(&" ".repeat(pad));
                    }
                }
                if i + 1 < c.len() {
                    line.push_str("  ");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        let notes: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.note.is_some() && r.status != Status::Ok)
            .collect();
        if !notes.is_empty() {
            out.push('\n');
            for r in notes {
                out.push_str(&format!(
                    "{} ({}): {}\n",
                    clean_text(&r.figure, 60),
                    status_word(r.status),
                    clean_text(r.note.as_deref().unwrap_or(""), 300)
                ));
            }
        }
        if !self.missing_tools.is_empty() {
            out.push('\n');
            for m in &self.missing_tools {
                out.push_str(&format!(
                    "missing tool: {} ({})\n",
                    clean_text(&m.tool, 40),
                    clean_text(&m.why, 200)
                ));
            }
        }
        if !self.tools.is_empty() {
            let each: Vec<String> = self
                .tools
                .iter()
                .map(|t| format!("{} {}", clean_text(&t.tool, 40), clean_text(&t.path, 200)))
                .collect();
            out.push_str(&format!("\ntools: {}\n", each.join(", ")));
        }
        out.push_str(&format!(
            "\n{} ok, {} off, {} unreadable, {} for reference\n",
            self.count(Status::Ok),
            self.count(Status::Off),
            self.count(Status::Unreadable),
            self.count(Status::Info)
        ));
        out
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Off => "OFF",
        Status::Info => "info",
        Status::Unreadable => "unreadable",
    }
}

fn show(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => format_bytes(v),
        Unit::Percent => format!("{v:.1} %"),
    }
}

fn show_signed(v: f64, unit: Unit) -> String {
    let sign = if v > 0.0 { "+" } else { "" };
    format!("{sign}{}", show(v, unit))
}

/// Bytes to the precision a comparison needs: `1.23 GiB`, `256.0 MiB`,
/// `12 KiB`, `512 B` (binary units, as the rest of swapsight shows them).
pub fn format_bytes(b: f64) -> String {
    const KIB: f64 = 1024.0;
    const MIB: f64 = KIB * 1024.0;
    const GIB: f64 = MIB * 1024.0;
    let a = b.abs();
    if !a.is_finite() {
        "?".into()
    } else if a >= GIB {
        format!("{:.2} GiB", b / GIB)
    } else if a >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else if a >= KIB {
        format!("{:.0} KiB", b / KIB)
    } else {
        format!("{b:.0} B")
    }
}

pub(super) fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Text from outside (a tool's words, a process name) as it may reach a
/// terminal: control and bidi characters as `?` (the house rule,
/// [`crate::util::text::is_unsafe`]), at most `max` characters.
pub fn clean_text(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(crate::util::text::safe_char)
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}
