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

use super::ExportError;
use crate::trace::Trace;
use crate::units::{format_bytes, signed_diff};

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
pub fn write(trace: &Trace, out: &mut dyn Write) -> Result<(), ExportError> {
    write_inner(trace, out).map_err(ExportError::io("perfetto"))
}

fn write_inner(trace: &Trace, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(256 * 1024, out);
    let header = trace.header.as_ref();
    let t0 = trace.samples.first().map_or(0, |s| s.sample.t_ms);
    let us = |t_ms: u64| t_ms.saturating_sub(t0).saturating_mul(1000);

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
    serde_json::to_writer(&mut w, &meta)?;
    w.write_all(b",\n\"traceEvents\":[\n")?;
    let mut o = Out { w, first: true };

    // Metadata first: names and order of the process groups.
    let system_name = match header {
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
    let mut watched: HashSet<u32> = HashSet::new();
    for s in &trace.samples {
        watched.extend(s.watched.iter().copied());
    }
    for s in &trace.samples {
        for p in &s.sample.processes {
            if p.pid == SYSTEM_PID || !named.insert(p.pid) {
                continue;
            }
            o.metadata("process_name", p.pid, json!({ "name": p.name }))?;
            if watched.contains(&p.pid) {
                o.metadata("process_labels", p.pid, json!({ "labels": "watched" }))?;
                o.metadata("process_sort_index", p.pid, json!({ "sort_index": 0 }))?;
            }
        }
    }
    for f in &trace.flags {
        if f.pid != SYSTEM_PID && named.insert(f.pid) {
            o.metadata("process_name", f.pid, json!({ "name": f.name }))?;
        }
    }

    // Samples, with flags and events merged in by time.
    let mut flags: Vec<_> = trace.flags.iter().collect();
    flags.sort_by_key(|f| f.t_ms);
    let mut events: Vec<_> = trace.events.iter().collect();
    events.sort_by_key(|e| e.t_ms);
    let mut flags = flags.into_iter().peekable();
    let mut events = events.into_iter().peekable();
    let first_swap = trace
        .samples
        .first()
        .map_or(0, |s| s.sample.system.swap_used_bytes);
    let mut prev: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut last_ts = 0;
    for ts in &trace.samples {
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
        let sys = &s.system;
        o.counter(
            "swap used",
            t,
            SYSTEM_PID,
            "bytes",
            sys.swap_used_bytes.into(),
        )?;
        o.counter(
            "swap growth",
            t,
            SYSTEM_PID,
            "bytes",
            signed_diff(sys.swap_used_bytes, first_swap).into(),
        )?;
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
        for p in &s.processes {
            if p.pid == SYSTEM_PID {
                continue;
            }
            o.counter("footprint", t, p.pid, "bytes", p.footprint_bytes.into())?;
            if let Some((t_prev, n_prev)) = prev.insert(p.pid, (s.t_ms, p.pageins)) {
                if s.t_ms > t_prev {
                    let rate = p.pageins.saturating_sub(n_prev) as f64
                        / ((s.t_ms - t_prev) as f64 / 1000.0);
                    o.counter("page-in rate", t, p.pid, "per_s", round2(rate).into())?;
                }
            }
            if let Some(b) = p.swap_bytes {
                o.counter("swap", t, p.pid, "bytes", b.into())?;
            }
        }
    }
    for f in flags {
        flag(&mut o, f, us(f.t_ms).max(last_ts))?;
    }
    for e in events {
        event(&mut o, e, us(e.t_ms).max(last_ts))?;
    }
    phases(&mut o, trace, &us)?;
    let mut w = o.w;
    w.write_all(b"\n]}\n")?;
    w.flush()
}

fn flag<W: Write>(o: &mut Out<W>, f: &crate::detect::Flag, ts: u64) -> std::io::Result<()> {
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

fn event<W: Write>(o: &mut Out<W>, e: &crate::trace::Event, ts: u64) -> std::io::Result<()> {
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
    trace: &Trace,
    us: &impl Fn(u64) -> u64,
) -> std::io::Result<()> {
    let last = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let spans = crate::phases::spans(&trace.marks, last);
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

fn round2(x: f64) -> f64 {
    if x.is_finite() {
        (x * 100.0).round() / 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth;
    use crate::trace::Event as TraceEvent;
    use std::collections::BTreeMap;

    fn export(trace: &Trace) -> Value {
        let mut out = Vec::new();
        write(trace, &mut out).unwrap();
        serde_json::from_slice(&out).expect("valid JSON")
    }

    fn offload_with_events() -> Trace {
        let mut t = synth::seed_offload();
        t.events.push(TraceEvent {
            t_ms: 0,
            kind: "command-start".into(),
            message: "started python".into(),
            pid: Some(4243),
            code: None,
        });
        t.events.push(TraceEvent {
            t_ms: 104_000,
            kind: "guard-stop".into(),
            message: "swap budget spent".into(),
            pid: Some(4243),
            code: Some(10),
        });
        t
    }

    #[test]
    fn export_perfetto_parses_back_with_numeric_counters_and_ascending_tracks() {
        let t = offload_with_events();
        let v = export(&t);
        assert_eq!(v["displayTimeUnit"], "ms");
        let events = v["traceEvents"].as_array().unwrap();
        // (pid, track name) → last ts.
        let mut tracks: BTreeMap<(u64, String), u64> = BTreeMap::new();
        let mut counters = 0;
        for e in events {
            let ph = e["ph"].as_str().unwrap();
            assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
            if ph != "C" {
                continue;
            }
            counters += 1;
            let args = e["args"].as_object().unwrap();
            assert_eq!(args.len(), 1, "one number per counter event: {e}");
            let (key, value) = args.iter().next().unwrap();
            assert!(value.is_number(), "{e}");
            assert!(["bytes", "percent", "per_s"].contains(&key.as_str()), "{e}");
            let ts = e["ts"].as_u64().expect("integer µs");
            let track = (
                e["pid"].as_u64().unwrap(),
                format!("{} {key}", e["name"].as_str().unwrap()),
            );
            if let Some(&prev) = tracks.get(&track) {
                assert!(ts > prev, "ts ascending per track: {track:?}");
            }
            tracks.insert(track, ts);
        }
        let n = t.samples.len();
        assert!(counters >= n * 4 + n * t.samples[0].sample.processes.len());
        let names: Vec<&String> = tracks.keys().filter(|k| k.0 == 0).map(|k| &k.1).collect();
        assert_eq!(
            names,
            [
                "compressed bytes",
                "free memory percent",
                "swap growth bytes",
                "swap used bytes"
            ]
        );
        assert!(tracks.contains_key(&(4243, "footprint bytes".into())));
        assert!(tracks.contains_key(&(4243, "page-in rate per_s".into())));
        // The last sample is at 104 s.
        assert_eq!(tracks[&(0, "swap used bytes".into())], 104_000_000);
    }

    #[test]
    fn export_perfetto_names_every_process_and_the_system() {
        let t = synth::seed_offload();
        let v = export(&t);
        let events = v["traceEvents"].as_array().unwrap();
        let names: HashMap<u64, &str> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .map(|e| {
                (
                    e["pid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert!(
            names[&0].starts_with("system (m5-pro, 48.0 GB)"),
            "{names:?}"
        );
        assert_eq!(names[&4243], "python");
        for e in events.iter().filter(|e| e["ph"] != "M") {
            let pid = e["pid"].as_u64().unwrap();
            assert!(names.contains_key(&pid), "no process_name for {pid}");
        }
        // Metadata comes before everything else.
        let first_other = events.iter().position(|e| e["ph"] != "M").unwrap();
        assert!(events[first_other..].iter().all(|e| e["ph"] != "M"));
        assert_eq!(
            v["metadata"]["command"],
            "python generate.py --mode offload"
        );
    }

    #[test]
    fn export_perfetto_flags_and_events_are_instants() {
        let t = offload_with_events();
        let v = export(&t);
        let events = v["traceEvents"].as_array().unwrap();
        let instants: Vec<&Value> = events.iter().filter(|e| e["ph"] == "i").collect();
        assert_eq!(instants.len(), t.flags.len() + 2);
        let ff = instants
            .iter()
            .find(|e| e["args"]["state"] == "false-fit")
            .expect("a false-fit flag");
        assert_eq!(ff["s"], "p");
        assert_eq!(ff["pid"], 4243);
        assert_eq!(ff["name"], "false fit: python");
        let stop = instants.iter().find(|e| e["name"] == "guard-stop").unwrap();
        assert_eq!(stop["s"], "g");
        assert_eq!(stop["args"]["code"], 10);
        assert_eq!(stop["ts"], 104_000_000);
        // Whole stream in time order.
        let ts: Vec<u64> = events
            .iter()
            .filter(|e| e["ph"] != "M")
            .map(|e| e["ts"].as_u64().unwrap())
            .collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn export_perfetto_measured_swap_is_its_own_track() {
        let mut t = synth::seed_staged();
        t.samples.truncate(3);
        for s in &mut t.samples {
            s.sample.processes[0].swap_bytes = Some(1 << 20);
        }
        let v = export(&t);
        let pid = t.samples[0].sample.processes[0].pid;
        let swap: Vec<&Value> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "swap" && e["pid"] == pid)
            .collect();
        assert_eq!(swap.len(), 3);
        assert_eq!(swap[0]["args"]["bytes"], 1 << 20);
    }

    #[test]
    fn phases_are_slices_on_a_phases_track() {
        let mut t = synth::seed_offload();
        t.marks = vec![
            crate::trace::Mark {
                t_ms: 0,
                name: "load".into(),
                end: false,
            },
            crate::trace::Mark {
                t_ms: 20_000,
                name: "denoise".into(),
                end: false,
            },
            crate::trace::Mark {
                t_ms: 90_000,
                name: "denoise".into(),
                end: true,
            },
        ];
        let v = export(&t);
        let events = v["traceEvents"].as_array().unwrap();
        let slices: Vec<(&str, u64, u64)> = events
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                (
                    e["name"].as_str().unwrap(),
                    e["ts"].as_u64().unwrap(),
                    e["dur"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            slices,
            [("load", 0, 20_000_000), ("denoise", 20_000_000, 70_000_000)]
        );
        assert!(events.iter().any(|e| e["ph"] == "M"
            && e["name"] == "thread_name"
            && e["tid"] == PHASES_TID
            && e["args"]["name"] == "phases"));
        // Without marks, no phases track.
        let plain = export(&synth::seed_offload());
        assert!(!plain["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["ph"] == "X" || e["tid"] == PHASES_TID));
    }
}
