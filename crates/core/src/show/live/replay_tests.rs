use std::path::{Path, PathBuf};

use super::*;
use crate::judge::report::ProcessReport;
use crate::record::trace::Mark;
use crate::synth;

/// The busy trace's watched process (python).
const WATCHED: u32 = 1000;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swapsight-replay-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `trace` written as a recording writes it, its counters after the rest.
fn write(dir: &Path, trace: &Trace) -> PathBuf {
    let mut text = synth::to_jsonl(trace);
    for c in &trace.counters {
        serde_json::to_writer(&mut text, &Record::Counter(c.clone())).unwrap();
        text.push(b'\n');
    }
    let path = dir.join("run.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn peak_footprint(r: &Replay, pid: u32) -> u64 {
    r.points
        .iter()
        .flat_map(|p| &p.footprints)
        .filter(|&&(p, _)| p == pid)
        .map(|&(_, b)| b)
        .max()
        .unwrap()
}

/// Regression (issue 33 item 6): a replay held every sample of the trace
/// and answered a point for each (92,490 points, 11 MiB of JSON, 207 MiB of
/// RSS for a 120 MiB recording). Streamed now, and thinned to a chart's
/// worth, one sample's spike still shows: the highest footprint, the most
/// swap and the least free memory of the run are on the chart.
#[test]
fn a_long_replay_is_thinned_to_a_chart_and_keeps_its_peaks() {
    let samples = 6 * REPLAY_POINTS + 7;
    let mut t = synth::busy_trace(samples, 5);
    assert_eq!(t.samples.len(), samples);
    let spike = &mut t.samples[samples / 3 + 1].sample;
    spike.system.swap_used_bytes = 11 << 30;
    spike.system.free_pct = 0.5;
    let python = spike
        .processes
        .iter_mut()
        .find(|p| p.pid == WATCHED)
        .unwrap();
    python.footprint_bytes = 47 << 30;
    let dir = tmp("long");
    let path = write(&dir, &t);

    let r = replay(&path).unwrap();
    assert!(r.points.len() <= REPLAY_POINTS, "{} points", r.points.len());
    assert!(
        r.points.len() >= REPLAY_POINTS / 2,
        "{} points",
        r.points.len()
    );
    assert_eq!(r.thinned_from, Some(samples));
    assert_eq!(r.report.samples, samples);
    assert_eq!(peak_footprint(&r, WATCHED), 47 << 30);
    let most_swap = r.points.iter().map(|p| p.swap_used_bytes).max();
    assert_eq!(most_swap, Some(11 << 30));
    let least_free = r.points.iter().map(|p| p.free_pct).fold(f64::MAX, f64::min);
    assert_eq!(least_free, 0.5);
    let base = t.samples[0].sample.system.swap_used_bytes as i64;
    let most_growth = r.points.iter().map(|p| p.swap_growth_bytes).max();
    assert_eq!(most_growth, Some((11i64 << 30) - base));
    // The whole run, in time order, each point at one of its samples' times.
    let times: Vec<u64> = r.points.iter().map(|p| p.t_ms).collect();
    assert_eq!(times.first(), Some(&t.samples[0].sample.t_ms));
    assert_eq!(times.last(), Some(&t.samples[samples - 1].sample.t_ms));
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    // The lowest footprint of the run's steps survives too.
    let lowest = t
        .samples
        .iter()
        .flat_map(|s| &s.sample.processes)
        .filter(|p| p.pid == WATCHED)
        .map(|p| p.footprint_bytes)
        .min();
    let drawn_lowest = r
        .points
        .iter()
        .flat_map(|p| &p.footprints)
        .filter(|&&(p, _)| p == WATCHED)
        .map(|&(_, b)| b)
        .min();
    assert_eq!(drawn_lowest, lowest);
    // Read whole, the same file gives the same replay.
    let read = crate::record::trace::read(&path).unwrap();
    assert_eq!(replay_trace(&path, &read).points, r.points);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_replay_of_up_to_the_cap_has_a_point_for_each_sample() {
    let t = synth::busy_trace(REPLAY_POINTS, 3);
    let r = replay_trace(Path::new("short.jsonl"), &t);
    assert_eq!(r.thinned_from, None);
    assert_eq!(r.points.len(), REPLAY_POINTS);
    let base = t.samples[0].sample.system.swap_used_bytes as i64;
    for (p, s) in r.points.iter().zip(&t.samples) {
        assert_eq!(p.t_ms, s.sample.t_ms);
        assert_eq!(p.swap_used_bytes, s.sample.system.swap_used_bytes);
        assert_eq!(p.swap_growth_bytes, p.swap_used_bytes as i64 - base);
        assert_eq!(p.free_pct, s.sample.system.free_pct);
    }
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("thinned_from").is_none(), "absent, not null");
}

/// Two points a stretch: each line's extremes in the order they came, so a
/// line that falls across a stretch falls on the chart too.
#[test]
fn a_stretch_gives_its_extremes_in_the_order_they_came() {
    let mut t = synth::busy_trace(4 * REPLAY_POINTS, 2);
    let n = t.samples.len() as u64;
    for (i, s) in t.samples.iter_mut().enumerate() {
        s.sample.system.swap_used_bytes = (n - i as u64) << 20;
        s.sample.system.free_pct = i as f64 / n as f64 * 100.0;
    }
    let r = replay_trace(Path::new("falling.jsonl"), &t);
    assert_eq!(r.points.len(), REPLAY_POINTS);
    for pair in r.points.chunks(2) {
        assert!(
            pair[0].swap_used_bytes > pair[1].swap_used_bytes,
            "{pair:?}"
        );
        assert!(pair[0].free_pct < pair[1].free_pct, "{pair:?}");
    }
    assert_eq!(r.points[0].swap_used_bytes, n << 20);
    assert_eq!(r.points[REPLAY_POINTS - 1].swap_used_bytes, 1 << 20);
}

/// The streamed replay is the one of the trace read whole: the marks (here
/// written after the samples, out of time order, so the report reads the
/// file twice), the counters, and a last line cut off by a killed recorder.
#[test]
fn a_streamed_replay_is_the_replay_of_the_trace_read_whole() {
    let mut t = synth::seed_offload();
    let last_ms = t.samples.last().unwrap().sample.t_ms;
    t.marks = vec![
        Mark {
            t_ms: last_ms / 2,
            name: "decode".into(),
            end: false,
        },
        Mark {
            t_ms: 0,
            name: "encode".into(),
            end: false,
        },
    ];
    t.counters = (0..5000)
        .map(|i| synth::counter(i * last_ms / 5000, "torch.allocated", i as f64, "bytes"))
        .chain([synth::counter(0, "tokens", 3.0, "items")])
        .collect();
    let dir = tmp("whole");
    let path = write(&dir, &t);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, br#"{"type":"sample","t_ms":99999"#).unwrap();
    drop(file);
    let read = crate::record::trace::read(&path).unwrap();
    assert!(read.truncated_last_line);

    let streamed = serde_json::to_value(replay(&path).unwrap()).unwrap();
    let whole = serde_json::to_value(replay_trace(&path, &read)).unwrap();
    assert_eq!(streamed, whole);
    assert_eq!(streamed["phases"].as_array().unwrap().len(), 2);
    let counters = streamed["counters"].as_array().unwrap();
    assert_eq!(counters.len(), 1, "only byte counters are drawn");
    assert!(counters[0]["points"].as_array().unwrap().len() <= COUNTER_POINTS);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The table and the names are bounded too, whatever the report lists.
#[test]
fn a_replay_shows_at_most_its_rows_and_the_names_it_draws() {
    let t = synth::seed_offload();
    let mut report = crate::judge::report::report(&t, None);
    let one = report.processes[0].clone();
    report.processes = (0..3 * REPLAY_ROWS as u32)
        .map(|i| ProcessReport {
            pid: 100_000 + i,
            ..one.clone()
        })
        .collect();
    let followed = followed(&report);
    let r = assemble(
        Path::new("many.jsonl"),
        report,
        Points::new(0, followed),
        Vec::new(),
        Vec::new(),
        &t.header().host,
    );
    assert_eq!(r.processes.len(), REPLAY_ROWS);
    assert_eq!(r.names.len(), FOLLOWED);
    assert_eq!(r.report.processes.len(), 3 * REPLAY_ROWS);
}
