//! Chrome trace JSON (the "Trace Event Format") for ui.perfetto.dev and
//! chrome://tracing: every figure is a counter track, flags and guard actions
//! are instant events.
//!
//! Perfetto names a JSON counter track `"<name> <arg key>"` and makes one
//! track per arg key, so each counter event here carries exactly one number,
//! keyed by its unit (`bytes`, `percent`, `per_s`): `swap used bytes`,
//! `footprint bytes`, `page-in rate per_s`. System series live on pid 0
//! (named "system"), each process on its own pid. Timestamps are
//! microseconds since the trace's first sample.

use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Write};

use serde::Serialize;
use serde_json::{json, Value};

use super::{ExportError, NextSample, Skeleton};
use crate::util::units::{format_bytes, signed_diff};

/// The pid of the system-wide series.
pub const SYSTEM_PID: u32 = 0;
/// The thread of the system pid that holds the phases, one slice each.
pub const PHASES_TID: u32 = 1;
/// The `cat` of every event swapsight writes.
pub const CATEGORY: &str = "swapsight";

#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    ph: &'static str,
    ts: u64,
    /// Length of a complete (`X`) event: a phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<u64>,
    pid: u32,
    tid: u32,
    /// Scope of an instant event: `g` global, `p` process.
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    args: Value,
}

struct Out<W: Write> {
    w: W,
    first: bool,
}

impl<W: Write> Out<W> {
    fn event(&mut self, e: &Event<'_>) -> std::io::Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.w, e).map_err(std::io::Error::from)
    }

    fn counter(
        &mut self,
        name: &str,
        ts: u64,
        pid: u32,
        unit: &str,
        value: Value,
    ) -> std::io::Result<()> {
        let mut args = serde_json::Map::with_capacity(1);
        args.insert(unit.to_string(), value);
        self.event(&Event {
            name,
            cat: Some(CATEGORY),
            ph: "C",
            ts,
            dur: None,
            pid,
            tid: pid,
            s: None,
            args: Value::Object(args),
        })
    }

    fn metadata(&mut self, name: &str, pid: u32, args: Value) -> std::io::Result<()> {
        self.event(&Event {
            name,
            cat: None,
            ph: "M",
            ts: 0,
            dur: None,
            pid,
            tid: pid,
            s: None,
            args,
        })
    }
}

/// Writes `trace` as Chrome trace JSON.
/// Writes a trace given as its [`Skeleton`] (a first pass) and its samples
/// (a second), one at a time.
pub fn write(
    trace: &Skeleton,
    next: &mut NextSample<'_>,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    // A sample that cannot be read stops the writing; its error is the one told.
    let mut failed = None;
    let mut pull = || {
        next().unwrap_or_else(|e| {
            failed = Some(e);
            None
        })
    };
    let written = write_inner(trace, &mut pull, out);
    match failed {
        Some(e) => Err(e),
        None => written.map_err(ExportError::io("perfetto")),
    }
}

fn write_inner<'a>(
    trace: &Skeleton,
    next: &mut dyn FnMut() -> Option<std::borrow::Cow<'a, crate::record::trace::TraceSample>>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(256 * 1024, out);
    let t0 = trace.first.map_or(0, |(t, _)| t);
    let us = |t_ms: u64| t_ms.saturating_sub(t0).saturating_mul(1000);
    write_metadata(&mut w, trace, t0)?;
    w.write_all(b",\n\"traceEvents\":[\n")?;
    let mut o = Out { w, first: true };
    process_names(&mut o, trace)?;

    // Samples, with flags and events merged in by time.
    let mut flags: Vec<_> = trace.flags.iter().collect();
    flags.sort_by_key(|f| f.t_ms);
    let mut events: Vec<_> = trace.events.iter().collect();
    events.sort_by_key(|e| e.t_ms);
    let mut flags = flags.into_iter().peekable();
    let mut events = events.into_iter().peekable();
    let first_swap = trace.first.map_or(0, |(_, swap)| swap);
    let mut prev: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut last_ts = 0;
    while let Some(ts) = next() {
        let s = &ts.sample;
        // Samples are in time order in a trace; a clock step back would break
        // Perfetto's tracks, so such a sample is dropped.
        let t = us(s.t_ms);
        if t < last_ts {
            continue;
        }
        last_ts = t;
        while let Some(f) = flags.next_if(|f| f.t_ms < s.t_ms) {
            flag(&mut o, f, us(f.t_ms))?;
        }
        while let Some(e) = events.next_if(|e| e.t_ms < s.t_ms) {
            event(&mut o, e, us(e.t_ms))?;
        }
        system_counters(&mut o, s, t, first_swap)?;
        process_counters(&mut o, s, t, &mut prev)?;
    }
    for f in flags {
        flag(&mut o, f, us(f.t_ms).max(last_ts))?;
    }
    for e in events {
        event(&mut o, e, us(e.t_ms).max(last_ts))?;
    }
    phases(&mut o, trace, &us)?;
    counters(&mut o, trace, &us)?;
    let mut w = o.w;
    w.write_all(b"\n]}\n")?;
    w.flush()
}

