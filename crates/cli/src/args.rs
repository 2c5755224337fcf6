//! clap value parsers for the units swapsight takes.

use std::time::Duration;

pub fn size(s: &str) -> Result<u64, String> {
    swapsight::units::parse_size(s).map_err(|e| e.why)
}

pub fn duration(s: &str) -> Result<Duration, String> {
    let d = swapsight::units::parse_duration(s).map_err(|e| e.why)?;
    if d.is_zero() {
        return Err("must be more than zero".into());
    }
    Ok(d)
}

pub fn percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| "expected a percentage like 40".to_string())?;
    if !(0.0..=100.0).contains(&v) {
        return Err("must be between 0 and 100".into());
    }
    Ok(v)
}
