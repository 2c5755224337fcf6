//! Sizes and durations as people type them (`8G`, `512MiB`, `500ms`) and as
//! swapsight prints them.
//!
//! One rule (docs/units.md): sizes are counted in binary multiples and
//! printed under their binary names — `18.5 GiB`, `340 MiB`, `12 KiB` — so
//! a figure never carries a decimal unit's name. Memory comes in binary
//! multiples (a "48 GiB" Mac has 48 GiB), and the name says so where the
//! Hugging Face hub and Finder print decimal GB (`4.98 GiB` is 4.6 GiB).
//!
//! Typed sizes are read leniently: `8G` = `8GB` = `8GiB` = 8 × 1024³ bytes,
//! because Activity Monitor and `sysctl vm.swapusage` show binary figures
//! under the decimal letters; a user copying one gets what they meant.

use std::time::Duration;

/// Largest byte count (or page-in count) a trace may hold: 2^53 bytes (8 PiB),
/// far above any machine's memory or swap, and the largest integer an `f64`
/// (and the web UI's JavaScript) holds exactly. Bounding every figure here
/// keeps differences and `i64` conversions downstream from overflowing.
pub const MAX_BYTES: u64 = 1 << 53;

/// Why a size or duration did not parse; the message quotes the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} '{input}': {why}")]
pub struct UnitError {
    pub(crate) kind: &'static str,
    pub(crate) input: String,
    /// What is wrong, without the input: for a caller that quotes the input
    /// itself.
    pub why: String,
}

/// The input is a user's (an argument, an environment variable, a setting)
/// and is quoted back, in `why` too: cleaned once here, so an escape byte
/// typed or pasted into a size never reaches the terminal raw.
fn unit_error(kind: &'static str, input: &str, why: impl Into<String>) -> UnitError {
    let why = why.into();
    UnitError {
        kind,
        input: crate::util::text::clean(input).into_owned(),
        why: crate::util::text::clean(&why).into_owned(),
    }
}

/// Splits `"1.5GiB"` into `(1.5, "GiB")`.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
        .map_or(s.len(), |(i, _)| i);
    let number: f64 = s[..end].parse().ok()?;
    Some((number, s[end..].trim()))
}

/// Parses a size: plain bytes (`1048576`) or a number with a binary unit
/// (`512M`, `8G`, `8GiB`, `1.5 GiB`, `64k`), case-insensitive.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let (number, unit) = split_number(input).ok_or_else(|| {
        unit_error(
            "size",
            input,
            "expected a number with a unit, like 8G or 512M",
        )
    })?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        other => {
            return Err(unit_error(
                "size",
                input,
                format!("unknown unit '{other}' (use B, K, M, G, T or P; KiB, MiB, GiB also work)"),
            ))
        }
    };
    let bytes = number * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(unit_error("size", input, "too large"));
    }
    Ok(bytes.round() as u64)
}

/// Parses a duration: `500ms`, `2s`, `1.5s`, `3m`, `1h`; a bare number is
/// seconds.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let (number, unit) = split_number(input).ok_or_else(|| {
        unit_error(
            "duration",
            input,
            "expected a number with a unit, like 500ms or 2s",
        )
    })?;
    let seconds = match unit.to_ascii_lowercase().as_str() {
        "ms" => number / 1000.0,
        "" | "s" | "sec" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        other => {
            return Err(unit_error(
                "duration",
                input,
                format!("unknown unit '{other}' (use ms, s, m or h)"),
            ))
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| unit_error("duration", input, "out of range"))
}

/// `to − from` as a signed figure (swap growth, a footprint's change),
/// saturating at the ends of `i64` where a plain `as i64` subtraction would
/// overflow on figures from a damaged trace.
pub fn signed_diff(to: u64, from: u64) -> i64 {
    let d = i128::from(to) - i128::from(from);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// The sum of byte counts, saturating at `u64::MAX` rather than overflowing.
pub fn saturating_sum(values: impl IntoIterator<Item = u64>) -> u64 {
    values.into_iter().fold(0, u64::saturating_add)
}

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;

/// A growth: `+340 MiB`, `-12 MiB`, `0 KiB` (a sign only when it changed).
pub fn format_growth(bytes: i64) -> String {
    format!(
        "{}{}",
        if bytes > 0 { "+" } else { "" },
        format_bytes(bytes)
    )
}

/// `19864223744` → `"18.5 GiB"`; below 1 GiB in MiB, below 1 MiB in KiB.
/// Signed values keep their sign.
pub fn format_bytes(bytes: i64) -> String {
    let sign = if bytes < 0 { "-" } else { "" };
    let b = bytes.unsigned_abs() as f64;
    if b >= GIB {
        format!("{sign}{:.1} GiB", b / GIB)
    } else if b >= MIB {
        format!("{sign}{:.0} MiB", b / MIB)
    } else {
        format!("{sign}{:.0} KiB", b / 1024.0)
    }
}

/// A limit as people set it: `256 MiB`, `16 GiB` when it is a whole number
/// of them (a cgroup limit usually is), else as [`format_bytes`].
pub fn format_limit(bytes: u64) -> String {
    const MIB_U: u64 = 1 << 20;
    const GIB_U: u64 = 1 << 30;
    if bytes >= GIB_U && bytes % GIB_U == 0 {
        format!("{} GiB", bytes / GIB_U)
    } else if bytes >= MIB_U && bytes % MIB_U == 0 {
        format!("{} MiB", bytes / MIB_U)
    } else {
        format_bytes(i64::try_from(bytes).unwrap_or(i64::MAX))
    }
}

/// The compact form for a menu-bar title: `2.1G`, `640M` — binary, as
/// `ls -lh` and `df -h` write the same letters.
pub fn format_bytes_short(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1}G", b / GIB)
    } else {
        format!("{:.0}M", b / MIB)
    }
}

/// A count with a comma between thousands: `131,072` (a context in tokens).
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `192.4` s → `"3m12s"`; under a minute `"12.5s"`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else if s < 3600.0 {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!(
            "{}h{:02}m",
            (s / 3600.0) as u64,
            ((s % 3600.0) / 60.0) as u64
        )
    }
}

/// Milliseconds since the Unix epoch, now: the clock of a trace's
/// `start_unix_ms` and of the registry's folder names.
pub fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
#[path = "units_tests.rs"]
mod tests;
