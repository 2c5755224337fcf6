//! The live tools, memory_now and why_swapping: both read the latest
//! snapshot of the session (`swapsight::live::Live`, what `swapsight
//! serve`'s `/api/snapshot` and the menu-bar app's popover show), as that
//! snapshot serializes, cut to a bounded size.

use std::time::Instant;

use serde_json::{json, Map, Value};
use swapsight::forecast::describe;
use swapsight::live::Snapshot;
use swapsight::units::format_bytes;
use swapsight::State;

use super::answer::{cap, count, only, Answer, Tools};

/// Processes memory_now lists by default, and at most.
const PROCESSES: (u64, u64, u64) = (1, 50, 10);
/// Flagged processes why_swapping lists, at most.
const FLAGGED: usize = 10;
/// Characters kept of a row's evidence and command line.
const ROW_TEXT: usize = 1000;

const STATES: [&str; 4] = ["fits", "hidden-memory", "overflow", "false-fit"];

pub fn memory_now_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "processes": {
                "type": "integer", "minimum": PROCESSES.0, "maximum": PROCESSES.1,
                "description": "How many of the largest processes to list (flagged ones come too)",
            },
        },
        "additionalProperties": false,
    })
}

fn row_schema() -> Value {
    json!({
        "type": "object",
        "required": ["pid", "name", "footprint_bytes", "state", "evidence"],
        "properties": {
            "pid": {"type": "integer"},
            "name": {"type": "string"},
            "cmdline": {"type": "string"},
            "footprint_bytes": {"type": "integer"},
            "footprint_delta_bytes": {"type": "integer"},
            "swap_bytes": {"type": "integer"},
            "gpu_bytes": {"type": "integer"},
            "state": {"enum": STATES},
            "worst": {"enum": STATES},
            "evidence": {"type": "string"},
        },
    })
}

pub fn memory_now_output() -> Value {
    json!({
        "type": "object",
        "required": ["state", "title", "system", "used_bytes", "view", "forecast",
                     "processes", "process_count"],
        "properties": {
            "t_ms": {"type": "integer"},
            "state": {"enum": STATES, "description": "The worst state of any process now"},
            "title": {"type": "string", "description": "The menu-bar title, e.g. ⇡2.1G ⚠ false fit"},
            "system": {"type": "object", "description": "Free (free_pct), swap, pressure, GPU, \
    wired, compressed figures, as swapsight serve's /api/snapshot"},
            "used_bytes": {"type": "integer"},
            "view": {"type": "object", "description": "Swap growth since the start, the \
    tolerance, and the memory no footprint explains (gap)"},
            "forecast": {"type": "object"},
            "scope": {"type": "object"},
            "caches": {"type": "array"},
            "process_count": {"type": "integer"},
            "processes": {"type": "array", "items": row_schema()},
        },
    })
}

pub fn why_swapping_input() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

pub fn why_swapping_output() -> Value {
    json!({
        "type": "object",
        "required": ["verdict", "swapping", "swap_growth_bytes", "summary", "flagged",
                     "holders", "forecast"],
        "properties": {
            "verdict": {"enum": STATES},
            "swapping": {"type": "boolean", "description": "Swap grew past the tolerance since \
    the start"},
            "swap_growth_bytes": {"type": "integer"},
            "swap_tolerance_bytes": {"type": "integer"},
            "unexplained_bytes": {"type": "integer", "description": "Used memory no footprint \
    explains"},
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "flagged": {"type": "array", "items": row_schema()},
            "holders": {"type": "array", "items": {
                "type": "object", "required": ["kind", "bytes", "words"],
                "properties": {
                    "kind": {"enum": ["gpu", "allocator-cache"]},
                    "bytes": {"type": "number"},
                    "words": {"type": "string"},
                },
            }},
            "forecast": {"type": "object"},
            "nearest": {"type": ["object", "null"], "properties": {
                "limit": {"type": "string"}, "seconds": {"type": "number"},
                "words": {"type": "string"},
            }},
        },
    })
}

