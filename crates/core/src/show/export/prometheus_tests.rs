use super::*;
use crate::step::detect::DetectorConfig;
use crate::step::monitor::Monitor;
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

#[test]
fn pressure_and_time_to_limit_are_exported_where_known() {
    use crate::step::forecast::Forecast;
    use crate::step::pressure::{Level, Pressure, PsiLine};
    let mut t = synth::seed_offload();
    let last = t.samples.last_mut().unwrap();
    last.sample.system.pressure = Some(Pressure {
        some: Some(PsiLine {
            avg10: 12.5,
            avg60: 3.0,
            total_us: 72_636_100,
        }),
        full: Some(PsiLine {
            avg10: 2.0,
            avg60: 1.0,
            total_us: 60_358_068,
        }),
        kernel_level: None,
        level: Some(Level::Warning),
    });
    last.forecast = Some(Forecast {
        swap_budget_s: Some(42.5),
        free_floor_s: None,
        swap_full_s: Some(600.0),
        ..Forecast::default()
    });
    let text = render(&Snapshot::from_trace(&t).unwrap(), DEFAULT_MAX_PROCESSES);
    let scrape = parse(&text);
    assert_eq!(
        value(&scrape, "swapsight_memory_pressure_level", &[]),
        Some(2.0)
    );
    assert_eq!(
        value(
            &scrape,
            "swapsight_pressure_memory_waiting_seconds_total",
            &[]
        ),
        Some(72.6361)
    );
    assert_eq!(
        value(
            &scrape,
            "swapsight_pressure_memory_stalled_seconds_total",
            &[]
        ),
        Some(60.358068)
    );
    assert!(text.contains("# TYPE swapsight_pressure_memory_waiting_seconds_total counter"));
    let to = |limit| value(&scrape, "swapsight_seconds_to_limit", &[("limit", limit)]);
    assert_eq!(to("swap-budget"), Some(42.5));
    assert_eq!(to("swap-full"), Some(600.0));
    assert_eq!(to("free-floor"), None, "not at this rate: absent, not 0");
}

