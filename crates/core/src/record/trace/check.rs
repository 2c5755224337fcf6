//! What a trace may hold: every record is checked against the figures an OS
//! can produce before the reader keeps it.

use super::records::{Record, MAX_START_UNIX_MS, MAX_T_MS};
use crate::step::detect::DetectorConfig;
use crate::step::written::{counter_of, Source};
use crate::util::units::MAX_BYTES;

/// The most swap any machine writes in a second: 1 TiB. Swap on a disk
/// goes at the disk's speed (a PCIe 5 SSD writes ~14 GB/s), swap in memory
/// (Linux zram) at the speed of compressing pages, both far under the
/// fastest memory bandwidth a machine has (~0.8 TB/s, M3 Ultra). A counter
/// that rose faster is no counter (a sawtooth of made-up figures would
/// otherwise add up to billions of GB).
pub const MAX_SWAP_WRITE_BYTES_PER_S: u64 = 1 << 40;

/// The checks that span records: a sample's swap-out counter against the
/// last one kept from the same source. One per pass over a trace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rises {
    last: Option<(Source, u64, u64)>,
}

impl Rises {
    /// Refuses a sample whose swap-out counter rose faster than
    /// [`MAX_SWAP_WRITE_BYTES_PER_S`] since the last sample kept with the
    /// same counter (over at least a second, so that samples close
    /// together are not held to a rate over a few ms). A counter that went
    /// back, or another source, starts again. Keeps the sample's counter
    /// only when it passes.
    pub fn check(&mut self, record: &Record) -> Result<(), String> {
        let Record::Sample(ts) = record else {
            return Ok(());
        };
        let s = &ts.sample;
        let Some((source, now)) = counter_of(&s.system, s.scope.as_ref()) else {
            return Ok(());
        };
        if let Some((was, before, t_ms)) = self.last.filter(|l| l.0 == source) {
            let rise = now.saturating_sub(before);
            let over_ms = s.t_ms.saturating_sub(t_ms).max(1000);
            let most = u128::from(MAX_SWAP_WRITE_BYTES_PER_S) * u128::from(over_ms) / 1000;
            if u128::from(rise) > most {
                let name = match was {
                    Source::Host => "sys.swap_out_bytes",
                    Source::Scope(_) => "scope.swap_out_bytes",
                };
                return Err(format!(
                    "{name} rose by {rise} in {} ms: faster than any machine writes swap (at most {MAX_SWAP_WRITE_BYTES_PER_S} bytes a second)",
                    s.t_ms.saturating_sub(t_ms)
                ));
            }
        }
        self.last = Some((source, now, s.t_ms));
        Ok(())
    }
}

/// Refuses figures no OS produces, naming the field and the limit. Every
/// record passes here before the reader keeps it, so the detector, the report
/// and the exporters may add, subtract and scale what a trace holds.
pub fn check(record: &Record) -> Result<(), String> {
    match record {
        Record::Header(h) => {
            bytes("host.phys_bytes", h.host.phys_bytes)?;
            bytes("host.page_size", h.host.page_size)?;
            at_most("interval_ms", h.interval_ms, MAX_T_MS, "100 years")?;
            at_most(
                "start_unix_ms",
                h.start_unix_ms,
                MAX_START_UNIX_MS,
                "the year 9999",
            )?;
            detector(&h.detector)?;
            pressure_config(&h.pressure)?;
            forecast_config(&h.forecast)
        }
        Record::Sample(ts) => sample(ts),
        Record::Flag(f) => flag(f),
        Record::Event(e) => t_ms("t_ms", e.t_ms),
        Record::Counter(c) => counter(c),
        Record::Mark(m) => {
            t_ms("t_ms", m.t_ms)?;
            if crate::record::marks::clean_name(m.name.as_bytes()).as_deref()
                != Some(m.name.as_str())
                && !(m.end && m.name.is_empty())
            {
                return Err(format!(
                    "mark name is empty, longer than {} characters or holds control characters or bidi controls",
                    crate::record::marks::MAX_NAME_CHARS
                ));
            }
            Ok(())
        }
    }
}

