use super::*;
use crate::record::trace::Event as TraceEvent;
use crate::record::trace::Trace;
use crate::synth;
use std::collections::BTreeMap;

fn export(trace: &Trace) -> Value {
    let mut out = Vec::new();
    crate::show::export::ExportFormat::Perfetto
        .write(trace, &Default::default(), &mut out)
        .unwrap();
    serde_json::from_slice(&out).expect("valid JSON")
}

/// The counter events of the system's track `name`.
fn system_track(v: &Value, name: &str) -> Vec<Value> {
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == name && e["pid"] == 0 && e["ph"] == "C")
        .cloned()
        .collect()
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
        names[&0].starts_with("system (m5-pro, 48.0 GiB)"),
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
fn export_perfetto_the_scope_is_three_system_tracks() {
    let mut t = synth::seed_staged();
    t.samples.truncate(3);
    t.samples[1].sample.scope = Some(crate::probe::Scope {
        limit_bytes: 256 << 20,
        usage_bytes: 200 << 20,
        swap_bytes: Some(64 << 20),
        ..Default::default()
    });
    let v = export(&t);
    let on = |name: &str| system_track(&v, name);
    assert_eq!(on("scope limit").len(), 1, "only the sample that has one");
    assert_eq!(on("scope limit")[0]["args"]["bytes"], 256 << 20);
    assert_eq!(on("scope usage")[0]["args"]["bytes"], 200 << 20);
    assert_eq!(on("scope swap")[0]["args"]["bytes"], 64 << 20);
}

#[test]
fn phases_are_slices_on_a_phases_track() {
    let mut t = synth::seed_offload();
    t.marks = vec![
        crate::record::trace::Mark {
            t_ms: 0,
            name: "load".into(),
            end: false,
        },
        crate::record::trace::Mark {
            t_ms: 20_000,
            name: "denoise".into(),
            end: false,
        },
        crate::record::trace::Mark {
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

#[test]
fn counters_are_counter_tracks_in_time_order() {
    let mut t = synth::seed_offload();
    let point = |t_ms, value| crate::record::trace::Counter {
        t_ms,
        name: "torch.mps.driver_allocated".into(),
        value,
        unit: "bytes".into(),
    };
    // Written out of order: exported in time order.
    t.counters = vec![point(2000, 3e9), point(1000, 1e9)];
    let v = export(&t);
    let track: Vec<(u64, f64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "counter torch.mps.driver_allocated")
        .map(|e| {
            (
                e["ts"].as_u64().unwrap(),
                e["args"]["bytes"].as_f64().unwrap(),
            )
        })
        .collect();
    let t0 = t.samples[0].sample.t_ms;
    assert_eq!(
        track,
        [((1000 - t0) * 1000, 1e9), ((2000 - t0) * 1000, 3e9)],
        "{v:#}"
    );
}

#[test]
fn pressure_is_a_level_track_and_psi_tracks_only_where_the_os_gave_them() {
    use crate::step::pressure::{Level, Pressure, PsiLine};
    let mut t = synth::seed_staged();
    t.samples.truncate(3);
    for s in &mut t.samples {
        s.sample.system.pressure = None;
    }
    let psi = |avg10| PsiLine {
        avg10,
        avg60: 0.0,
        total_us: 0,
    };
    t.samples[1].sample.system.pressure = Some(Pressure {
        some: Some(psi(12.345)),
        full: Some(psi(2.0)),
        kernel_level: None,
        level: Some(Level::Critical),
    });
    // macOS: a level and no PSI.
    t.samples[2].sample.system.pressure = Some(Pressure {
        level: Some(Level::Warning),
        ..Default::default()
    });
    let v = export(&t);
    let on = |name: &str| system_track(&v, name);
    let levels: Vec<Value> = on("memory pressure level")
        .iter()
        .map(|e| e["args"]["level"].clone())
        .collect();
    assert_eq!(
        levels,
        [Value::from(4), Value::from(2)],
        "critical 4, warning 2"
    );
    assert_eq!(on("PSI some avg10").len(), 1, "only the sample with PSI");
    assert_eq!(on("PSI some avg10")[0]["args"]["percent"], 12.35);
    assert_eq!(on("PSI full avg10")[0]["args"]["percent"], 2.0);
}