/// The file's `metadata` object: what wrote it, where, when, watching what.
fn write_metadata(w: &mut impl Write, trace: &Skeleton, t0: u64) -> std::io::Result<()> {
    let header = trace.header.as_ref();
    w.write_all(b"{\"displayTimeUnit\":\"ms\",\"metadata\":")?;
    let meta = json!({
        "swapsight": header.map(|h| h.writer.clone()),
        "host": header.map(|h| h.host.hostname.clone()),
        "os": header.map(|h| h.host.os.clone()),
        "phys_bytes": header.map(|h| h.host.phys_bytes),
        "start_unix_ms": header.map(|h| h.start_unix_ms.saturating_add(t0)),
        "interval_ms": header.map(|h| h.interval_ms),
        "command": header.and_then(|h| h.command.as_ref().map(|c| c.join(" "))),
    });
    serde_json::to_writer(w, &meta)?;
    Ok(())
}

/// Metadata events first: the names and order of the process groups, the
/// system's on top and the watched processes next.
fn process_names<W: Write>(o: &mut Out<W>, trace: &Skeleton) -> std::io::Result<()> {
    let system_name = match trace.header.as_ref() {
        Some(h) if !h.host.hostname.is_empty() => format!(
            "system ({}, {})",
            h.host.hostname,
            format_bytes(h.host.phys_bytes as i64)
        ),
        _ => "system".to_string(),
    };
    o.metadata("process_name", SYSTEM_PID, json!({ "name": system_name }))?;
    o.metadata(
        "process_sort_index",
        SYSTEM_PID,
        json!({ "sort_index": -1 }),
    )?;
    let mut named: HashSet<u32> = HashSet::new();
    for (pid, name) in &trace.names {
        let pid = *pid;
        if pid == SYSTEM_PID || !named.insert(pid) {
            continue;
        }
        o.metadata("process_name", pid, json!({ "name": name }))?;
        if trace.watched.contains(&pid) {
            o.metadata("process_labels", pid, json!({ "labels": "watched" }))?;
            o.metadata("process_sort_index", pid, json!({ "sort_index": 0 }))?;
        }
    }
    for f in &trace.flags {
        if f.pid != SYSTEM_PID && named.insert(f.pid) {
            o.metadata("process_name", f.pid, json!({ "name": f.name }))?;
        }
    }
    Ok(())
}

/// The machine's tracks at one sample: swap, free memory, compressed, the
/// pressure level (1 normal, 2 warning, 4 critical, as `/metrics` has it)
/// and PSI, and the scope's limit, usage and swap when the run had one.
fn system_counters<W: Write>(
    o: &mut Out<W>,
    s: &crate::probe::Sample,
    t: u64,
    first_swap: u64,
) -> std::io::Result<()> {
    let sys = &s.system;
    let swap_growth = signed_diff(sys.swap_used_bytes, first_swap);
    o.counter(
        "swap used",
        t,
        SYSTEM_PID,
        "bytes",
        sys.swap_used_bytes.into(),
    )?;
    o.counter("swap growth", t, SYSTEM_PID, "bytes", swap_growth.into())?;
    o.counter(
        "free memory",
        t,
        SYSTEM_PID,
        "percent",
        round2(sys.free_pct).into(),
    )?;
    o.counter(
        "compressed",
        t,
        SYSTEM_PID,
        "bytes",
        sys.compressed_bytes.into(),
    )?;
    // Pressure only where the OS gave it: an absent track, not a flat zero.
    if let Some(p) = &sys.pressure {
        if let Some(level) = p.level {
            let value = u64::from(level.value());
            o.counter(
                "memory pressure level",
                t,
                SYSTEM_PID,
                "level",
                value.into(),
            )?;
        }
        for (name, line) in [("PSI some avg10", p.some), ("PSI full avg10", p.full)] {
            if let Some(line) = line {
                o.counter(name, t, SYSTEM_PID, "percent", round2(line.avg10).into())?;
            }
        }
    }
    if let Some(scope) = &s.scope {
        o.counter(
            "scope limit",
            t,
            SYSTEM_PID,
            "bytes",
            scope.limit_bytes.into(),
        )?;
        o.counter(
            "scope usage",
            t,
            SYSTEM_PID,
            "bytes",
            scope.usage_bytes.into(),
        )?;
        if let Some(swap) = scope.swap_bytes {
            o.counter("scope swap", t, SYSTEM_PID, "bytes", swap.into())?;
        }
    }
    Ok(())
}