#[test]
fn no_pressure_and_no_forecast_export_nothing_that_reads_as_calm() {
    let mut t = synth::seed_offload();
    // the seed's swap climbs to the end: its forecast is there, until taken
    assert!(t.samples.last().unwrap().forecast.is_some());
    t.samples.last_mut().unwrap().forecast = None;
    assert!(t.samples.last().unwrap().sample.system.pressure.is_none());
    let text = render(&Snapshot::from_trace(&t).unwrap(), DEFAULT_MAX_PROCESSES);
    for absent in [
        "swapsight_memory_pressure_level",
        "swapsight_pressure_memory_waiting_seconds_total",
        "swapsight_seconds_to_limit",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
}

#[test]
fn export_prometheus_shows_the_scope_with_one_bounded_label() {
    let mut t = synth::seed_offload();
    let long = format!("/kubepods/{}\"\n", "x".repeat(300));
    t.samples.last_mut().unwrap().sample.scope = Some(crate::probe::Scope {
        path: long,
        version: 2,
        limit_bytes: 16 << 30,
        usage_bytes: 15 << 30,
        swap_bytes: Some(3 << 30),
        events: crate::probe::ScopeEvents {
            max: Some(12),
            oom_kill: Some(1),
            ..Default::default()
        },
        ..Default::default()
    });
    let text = render(&Snapshot::from_trace(&t).unwrap(), DEFAULT_MAX_PROCESSES);
    let scrape = parse(&text);
    let series: Vec<_> = scrape
        .samples
        .iter()
        .filter(|s| s.metric.starts_with("swapsight_scope_"))
        .collect();
    // limit, usage, swap, limit hits, OOM kills: one series each.
    assert_eq!(series.len(), 5, "{text}");
    let label = series[0].labels.get("scope").unwrap();
    assert!(label.chars().count() <= SCOPE_LABEL_MAX_CHARS, "{label}");
    assert!(label.ends_with('…'));
    assert_eq!(
        value(&scrape, "swapsight_scope_limit_bytes", &[("version", "2")]),
        Some((16u64 << 30) as f64)
    );
    assert_eq!(
        value(&scrape, "swapsight_scope_oom_kills_total", &[]),
        Some(1.0)
    );
    // No scope, no series.
    let t = synth::seed_offload();
    let text = render(&Snapshot::from_trace(&t).unwrap(), DEFAULT_MAX_PROCESSES);
    assert!(!text.contains("swapsight_scope_"), "{text}");
}

#[test]
fn counters_are_their_last_values_bytes_and_other_units_apart() {
    let mut t = synth::seed_offload();
    let point = synth::counter;
    t.counters = vec![
        point(1000, "torch.mps.driver_allocated", 1e9, "bytes"),
        point(1500, "queue", 3.0, "items"),
        point(2000, "torch.mps.driver_allocated", 3.5e9, "bytes"),
    ];
    let snap = Snapshot::from_trace(&t).unwrap();
    let text = render(&snap, 5);
    let scrape = parse(&text);
    let bytes = value(
        &scrape,
        "swapsight_counter_bytes",
        &[("name", "torch.mps.driver_allocated")],
    );
    assert_eq!(bytes, Some(3.5e9), "the last value, not the first:\n{text}");
    let items = value(
        &scrape,
        "swapsight_counter_value",
        &[("name", "queue"), ("unit", "items")],
    );
    assert_eq!(items, Some(3.0), "{text}");
    assert!(text.contains("# TYPE swapsight_counter_bytes gauge"));
    // Without counters, no family at all.
    let plain = synth::seed_offload();
    let text = render(&Snapshot::from_trace(&plain).unwrap(), 5);
    assert!(!text.contains("swapsight_counter"), "{text}");
}

#[test]
fn counter_names_are_bounded() {
    let many: Vec<crate::record::trace::Counter> = (0..100)
        .map(|i| crate::record::trace::Counter {
            t_ms: i,
            name: format!("c{i}"),
            value: i as f64,
            unit: "bytes".into(),
        })
        .collect();
    let last = last_counters(&many);
    assert_eq!(last.len(), crate::record::counters::MAX_NAMES);
    assert_eq!(last[0].name, "c0");
}

#[test]
fn the_scopes_own_pressure_is_exported_with_its_labels_and_absent_without() {
    use crate::step::pressure::{Level, Pressure, PsiLine};
    let mut t = synth::seed_offload();
    let last = t.samples.len() - 1;
    let mut scope = crate::probe::Scope {
        path: "/job".into(),
        version: 2,
        limit_bytes: 1 << 30,
        ..Default::default()
    };
    t.samples[last].sample.scope = Some(scope.clone());
    let text = render(&Snapshot::from_trace(&t).unwrap(), 5);
    assert!(!text.contains("swapsight_scope_memory_pressure"), "{text}");
    assert!(!text.contains("swapsight_scope_pressure_"), "{text}");

    scope.pressure = Some(Pressure {
        some: Some(PsiLine {
            avg10: 31.0,
            avg60: 10.0,
            total_us: 2_500_000,
        }),
        full: Some(PsiLine {
            total_us: 1_000_000,
            ..PsiLine::default()
        }),
        level: Some(Level::Warning),
        ..Pressure::default()
    });
    t.samples[last].sample.scope = Some(scope);
    let text = render(&Snapshot::from_trace(&t).unwrap(), 5);
    let scrape = parse(&text);
    let labels = [("scope", "/job"), ("version", "2")];
    let at = |metric| value(&scrape, metric, &labels);
    assert_eq!(
        at("swapsight_scope_memory_pressure_level"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        at("swapsight_scope_pressure_memory_waiting_seconds_total"),
        Some(2.5)
    );
    assert_eq!(
        at("swapsight_scope_pressure_memory_stalled_seconds_total"),
        Some(1.0)
    );
}

/// Swap written is a counter (`_total`), and the Mac's GPU and wired
/// figures are gauges, each only where the OS gave it.
#[test]
fn swap_written_gpu_and_wired_are_exported_where_known() {
    let mut t = synth::seed_offload();
    let written = t
        .samples
        .last()
        .unwrap()
        .sample
        .system
        .swap_out_bytes
        .unwrap();
    let text = render(&Snapshot::from_trace(&t).unwrap(), DEFAULT_MAX_PROCESSES);
    let scrape = parse(&text);
    assert!(text.contains("# TYPE swapsight_swap_written_bytes_total counter"));
    assert_eq!(
        value(&scrape, "swapsight_swap_written_bytes_total", &[]),
        Some(written as f64)
    );
    for absent in [
        "swapsight_gpu_",
        "swapsight_wired_bytes",
        "swapsight_scope_swap_written",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
    let sys = &mut t.samples.last_mut().unwrap().sample.system;
    sys.wired_bytes = Some(3 << 30);
    sys.gpu = Some(crate::probe::GpuMemory {
        in_use_bytes: Some(31 << 30),
        alloc_bytes: Some(33 << 30),
        wired_limit_mb: Some(0),
        recommended_working_set_bytes: Some(36 << 30),
        ..Default::default()
    });
    let scrape = parse(&render(
        &Snapshot::from_trace(&t).unwrap(),
        DEFAULT_MAX_PROCESSES,
    ));
    let gib = |n: u64| Some((n << 30) as f64);
    assert_eq!(value(&scrape, "swapsight_wired_bytes", &[]), gib(3));
    assert_eq!(value(&scrape, "swapsight_gpu_in_use_bytes", &[]), gib(31));
    assert_eq!(value(&scrape, "swapsight_gpu_alloc_bytes", &[]), gib(33));
    // iogpu.wired_limit_mb=0 is the default: Metal's recommended size.
    assert_eq!(
        value(&scrape, "swapsight_gpu_wired_limit_bytes", &[]),
        gib(36)
    );
    assert_eq!(
        value(&scrape, "swapsight_gpu_recommended_working_set_bytes", &[]),
        gib(36)
    );
}
