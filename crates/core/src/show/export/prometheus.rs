//! Prometheus text exposition (format 0.0.4) of one moment: the last sample
//! of a trace, or a live [`Tick`]. The same [`render`] serves
//! `swapsight export --format prometheus` and an HTTP `/metrics`.
//!
//! Cardinality is bounded: per-process series exist only for at most
//! `max_processes` processes — flagged ones first, then the watched tree,
//! then the largest by footprint. Metric names and meanings are in
//! `docs/exports.md`.

pub use crate::record::counters::{last_counters, LastCounter};
use std::fmt::Write;

use crate::probe::Sample;
use crate::record::trace::Trace;
use crate::step::detect::State;
use crate::step::forecast::{Forecast, Limit};
use crate::step::tick::Tick;
use crate::util::units::signed_diff;

/// Per-process series are kept for this many processes unless told otherwise.
pub const DEFAULT_MAX_PROCESSES: usize = 10;

/// Content type of the exposition, for an HTTP response.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What one exposition shows: a sample, the watched pids and the detector's
/// states at that moment.
#[derive(Debug, Clone)]
pub struct Snapshot<'a> {
    pub(crate) sample: &'a Sample,
    pub(crate) watched: &'a [u32],
    /// Processes whose state is not `fits`; absent pids are `fits`.
    pub states: Vec<(u32, State)>,
    /// Swap growth since the baseline (live) or the first sample (trace).
    pub swap_growth_bytes: i64,
    /// Time to trouble at that moment.
    pub forecast: Forecast,
    /// The pipeline's own counters: each name's last value, with its unit
    /// (at most [`crate::record::counters::MAX_NAMES`] names).
    pub counters: Vec<LastCounter>,
}

impl<'a> Snapshot<'a> {
    /// A live tick: states and swap growth as the detector has them.
    pub fn from_tick(tick: &'a Tick) -> Self {
        Snapshot {
            sample: &tick.sample,
            watched: &tick.watched,
            states: tick
                .flagged
                .iter()
                .filter(|a| a.state != State::Fits)
                .map(|a| (a.pid, a.state))
                .collect(),
            swap_growth_bytes: tick.view.swap_growth_bytes,
            forecast: tick.forecast,
            counters: Vec::new(),
        }
    }

    /// The last sample of a trace, with each process's state from the last
    /// flag recorded for it; `None` when the trace has no samples.
    pub fn from_trace(trace: &'a Trace) -> Option<Self> {
        let last = trace.samples.last()?;
        let first_swap = trace.samples.first()?.sample.system.swap_used_bytes;
        Some(Snapshot {
            sample: &last.sample,
            watched: &last.watched,
            states: super::StateTimeline::new(trace).final_states(),
            swap_growth_bytes: signed_diff(last.sample.system.swap_used_bytes, first_swap),
            forecast: last.forecast.unwrap_or_default(),
            counters: crate::record::counters::last_counters(&trace.counters),
        })
    }

    fn state_of(&self, pid: u32) -> State {
        self.states
            .iter()
            .find(|&&(p, _)| p == pid)
            .map_or(State::Fits, |&(_, s)| s)
    }
}

/// The states in exposition order; `swapsight_state` uses the index.
const STATES: [State; 4] = [
    State::Fits,
    State::HiddenMemory,
    State::Overflow,
    State::FalseFit,
];

fn state_number(s: State) -> usize {
    STATES.iter().position(|&x| x == s).unwrap_or(0)
}

/// Renders the exposition. At most `max_processes` processes get series.
pub fn render(snap: &Snapshot<'_>, max_processes: usize) -> String {
    let mut out = String::with_capacity(4096);
    system_gauges(&mut out, snap);
    pressure(&mut out, snap);
    if let Some(scope) = &snap.sample.scope {
        scope_series(&mut out, scope);
    }
    process_series(&mut out, snap, max_processes);
    counter_series(&mut out, &snap.counters);
    out
}