fn sample(ts: &super::records::TraceSample) -> Result<(), String> {
    let s = &ts.sample;
    t_ms("t_ms", s.t_ms)?;
    system(&s.system)?;
    if let Some(f) = &ts.forecast {
        for (name, v) in [
            ("forecast.swap_budget_s", f.swap_budget_s),
            ("forecast.free_floor_s", f.free_floor_s),
            ("forecast.swap_full_s", f.swap_full_s),
        ] {
            if let Some(s) = v {
                seconds(name, s)?;
            }
        }
    }
    if let Some(sc) = &s.scope {
        scope(sc)?;
    }
    for p in &s.processes {
        let in_proc = |e: String| format!("process {}: {e}", p.pid);
        bytes("footprint_bytes", p.footprint_bytes).map_err(in_proc)?;
        bytes("pageins", p.pageins).map_err(in_proc)?;
        bytes("swap_bytes", p.swap_bytes.unwrap_or(0)).map_err(in_proc)?;
    }
    Ok(())
}

fn system(sys: &crate::probe::SystemSample) -> Result<(), String> {
    bytes("sys.phys_bytes", sys.phys_bytes)?;
    percent("sys.free_pct", sys.free_pct)?;
    for (name, v) in [
        ("sys.swap_used_bytes", Some(sys.swap_used_bytes)),
        ("sys.swap_total_bytes", Some(sys.swap_total_bytes)),
        ("sys.compressed_bytes", Some(sys.compressed_bytes)),
        ("sys.page_size", Some(sys.page_size)),
        ("sys.usable_bytes", Some(sys.usable_bytes)),
        ("sys.wired_bytes", sys.wired_bytes),
        ("sys.memory_used_bytes", sys.memory_used_bytes),
        ("sys.app_bytes", sys.app_bytes),
        ("sys.cached_bytes", sys.cached_bytes),
        ("sys.swap_volume_free_bytes", sys.swap_volume_free_bytes),
        ("sys.swap_out_bytes", sys.swap_out_bytes),
    ] {
        bytes(name, v.unwrap_or(0))?;
    }
    if let Some(r) = &sys.swap_room {
        bytes("sys.swap_room.volume_bytes", r.volume_bytes.unwrap_or(0))?;
        bytes("sys.swap_room.files_bytes", r.files_bytes)?;
        bytes("sys.swap_room.compressor_bytes", r.compressor_bytes)?;
    }
    if let Some(g) = &sys.gpu {
        for (name, v) in [
            ("sys.gpu.in_use_bytes", g.in_use_bytes),
            ("sys.gpu.alloc_bytes", g.alloc_bytes),
            ("sys.gpu.driver_in_use_bytes", g.driver_in_use_bytes),
            (
                "sys.gpu.recommended_working_set_bytes",
                g.recommended_working_set_bytes,
            ),
        ] {
            bytes(name, v.unwrap_or(0))?;
        }
        // In MiB: at most MAX_BYTES once in bytes.
        at_most(
            "sys.gpu.wired_limit_mb",
            g.wired_limit_mb.unwrap_or(0),
            MAX_BYTES >> 20,
            "the largest memory a figure may hold",
        )?;
    }
    if let Some(pct) = sys.available_pct {
        percent("sys.available_pct", pct)?;
    }
    resident(sys)?;
    if let Some(p) = &sys.pressure {
        pressure("sys.pressure", p)?;
    }
    Ok(())
}

/// Figures of memory in RAM hold no more than the machine has: wired,
/// used, app, cached and compressed memory, and what the GPU holds of
/// system memory (IOAccelerator's "In use system memory" counts RAM, not a
/// discrete GPU's own). A sample without `phys_bytes` (0) is not held to it.
/// Swap and footprints may pass it (a macOS footprint counts compressed
/// memory paged out to storage), and so may the GPU's allocations (virtual).
fn resident(sys: &crate::probe::SystemSample) -> Result<(), String> {
    let phys = sys.phys_bytes;
    if phys == 0 {
        return Ok(());
    }
    let gpu = sys.gpu.as_ref();
    for (name, v) in [
        ("sys.compressed_bytes", Some(sys.compressed_bytes)),
        ("sys.usable_bytes", Some(sys.usable_bytes)),
        ("sys.wired_bytes", sys.wired_bytes),
        ("sys.memory_used_bytes", sys.memory_used_bytes),
        ("sys.app_bytes", sys.app_bytes),
        ("sys.cached_bytes", sys.cached_bytes),
        ("sys.gpu.in_use_bytes", gpu.and_then(|g| g.in_use_bytes)),
        (
            "sys.gpu.driver_in_use_bytes",
            gpu.and_then(|g| g.driver_in_use_bytes),
        ),
    ] {
        if let Some(v) = v.filter(|&v| v > phys) {
            return Err(format!(
                "{name} {v} is out of range (at most sys.phys_bytes, the machine's memory: {phys})"
            ));
        }
    }
    Ok(())
}