/// Each process's tracks at one sample: footprint, page-in rate since its
/// previous sample (`prev` keeps each one's last time and count), swap.
fn process_counters<W: Write>(
    o: &mut Out<W>,
    s: &crate::probe::Sample,
    t: u64,
    prev: &mut HashMap<u32, (u64, u64)>,
) -> std::io::Result<()> {
    for p in &s.processes {
        if p.pid == SYSTEM_PID {
            continue;
        }
        o.counter("footprint", t, p.pid, "bytes", p.footprint_bytes.into())?;
        if let Some((t_prev, n_prev)) = prev.insert(p.pid, (s.t_ms, p.pageins)) {
            if s.t_ms > t_prev {
                let rate =
                    p.pageins.saturating_sub(n_prev) as f64 / ((s.t_ms - t_prev) as f64 / 1000.0);
                o.counter("page-in rate", t, p.pid, "per_s", round2(rate).into())?;
            }
        }
        if let Some(b) = p.swap_bytes {
            o.counter("swap", t, p.pid, "bytes", b.into())?;
        }
    }
    Ok(())
}

fn flag<W: Write>(o: &mut Out<W>, f: &crate::step::detect::Flag, ts: u64) -> std::io::Result<()> {
    let name = format!("{}: {}", f.state.label(), f.name);
    o.event(&Event {
        name: &name,
        cat: Some(CATEGORY),
        ph: "i",
        ts,
        dur: None,
        pid: f.pid,
        tid: f.pid,
        s: Some("p"),
        args: json!({
            "state": f.state.as_str(),
            "previous": f.previous.as_str(),
            "message": f.message,
        }),
    })
}

fn event<W: Write>(
    o: &mut Out<W>,
    e: &crate::record::trace::Event,
    ts: u64,
) -> std::io::Result<()> {
    let mut args = json!({ "message": e.message });
    if let Some(pid) = e.pid {
        args["pid"] = pid.into();
    }
    if let Some(code) = e.code {
        args["code"] = code.into();
    }
    o.event(&Event {
        name: &e.kind,
        cat: Some(CATEGORY),
        ph: "i",
        ts,
        dur: None,
        pid: SYSTEM_PID,
        tid: SYSTEM_PID,
        s: Some("g"),
        args,
    })
}

/// The phases as slices on a "phases" thread of the system pid, so that
/// ui.perfetto.dev shows them above the counters.
fn phases<W: Write>(
    o: &mut Out<W>,
    trace: &Skeleton,
    us: &impl Fn(u64) -> u64,
) -> std::io::Result<()> {
    let spans = trace.phases();
    if spans.is_empty() {
        return Ok(());
    }
    o.event(&Event {
        name: "thread_name",
        cat: None,
        ph: "M",
        ts: 0,
        dur: None,
        pid: SYSTEM_PID,
        tid: PHASES_TID,
        s: None,
        args: json!({ "name": "phases" }),
    })?;
    for p in spans {
        let (from, to) = (us(p.start_ms), us(p.end_ms));
        o.event(&Event {
            name: &p.name,
            cat: Some(CATEGORY),
            ph: "X",
            ts: from,
            dur: Some(to.saturating_sub(from)),
            pid: SYSTEM_PID,
            tid: PHASES_TID,
            s: None,
            args: json!({ "phase": p.name }),
        })?;
    }
    Ok(())
}

/// Each counter of the trace as a counter track of the system pid, named
/// `counter NAME` (Perfetto adds the unit), its values in time order.
fn counters<W: Write>(
    o: &mut Out<W>,
    trace: &Skeleton,
    us: &impl Fn(u64) -> u64,
) -> std::io::Result<()> {
    let mut sorted: Vec<&crate::record::trace::Counter> = trace.counters.iter().collect();
    sorted.sort_by_key(|c| c.t_ms);
    for c in sorted {
        let name = format!("counter {}", c.name);
        let value = serde_json::Number::from_f64(c.value).map_or(Value::Null, Value::Number);
        o.counter(&name, us(c.t_ms), SYSTEM_PID, &c.unit, value)?;
    }
    Ok(())
}

fn round2(x: f64) -> f64 {
    if x.is_finite() {
        (x * 100.0).round() / 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
#[path = "perfetto_tests.rs"]
mod tests;