/// The pipeline's own counters (`swapsight.counter()` in Python, `swapsight
/// counter`): bytes as `swapsight_counter_bytes{name}`, other units as
/// `swapsight_counter_value{name,unit}`. The names are bounded: at most
/// [`crate::record::counters::MAX_NAMES`].
fn counter_series(out: &mut String, counters: &[LastCounter]) {
    let (bytes, others): (Vec<&LastCounter>, Vec<&LastCounter>) =
        counters.iter().partition(|c| c.unit == "bytes");
    if !bytes.is_empty() {
        family(
            out,
            "swapsight_counter_bytes",
            "gauge",
            "The recorded pipeline's own byte counters (e.g. what its allocator holds), last value.",
        );
        for c in bytes {
            let name = escape_label(&c.name);
            let _ = writeln!(
                out,
                "swapsight_counter_bytes{{name=\"{name}\"}} {}",
                number(c.value)
            );
        }
    }
    if !others.is_empty() {
        family(
            out,
            "swapsight_counter_value",
            "gauge",
            "The recorded pipeline's own counters in other units, last value.",
        );
        for c in others {
            let (name, unit) = (escape_label(&c.name), escape_label(&c.unit));
            let _ = writeln!(
                out,
                "swapsight_counter_value{{name=\"{name}\",unit=\"{unit}\"}} {}",
                number(c.value)
            );
        }
    }
}