fn scope(sc: &crate::probe::Scope) -> Result<(), String> {
    if !(1..=2).contains(&sc.version) {
        return Err(format!("scope.version {} is not 1 or 2", sc.version));
    }
    if sc.path.chars().count() > crate::probe::linux::cgroup::PATH_MAX {
        return Err("scope.path is longer than 4096 characters".into());
    }
    bytes("scope.limit_bytes", sc.limit_bytes)?;
    bytes("scope.usage_bytes", sc.usage_bytes)?;
    for (name, v) in [
        ("scope.high_bytes", sc.high_bytes),
        ("scope.swap_limit_bytes", sc.swap_limit_bytes),
        ("scope.swap_bytes", sc.swap_bytes),
        ("scope.anon_bytes", sc.anon_bytes),
        ("scope.swap_out_bytes", sc.swap_out_bytes),
    ] {
        bytes(name, v.unwrap_or(0))?;
    }
    if let Some(p) = &sc.pressure {
        pressure("scope.pressure", p)?;
    }
    let e = &sc.events;
    for (name, v) in [
        ("scope.events.high", e.high),
        ("scope.events.max", e.max),
        ("scope.events.oom", e.oom),
        ("scope.events.oom_kill", e.oom_kill),
    ] {
        bytes(name, v.unwrap_or(0))?;
    }
    Ok(())
}

fn flag(f: &crate::step::detect::Flag) -> Result<(), String> {
    t_ms("t_ms", f.t_ms)?;
    let e = &f.evidence;
    bytes("evidence.footprint_bytes", e.footprint_bytes)?;
    bytes("evidence.phys_bytes", e.phys_bytes)?;
    signed_bytes(
        "evidence.swap_growth_window_bytes",
        e.swap_growth_window_bytes,
    )?;
    signed_bytes("evidence.swap_growth_bytes", e.swap_growth_bytes)?;
    signed_bytes("evidence.footprint_delta_bytes", e.footprint_delta_bytes)?;
    bytes("evidence.hidden_bytes", e.hidden_bytes)?;
    bytes(
        "evidence.hidden_gpu_rise_bytes",
        e.hidden_gpu_rise_bytes.unwrap_or(0),
    )?;
    t_ms("evidence.window_ms", e.window_ms)?;
    percent("evidence.free_pct", e.free_pct)?;
    not_negative("evidence.footprints_share", e.footprints_share)?;
    not_negative("evidence.pageins_per_s", e.pageins_per_s)
}

fn counter(c: &super::records::Counter) -> Result<(), String> {
    t_ms("t_ms", c.t_ms)?;
    if crate::record::marks::clean_name(c.name.as_bytes()).as_deref() != Some(c.name.as_str()) {
        return Err(format!(
            "counter name is empty, longer than {} characters or holds control characters or bidi controls",
            crate::record::marks::MAX_NAME_CHARS
        ));
    }
    if !crate::record::marks::is_unit(&c.unit) {
        return Err(format!(
            "counter unit is empty, longer than {} characters or holds characters other than letters, digits and _ % / . -",
            crate::record::marks::MAX_UNIT_CHARS
        ));
    }
    if !crate::record::marks::is_counter_value(c.value) {
        return Err(format!(
            "counter value {:e} is out of range (at most {MAX_BYTES} either side of 0)",
            c.value
        ));
    }
    Ok(())
}

fn detector(d: &DetectorConfig) -> Result<(), String> {
    for (name, ms) in [
        ("detector.window_ms", d.window_ms),
        ("detector.sustain_ms", d.sustain_ms),
        ("detector.hidden_window_ms", d.hidden_window_ms),
        ("detector.raise_ms", d.raise_ms),
        ("detector.clear_ms", d.clear_ms),
    ] {
        t_ms(name, ms)?;
    }
    for (name, b) in [
        (
            "detector.swap_tolerance_bytes",
            d.swap_tolerance_bytes.unwrap_or(0),
        ),
        ("detector.min_rate_bytes_per_s", d.min_rate_bytes_per_s),
        ("detector.min_growth_bytes", d.min_growth_bytes),
        (
            "detector.hidden_drop_bytes",
            d.hidden_drop_bytes.unwrap_or(0),
        ),
    ] {
        bytes(name, b)?;
    }
    not_negative("detector.overflow_share", d.overflow_share)?;
    not_negative("detector.min_pageins_per_s", d.min_pageins_per_s)?;
    not_negative("detector.hidden_free_share", d.hidden_free_share)
}