/// The latest snapshot, waiting for the first one.
fn snapshot(tools: &Tools) -> Result<Snapshot, String> {
    let live = tools
        .live
        .as_ref()
        .map_err(|e| format!("the memory probe did not start: {e}"))?;
    let until = Instant::now() + tools.first_tick_wait;
    loop {
        if let Some(s) = live.snapshot() {
            return Ok(s);
        }
        if Instant::now() >= until {
            return Err("no sample yet: the first one is still being taken; ask again".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A row as the snapshot serializes it, its long texts cut.
fn row(mut r: Value) -> Value {
    for key in ["evidence", "cmdline"] {
        if let Some(Value::String(s)) = r.get_mut(key) {
            *s = cap(s, ROW_TEXT);
        }
    }
    r
}

fn bytes(b: u64) -> String {
    format_bytes(i64::try_from(b).unwrap_or(i64::MAX))
}

pub fn memory_now(tools: &Tools, args: &Map<String, Value>) -> Answer {
    only(args, &["processes"])?;
    let n = count(args, "processes", PROCESSES)? as usize;
    let s = snapshot(tools)?;
    let full = serde_json::to_value(&s).map_err(|e| e.to_string())?;
    let rows: Vec<Value> = match full.get("processes") {
        Some(Value::Array(rows)) => rows
            .iter()
            .enumerate()
            .filter(|(i, r)| *i < n || r["state"] != "fits")
            .take(PROCESSES.1 as usize)
            .map(|(_, r)| row(r.clone()))
            .collect(),
        _ => Vec::new(),
    };
    let sys = &s.system;
    let mut text = format!(
        "Free {:.0} % of {}, used {}, swap {} in use ({} since the start); state {}",
        sys.free_pct,
        bytes(sys.phys_bytes),
        bytes(s.system.used_bytes()),
        bytes(sys.swap_used_bytes),
        format_bytes(s.view.swap_growth_bytes),
        s.state,
    );
    if let Some(level) = sys.pressure.as_ref().and_then(|p| p.level) {
        text += &format!("; pressure {level}");
    }
    let largest: Vec<String> = rows
        .iter()
        .take(3)
        .map(|r| {
            let b = r["footprint_bytes"].as_u64().unwrap_or(0);
            format!(
                "{} (pid {}) {}",
                r["name"].as_str().unwrap_or("?"),
                r["pid"],
                bytes(b)
            )
        })
        .collect();
    if !largest.is_empty() {
        text += &format!(". Largest: {}.", largest.join(", "));
    }
    let mut out = json!({
        "t_ms": s.t_ms,
        "state": full["state"],
        "title": s.title,
        "system": full["system"],
        "used_bytes": s.system.used_bytes(),
        "view": full["view"],
        "forecast": full["forecast"],
        "process_count": s.process_count,
        "processes": rows,
    });
    for key in ["scope", "caches"] {
        if let Some(v) = full.get(key) {
            out[key] = v.clone();
        }
    }
    Ok((text, out))
}

/// Who holds the memory no footprint explains: the GPU, an allocator's cache.
fn holders(s: &Snapshot) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(gpu) = s.view.gap.held_by_gpu().filter(|&b| b > 0) {
        out.push(json!({
            "kind": "gpu",
            "bytes": gpu,
            "words": format!(
                "the GPU holds {} that no process's footprint counts",
                bytes(gpu)
            ),
        }));
    }
    for c in s.caches.iter().take(FLAGGED) {
        out.push(json!({
            "kind": "allocator-cache",
            "bytes": c.cache_growth_bytes,
            "words": cap(&c.words, ROW_TEXT),
        }));
    }
    out
}

pub fn why_swapping(tools: &Tools, args: &Map<String, Value>) -> Answer {
    only(args, &[])?;
    let s = snapshot(tools)?;
    let full = serde_json::to_value(&s).map_err(|e| e.to_string())?;
    let view = &full["view"];
    let tolerance = view["swap_tolerance_bytes"].as_u64().unwrap_or(0);
    let growth = s.view.swap_growth_bytes;
    let swapping = growth > 0 && growth.unsigned_abs() > tolerance;
    let flagged: Vec<Value> = match full.get("processes") {
        Some(Value::Array(rows)) => rows
            .iter()
            .filter(|r| r["state"] != "fits" || r["worst"] != "fits")
            .take(FLAGGED)
            .map(|r| row(r.clone()))
            .collect(),
        _ => Vec::new(),
    };
    let holders = holders(&s);
    let nearest = s.forecast.nearest().map(
        |(limit, secs)| json!({"limit": limit, "seconds": secs, "words": describe(limit, secs)}),
    );
    let summary = summary(&s, swapping, &flagged, &holders, nearest.as_ref());
    Ok((
        summary.clone(),
        json!({
            "verdict": full["state"],
            "swapping": swapping,
            "swap_growth_bytes": growth,
            "swap_tolerance_bytes": tolerance,
            "unexplained_bytes": s.view.gap.unexplained_bytes,
            "title": s.title,
            "summary": summary,
            "flagged": flagged,
            "holders": holders,
            "forecast": full["forecast"],
            "nearest": nearest,
        }),
    ))
}

/// The answer in a few sentences.
fn summary(
    s: &Snapshot,
    swapping: bool,
    flagged: &[Value],
    holders: &[Value],
    nearest: Option<&Value>,
) -> String {
    let growth = s.view.swap_growth_bytes;
    let mut out = if swapping {
        format!(
            "Swapping: swap grew {} since the start.",
            format_bytes(growth)
        )
    } else {
        format!(
            "Not swapping: swap changed {} since the start, within the tolerance.",
            format_bytes(growth)
        )
    };
    out += &match s.state {
        State::Fits => " Every process fits.".to_string(),
        State::FalseFit => " Verdict: false fit — swap climbs while the footprints leave \
room: memory outside them is to blame."
            .to_string(),
        State::Overflow => " Verdict: overflow — the footprints explain the swap.".to_string(),
        State::HiddenMemory => {
            " Verdict: hidden memory — held out of the footprints' sight.".to_string()
        }
    };
    if let Some(f) = flagged.first() {
        let evidence = f["evidence"].as_str().unwrap_or("");
        let first = evidence.lines().next().unwrap_or("");
        out += &format!(
            " {} (pid {}) is {}: {}",
            f["name"].as_str().unwrap_or("?"),
            f["pid"],
            f["state"].as_str().unwrap_or("?"),
            first
        );
    }
    for h in holders.iter().take(2) {
        out += &format!(" Holder: {}.", h["words"].as_str().unwrap_or(""));
    }
    if let Some(n) = nearest {
        out += &format!(" Forecast: {}.", n["words"].as_str().unwrap_or(""));
    }
    out
}
