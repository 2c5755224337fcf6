//! Prometheus text exposition (format 0.0.4) of one moment: the last sample
//! of a trace, or a live [`Tick`]. The same [`render`] serves
//! `swapsight export --format prometheus` and an HTTP `/metrics`.
//!
//! Cardinality is bounded: per-process series exist only for at most
//! `max_processes` processes — flagged ones first, then the watched tree,
//! then the largest by footprint. Metric names and meanings are in
//! `docs/exports.md`.

use std::fmt::Write;

use crate::detect::State;
use crate::monitor::Tick;
use crate::probe::Sample;
use crate::trace::Trace;
use crate::units::signed_diff;

/// Per-process series are kept for this many processes unless told otherwise.
pub const DEFAULT_MAX_PROCESSES: usize = 10;

/// Content type of the exposition, for an HTTP response.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What one exposition shows: a sample, the watched pids and the detector's
/// states at that moment.
#[derive(Debug, Clone)]
pub struct Snapshot<'a> {
    pub sample: &'a Sample,
    pub watched: &'a [u32],
    /// Processes whose state is not `fits`; absent pids are `fits`.
    pub states: Vec<(u32, State)>,
    /// Swap growth since the baseline (live) or the first sample (trace).
    pub swap_growth_bytes: i64,
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
        family(&mut out, name, "gauge", help);
        let _ = writeln!(out, "{name} {}", number(value));
    }

    let procs = pick(snap, max_processes);
    let labels: Vec<String> = procs
        .iter()
        .map(|p| format!("pid=\"{}\",name=\"{}\"", p.pid, escape_label(&p.name)))
        .collect();
    family(
        &mut out,
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
        &mut out,
        "swapsight_process_pageins_total",
        "counter",
        "Page-ins since the process started: macOS ri_pageins (file page-ins only), Linux majflt (file and swap).",
    );
    for (p, l) in procs.iter().zip(&labels) {
        let _ = writeln!(out, "swapsight_process_pageins_total{{{l}}} {}", p.pageins);
    }
    if procs.iter().any(|p| p.swap_bytes.is_some()) {
        family(
            &mut out,
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
        &mut out,
        "swapsight_process_watched",
        "gauge",
        "1 when the process is in the watched tree (the command under record/guard), else 0.",
    );
    for (p, l) in procs.iter().zip(&labels) {
        let w = u8::from(snap.watched.contains(&p.pid));
        let _ = writeln!(out, "swapsight_process_watched{{{l}}} {w}");
    }
    family(
        &mut out,
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
    out
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
mod tests {
    use super::*;
    use crate::detect::DetectorConfig;
    use crate::monitor::Monitor;
    use crate::synth;
    use prometheus_parse::{Scrape, Value};

    fn parse(text: &str) -> Scrape {
        Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("parses")
    }

    fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
        scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == metric
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.get(k).is_some_and(|x| x == *v))
            })
            .map(|s| match s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
                _ => f64::NAN,
            })
    }

    #[test]
    fn export_prometheus_of_a_trace_parses_back() {
        let t = synth::seed_offload();
        let snap = Snapshot::from_trace(&t).unwrap();
        let text = render(&snap, DEFAULT_MAX_PROCESSES);
        let scrape = parse(&text);
        let last = &t.samples.last().unwrap().sample;
        assert_eq!(
            value(&scrape, "swapsight_swap_used_bytes", &[]),
            Some(last.system.swap_used_bytes as f64)
        );
        let growth = value(&scrape, "swapsight_swap_growth_bytes", &[]).unwrap();
        assert!(growth > 9.0 * (1u64 << 30) as f64, "{growth}");
        let free = value(&scrape, "swapsight_free_ratio", &[]).unwrap();
        assert!((0.0..=1.0).contains(&free));
        assert_eq!(
            value(
                &scrape,
                "swapsight_process_footprint_bytes",
                &[("pid", "4243"), ("name", "python")]
            ),
            Some(
                last.processes
                    .iter()
                    .find(|p| p.pid == 4243)
                    .unwrap()
                    .footprint_bytes as f64
            )
        );
        let pageins = scrape
            .samples
            .iter()
            .find(|s| s.metric == "swapsight_process_pageins_total")
            .unwrap();
        assert!(matches!(pageins.value, Value::Counter(_)), "{pageins:?}");
        assert_eq!(
            value(&scrape, "swapsight_process_watched", &[("pid", "4243")]),
            Some(1.0)
        );
        // The process's last flag decides its state.
        let st = t.flags.iter().rev().find(|f| f.pid == 4243).unwrap().state;
        assert_eq!(
            value(
                &scrape,
                "swapsight_process_state",
                &[("pid", "4243"), ("state", st.as_str())]
            ),
            Some(1.0)
        );
        let ones = scrape
            .samples
            .iter()
            .filter(|s| {
                s.metric == "swapsight_process_state"
                    && s.labels.get("pid") == Some("4243")
                    && matches!(s.value, Value::Gauge(v) if v == 1.0)
            })
            .count();
        assert_eq!(ones, 1);
        // HELP and TYPE for every family.
        for name in [
            "swapsight_swap_used_bytes",
            "swapsight_process_footprint_bytes",
            "swapsight_process_state",
        ] {
            assert!(text.contains(&format!("# HELP {name} ")), "{name}");
            assert!(text.contains(&format!("# TYPE {name} ")), "{name}");
        }
        assert!(text.contains("# TYPE swapsight_process_pageins_total counter"));
        assert!(
            !text.contains("swapsight_process_swap_bytes"),
            "no VmSwap on macOS"
        );
    }

    #[test]
    fn export_prometheus_cardinality_is_bounded() {
        let t = synth::busy_trace(4, 40);
        let snap = Snapshot::from_trace(&t).unwrap();
        let scrape = parse(&render(&snap, 5));
        let pids: std::collections::HashSet<&str> = scrape
            .samples
            .iter()
            .filter_map(|s| s.labels.get("pid"))
            .collect();
        assert_eq!(pids.len(), 5);
        assert!(pids.contains("1000"), "the watched process is kept");
    }

    #[test]
    fn export_prometheus_keeps_flagged_then_watched_then_the_largest() {
        let t = synth::busy_trace(4, 40);
        let mut snap = Snapshot::from_trace(&t).unwrap();
        let mut by_size: Vec<_> = snap.sample.processes.iter().collect();
        by_size.sort_by_key(|p| (p.footprint_bytes, p.pid));
        let (small_a, small_b) = (by_size[0].pid, by_size[1].pid);
        let largest = by_size.last().unwrap().pid;
        let watched = [small_b];
        snap.watched = &watched;
        snap.states = vec![(small_a, State::FalseFit)];
        let pids = |max| -> std::collections::BTreeSet<String> {
            parse(&render(&snap, max))
                .samples
                .iter()
                .filter_map(|s| s.labels.get("pid").map(str::to_string))
                .collect()
        };
        let want = |ps: &[u32]| ps.iter().map(u32::to_string).collect();
        assert_eq!(pids(1), want(&[small_a]));
        assert_eq!(pids(2), want(&[small_a, small_b]));
        assert_eq!(pids(3), want(&[small_a, small_b, largest]));
    }

    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(x) => out.push(x),
                None => out.push('\\'),
            }
        }
        out
    }

    #[test]
    fn export_prometheus_escapes_label_values() {
        let mut t = synth::seed_staged();
        t.samples.truncate(1);
        let p = &mut t.samples[0].sample.processes[0];
        p.name = "a\\b \"c\"\nd".into();
        p.swap_bytes = Some(123);
        let snap = Snapshot::from_trace(&t).unwrap();
        let text = render(&snap, 10);
        assert!(text.contains(r#"name="a\\b \"c\"\nd""#), "{text}");
        assert!(text.contains("swapsight_process_swap_bytes{"), "{text}");
        // prometheus-parse hands label values back still escaped.
        let scrape = parse(&text);
        assert!(scrape
            .samples
            .iter()
            .filter_map(|s| s.labels.get("name"))
            .any(|v| unescape(v) == "a\\b \"c\"\nd"));
        assert_eq!(escape_label("plain"), "plain");
    }

    #[test]
    fn export_prometheus_from_a_live_tick() {
        let t = synth::seed_eager();
        let mut m = Monitor::new(Some(4242), DetectorConfig::default());
        let mut tick = None;
        for s in &t.samples {
            tick = Some(m.step(s.sample.clone()));
        }
        let tick = tick.unwrap();
        let text = render(&Snapshot::from_tick(&tick), 3);
        let scrape = parse(&text);
        assert_eq!(
            value(&scrape, "swapsight_state", &[]),
            Some(state_number(State::Overflow) as f64)
        );
        assert_eq!(
            value(
                &scrape,
                "swapsight_process_state",
                &[("pid", "4242"), ("state", "overflow")]
            ),
            Some(1.0)
        );
    }

    #[test]
    fn export_prometheus_numbers() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }
}