/// PSI as the kernel writes it: averages are percentages of time, the
/// total a count of µs since boot.
fn pressure(name: &str, p: &crate::step::pressure::Pressure) -> Result<(), String> {
    for (line, psi) in [("some", p.some), ("full", p.full)] {
        if let Some(l) = psi {
            percent(&format!("{name}.{line}.avg10"), l.avg10)?;
            percent(&format!("{name}.{line}.avg60"), l.avg60)?;
            let max_us = MAX_T_MS.saturating_mul(1000);
            at_most(
                &format!("{name}.{line}.total_us"),
                l.total_us,
                max_us,
                "100 years",
            )?;
        }
    }
    Ok(())
}

/// The pressure thresholds as the flags that set them are checked: each a
/// percentage, warning below critical (`PressureConfig::problem`).
fn pressure_config(c: &crate::step::pressure::PressureConfig) -> Result<(), String> {
    percent("pressure.warn_some_avg10", c.warn_some_avg10)?;
    percent("pressure.critical_some_avg10", c.critical_some_avg10)?;
    percent("pressure.critical_full_avg10", c.critical_full_avg10)?;
    t_ms("pressure.hold_ms", c.hold_ms)?;
    t_ms("pressure.clear_ms", c.clear_ms)?;
    match c.problem() {
        Some(why) => Err(format!("pressure: {why}")),
        None => Ok(()),
    }
}

fn forecast_config(c: &crate::step::forecast::ForecastConfig) -> Result<(), String> {
    for (name, ms) in [
        ("forecast.window_ms", c.window_ms),
        ("forecast.sustain_ms", c.sustain_ms),
        ("forecast.clear_ms", c.clear_ms),
        ("forecast.horizon_ms", c.horizon_ms),
    ] {
        t_ms(name, ms)?;
    }
    bytes("forecast.min_rate_bytes_per_s", c.min_rate_bytes_per_s)?;
    bytes(
        "forecast.swap_budget_bytes",
        c.swap_budget_bytes.unwrap_or(0),
    )?;
    bytes("forecast.swap_start_bytes", c.swap_start_bytes.unwrap_or(0))?;
    percent("forecast.free_floor_pct", c.free_floor_pct)
}

/// A time left, in seconds: at least 0, at most 100 years.
fn seconds(name: &str, v: f64) -> Result<(), String> {
    not_negative(name, v)?;
    let max_s = MAX_T_MS as f64 / 1000.0;
    if v > max_s {
        return Err(format!(
            "{name} {} is out of range (at most {max_s}, 100 years)",
            shown(v)
        ));
    }
    Ok(())
}

fn at_most(name: &str, v: u64, max: u64, what: &str) -> Result<(), String> {
    if v > max {
        return Err(format!(
            "{name} {v} is out of range (at most {max}, {what})"
        ));
    }
    Ok(())
}

fn bytes(name: &str, v: u64) -> Result<(), String> {
    at_most(name, v, MAX_BYTES, "8 PiB")
}

fn t_ms(name: &str, v: u64) -> Result<(), String> {
    at_most(name, v, MAX_T_MS, "100 years")
}

fn signed_bytes(name: &str, v: i64) -> Result<(), String> {
    if v.unsigned_abs() > MAX_BYTES {
        return Err(format!(
            "{name} {v} is out of range (at most ±{MAX_BYTES}, 8 PiB)"
        ));
    }
    Ok(())
}

fn percent(name: &str, v: f64) -> Result<(), String> {
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("{name} {} is out of range (0 to 100)", shown(v)));
    }
    Ok(())
}

fn not_negative(name: &str, v: f64) -> Result<(), String> {
    // serde_json yields finite numbers only; NaN fails this test too.
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("{name} {} is out of range (at least 0)", shown(v)));
    }
    Ok(())
}

/// A figure from outside as an error shows it: in full where short, else
/// in scientific notation (Rust writes 1e308 as 309 digits).
pub(crate) fn shown(v: f64) -> String {
    let full = v.to_string();
    if full.len() <= 24 {
        full
    } else {
        format!("{v:.6e}")
    }
}
