//! clap value parsers for the units swapsight takes, with the bounds that
//! make sense for each. Arguments that take one of these set
//! `allow_hyphen_values`, so that `-1G` reaches the parser and gets a message
//! about the value rather than clap's "unexpected argument '-1'".

use std::time::Duration;

/// Shortest sampling interval: the sampler's own floor.
pub use swapsight::sampler::MIN_INTERVAL;
/// Longest sampling interval: a swap storm is over well within it.
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// Longest duration any other option takes (a grace period, a wait).
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Smallest size taken: one page. Memory and swap move a page at a time,
/// and anything less would be shown as "0 KiB".
pub const MIN_SIZE: u64 = 4096;

/// A size of a page or more and below what any machine has (`--swap-budget`).
pub fn size(s: &str) -> Result<u64, String> {
    if s.trim_start().starts_with('-') {
        return Err("must be positive, like 512M or 8G".into());
    }
    let bytes = swapsight::units::parse_size(s).map_err(|e| e.why)?;
    if bytes < MIN_SIZE {
        return Err(
            "must be at least 4K (one page: memory moves a page at a time), like 512M or 8G".into(),
        );
    }
    if bytes > swapsight::trace::MAX_BYTES {
        return Err("too large: more than any machine's memory (8 PiB)".into());
    }
    Ok(bytes)
}

fn duration_within(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let range = || {
        format!(
            "must be between {} and {}",
            show(min),
            swapsight::units::format_duration(max)
        )
    };
    if s.trim_start().starts_with('-') {
        return Err(format!("must be positive: {}", range()));
    }
    let d = swapsight::units::parse_duration(s).map_err(|e| e.why)?;
    if !(min..=max).contains(&d) {
        return Err(range());
    }
    Ok(d)
}

/// `10ms`, `1.0s`: small durations the way they were typed.
fn show(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        swapsight::units::format_duration(d)
    }
}

/// A duration from 1 ms to 30 days (`--grace`, `--wait-timeout`).
pub fn duration(s: &str) -> Result<Duration, String> {
    duration_within(s, Duration::from_millis(1), MAX_DURATION)
}

/// A pressure level to act on (`--stop-at-pressure`): `warning` or
/// `critical` (`normal` would stop at once).
pub fn pressure_level(s: &str) -> Result<swapsight::pressure::Level, String> {
    use swapsight::pressure::Level;
    match s.trim().parse::<Level>() {
        Ok(Level::Normal) | Err(_) => Err("expected warning or critical".into()),
        Ok(level) => Ok(level),
    }
}

/// The sampling interval (`--interval`): 10 ms to 1 h.
pub fn interval(s: &str) -> Result<Duration, String> {
    duration_within(s, MIN_INTERVAL, MAX_INTERVAL)
}

/// A count of things, 0 or more (`--top`, `--processes`).
pub fn count(s: &str) -> Result<usize, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err("must be 0 or more".into());
    }
    s.parse()
        .map_err(|_| "expected a whole number, like 10".to_string())
}

/// A share of memory that free memory can reach (`--wait-free`): 0 to
/// below 100 (the kernel and swapsight itself always hold some). Blanks
/// around it are fine, as around a size.
pub fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    if t.starts_with('-') {
        return Err("must be 0 or more, below 100, like 40".into());
    }
    let v: f64 = t
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| "expected a percentage like 40".to_string())?;
    if !(0.0..100.0).contains(&v) {
        return Err(
            "must be below 100: free memory never reaches 100 % (the kernel holds some)".into(),
        );
    }
    Ok(v)
}

/// A PSI share of time, in %: `10`, `12.5%`; more than 0, at most 100.
pub fn psi_share(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    let v: f64 = t
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| "expected a share of time in %, like 10".to_string())?;
    if v <= 0.0 || v > 100.0 {
        return Err("must be more than 0 and at most 100 (% of the time tasks stalled)".into());
    }
    Ok(v)
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