/// The machine's figures, one gauge each, and the worst state now.
fn system_gauges(out: &mut String, snap: &Snapshot<'_>) {
    let sys = &snap.sample.system;
    let worst = snap
        .states
        .iter()
        .map(|&(_, s)| s)
        .max()
        .unwrap_or(State::Fits);
    let free_ratio = (sys.free_pct / 100.0).clamp(0.0, 1.0);
    let gauges: [(&str, &str, f64); 8] = [
        (
            "swapsight_memory_bytes",
            "Physical memory (macOS hw.memsize, Linux MemTotal).",
            sys.phys_bytes as f64,
        ),
        (
            "swapsight_free_ratio",
            "Free memory as a ratio 0..1 (macOS kern.memorystatus_level, Linux MemAvailable/MemTotal).",
            free_ratio,
        ),
        (
            "swapsight_swap_used_bytes",
            "Swap in use.",
            sys.swap_used_bytes as f64,
        ),
        (
            "swapsight_swap_total_bytes",
            "Swap configured or currently allocated.",
            sys.swap_total_bytes as f64,
        ),
        (
            "swapsight_swap_growth_bytes",
            "Swap growth since the baseline (monitor start or reset; a trace's first sample).",
            snap.swap_growth_bytes as f64,
        ),
        (
            "swapsight_compressed_bytes",
            "Memory held by the compressor (macOS; 0 on Linux).",
            sys.compressed_bytes as f64,
        ),
        (
            "swapsight_elapsed_seconds",
            "Time of this sample since the recording or monitor started.",
            snap.sample.t_ms as f64 / 1000.0,
        ),
        (
            "swapsight_state",
            "Worst process state now: 0 fits, 1 hidden-memory, 2 overflow, 3 false-fit.",
            state_number(worst) as f64,
        ),
    ];
    for (name, help, value) in gauges {
        family(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {}", number(value));
    }
    // Figures not every OS gives: absent, never a zero that reads as none.
    let gpu = sys.gpu.unwrap_or_default();
    let optional: [(&str, &str, &str, Option<u64>); 6] = [
        ("swapsight_swap_written_bytes_total", "counter", "Bytes written to swap since boot, SSD wear (Linux pswpout of /proc/vmstat, macOS vm_statistics64 swapouts, times the page size).", sys.swap_out_bytes),
        ("swapsight_wired_bytes", "gauge", "Wired memory, held by the kernel and drivers in no process's footprint (macOS wire_count).", sys.wired_bytes),
        ("swapsight_gpu_in_use_bytes", "gauge", "System memory the GPU's allocations hold (macOS IOAccelerator PerformanceStatistics \"In use system memory\").", gpu.in_use_bytes),
        ("swapsight_gpu_alloc_bytes", "gauge", "System memory allocated for the GPU, in use or not (macOS IOAccelerator \"Alloc system memory\").", gpu.alloc_bytes),
        ("swapsight_gpu_wired_limit_bytes", "gauge", "The most the GPU may wire: sysctl iogpu.wired_limit_mb where set, else Metal's recommended working set (macOS).", gpu.wired_limit_bytes()),
        ("swapsight_gpu_recommended_working_set_bytes", "gauge", "Metal's recommendedMaxWorkingSetSize of the default device (macOS).", gpu.recommended_working_set_bytes),
    ];
    for (name, kind, help, value) in optional {
        if let Some(v) = value {
            family(out, name, kind, help);
            let _ = writeln!(out, "{name} {v}");
        }
    }
}

/// Series per process, for at most `max_processes` of them (watched first).
fn process_series(out: &mut String, snap: &Snapshot<'_>, max_processes: usize) {
    let procs = pick(snap, max_processes);
    let labels: Vec<String> = procs
        .iter()
        .map(|p| format!("pid=\"{}\",name=\"{}\"", p.pid, escape_label(&p.name)))
        .collect();
    family(
        out,
        "swapsight_process_footprint_bytes",
        "gauge",
        "Footprint: macOS phys_footprint (includes its compressed memory, in RAM or swapped out), Linux RssAnon+RssShmem (resident only).",
    );
    for (p, l) in procs.iter().zip(&labels) {
        let _ = writeln!(
            out,
            "swapsight_process_footprint_bytes{{{l}}} {}",
            p.footprint_bytes
        );
    }
    family(
        out,
        "swapsight_process_pageins_total",
        "counter",
        "Page-ins since the process started: macOS ri_pageins (file page-ins only), Linux majflt (file and swap).",
    );
    for (p, l) in procs.iter().zip(&labels) {
        let _ = writeln!(out, "swapsight_process_pageins_total{{{l}}} {}", p.pageins);
    }
    if procs.iter().any(|p| p.swap_bytes.is_some()) {
        family(
            out,
            "swapsight_process_swap_bytes",
            "gauge",
            "Measured swap of the process (Linux VmSwap); absent where the OS does not say.",
        );
        for (p, l) in procs.iter().zip(&labels) {
            if let Some(b) = p.swap_bytes {
                let _ = writeln!(out, "swapsight_process_swap_bytes{{{l}}} {b}");
            }
        }
    }
    family(
        out,
        "swapsight_process_watched",
        "gauge",
        "1 when the process is in the watched tree (the command under record/guard), else 0.",
    );
    for (p, l) in procs.iter().zip(&labels) {
        let w = u8::from(snap.watched.contains(&p.pid));
        let _ = writeln!(out, "swapsight_process_watched{{{l}}} {w}");
    }
    family(
        out,
        "swapsight_process_state",
        "gauge",
        "1 for the process's current state, 0 for the others (fits, hidden-memory, overflow, false-fit).",
    );
    for (p, l) in procs.iter().zip(&labels) {
        let now = snap.state_of(p.pid);
        for s in STATES {
            let _ = writeln!(
                out,
                "swapsight_process_state{{{l},state=\"{}\"}} {}",
                s.as_str(),
                u8::from(s == now)
            );
        }
    }
}

/// The pressure level, the PSI totals and the time to each limit; each
/// absent when there is nothing to say (no PSI, not at this rate) — never
/// a zero that reads as calm or as "now".
fn pressure(out: &mut String, snap: &Snapshot<'_>) {
    let p = snap.sample.system.pressure;
    if let Some(level) = p.and_then(|p| p.level) {
        family(
            out,
            "swapsight_memory_pressure_level",
            "gauge",
            "Memory pressure level: 1 normal, 2 warning, 4 critical (macOS kern.memorystatus_vm_pressure_level; Linux derived from PSI).",
        );
        let _ = writeln!(out, "swapsight_memory_pressure_level {}", level.value());
    }
    let totals = [
        (
            "swapsight_pressure_memory_waiting_seconds_total",
            "Time some tasks stalled on memory since boot (Linux PSI some total).",
            p.and_then(|p| p.some),
        ),
        (
            "swapsight_pressure_memory_stalled_seconds_total",
            "Time all non-idle tasks stalled on memory at once since boot (Linux PSI full total).",
            p.and_then(|p| p.full),
        ),
    ];
    for (name, help, line) in totals {
        if let Some(line) = line {
            family(out, name, "counter", help);
            let _ = writeln!(out, "{name} {}", number(line.total_us as f64 / 1e6));
        }
    }
    let etas: Vec<(Limit, f64)> = Limit::ALL
        .iter()
        .filter_map(|&l| snap.forecast.get(l).map(|s| (l, s)))
        .collect();
    if !etas.is_empty() {
        family(
            out,
            "swapsight_seconds_to_limit",
            "gauge",
            "Seconds until the limit at the current rate (swap-budget, free-floor, swap-full); absent when not at this rate.",
        );
        for (limit, secs) in etas {
            let _ = writeln!(
                out,
                "swapsight_seconds_to_limit{{limit=\"{}\"}} {}",
                limit.as_str(),
                number(secs)
            );
        }
    }
}

/// Longest `scope` label value: a cgroup path, cut at a character boundary.
pub const SCOPE_LABEL_MAX_CHARS: usize = 128;

/// The run's scope (one memory cgroup, so one series per family: the
/// `scope` label is bounded by construction, and its value by
/// [`SCOPE_LABEL_MAX_CHARS`]).
fn scope_series(out: &mut String, scope: &crate::probe::Scope) {
    let mut path: String = scope.path.chars().take(SCOPE_LABEL_MAX_CHARS).collect();
    if scope.path.chars().count() > SCOPE_LABEL_MAX_CHARS {
        path.pop();
        path.push('…');
    }
    let l = format!(
        "scope=\"{}\",version=\"{}\"",
        escape_label(&path),
        scope.version
    );
    let e = &scope.events;
    let psi = scope.pressure.as_ref();
    let level = psi.and_then(|p| p.level).map(|l| u64::from(l.value()));
    let series: [(&str, &str, &str, Option<u64>); 9] = [
        ("swapsight_scope_limit_bytes", "gauge", "Memory limit of the run's scope, the memory cgroup it is judged against (v2 memory.max, else memory.high; v1 memory.limit_in_bytes).", Some(scope.limit_bytes)),
        ("swapsight_scope_usage_bytes", "gauge", "Memory charged to the scope (v2 memory.current, v1 memory.usage_in_bytes).", Some(scope.usage_bytes)),
        ("swapsight_scope_swap_bytes", "gauge", "Swap of the scope (v2 memory.swap.current, v1 total_swap of memory.stat).", scope.swap_bytes),
        ("swapsight_scope_swap_limit_bytes", "gauge", "The scope's own swap limit (v2 memory.swap.max; v1 memsw limit less the memory limit).", scope.swap_limit_bytes),
        ("swapsight_scope_high_bytes", "gauge", "The scope's memory.high throttle (v2).", scope.high_bytes),
        ("swapsight_scope_limit_hits_total", "counter", "Times the scope's usage hit its limit (v2 memory.events max, v1 memory.failcnt).", e.max),
        ("swapsight_scope_oom_kills_total", "counter", "Processes of the scope killed by an OOM killer (oom_kill of v2 memory.events, v1 memory.oom_control).", e.oom_kill),
        ("swapsight_scope_memory_pressure_level", "gauge", "The scope's own pressure level from its memory.pressure (v2): 1 normal, 2 warning, 4 critical.", level),
        ("swapsight_scope_swap_written_bytes_total", "counter", "Bytes the scope's processes wrote to swap (v2 pswpout of memory.stat times the page size, where the kernel counts it per cgroup).", scope.swap_out_bytes),
    ];
    for (name, kind, help, value) in series {
        if let Some(v) = value {
            family(out, name, kind, help);
            let _ = writeln!(out, "{name}{{{l}}} {v}");
        }
    }
    let totals = [
        ("swapsight_scope_pressure_memory_waiting_seconds_total", "The scope's PSI some total (v2 memory.pressure): time at least one of its tasks stalled on memory.", psi.and_then(|p| p.some)),
        ("swapsight_scope_pressure_memory_stalled_seconds_total", "The scope's PSI full total (v2 memory.pressure): time all its non-idle tasks stalled on memory at once.", psi.and_then(|p| p.full)),
    ];
    for (name, help, line) in totals {
        if let Some(line) = line {
            family(out, name, "counter", help);
            let secs = line.total_us as f64 / 1e6;
            let _ = writeln!(out, "{name}{{{l}}} {}", number(secs));
        }
    }
}

/// Flagged first (worst first), then watched, then by footprint; `max` kept.
fn pick<'s>(snap: &'s Snapshot<'_>, max: usize) -> Vec<&'s crate::probe::ProcessSample> {
    let mut procs: Vec<_> = snap.sample.processes.iter().collect();
    procs.sort_by(|a, b| {
        snap.state_of(b.pid)
            .cmp(&snap.state_of(a.pid))
            .then(
                snap.watched
                    .contains(&b.pid)
                    .cmp(&snap.watched.contains(&a.pid)),
            )
            .then(b.footprint_bytes.cmp(&a.footprint_bytes))
            .then(a.pid.cmp(&b.pid))
    });
    procs.truncate(max);
    procs
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A sample value: integers without a fraction, others as Rust prints them.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v == v.trunc() && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Label value escaping: backslash, double quote and newline.
pub fn escape_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// HELP text escaping: backslash and newline.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
#[path = "prometheus_tests.rs"]
mod tests;
