use super::*;
use std::path::PathBuf;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swapsight-session-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn plan() -> Plan<'static> {
    Plan {
        interval: Duration::from_millis(500),
        top_n: 10,
        watch: None,
        command: &[],
        verb: "record",
        detector: crate::step::detect::DetectorConfig::default(),
        pressure: Default::default(),
        pressure_absent: None,
        forecast: Default::default(),
    }
}

fn host() -> HostInfo {
    HostInfo {
        os: "scripted".into(),
        phys_bytes: 16 << 30,
        page_size: 4096,
        hostname: "scripted".into(),
    }
}

fn session(path: &Path) -> RecordingSession {
    let marks = MarkInbox::create(path).ok();
    assert!(marks.is_some(), "a private runtime dir for the marks");
    RecordingSession::create(path, &header(host(), &plan()), marks).unwrap()
}

fn kinds(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let kind = v["kind"].as_str().or(v["name"].as_str()).unwrap_or("");
            format!("{}:{kind}", v["type"].as_str().unwrap())
        })
        .collect()
}

#[test]
fn the_header_says_who_wrote_it_and_what_it_watches() {
    let command = ["python3".to_string(), "gen.py".to_string()];
    let h = header(
        host(),
        &Plan {
            watch: Some(42),
            command: &command,
            verb: "guard",
            interval: Duration::from_millis(250),
            ..plan()
        },
    );
    assert_eq!(h.watch_pid, Some(42));
    assert_eq!(h.command.as_deref(), Some(&command[..]));
    assert_eq!(h.interval_ms, 250);
    assert_eq!(h.top_n, 10);
    assert!(h.writer.ends_with(" guard"), "{}", h.writer);
    assert_eq!(header(host(), &plan()).command, None);
}

/// The app's session used to stop without the reader's last look: a mark
/// written just before the end was lost (issue 24, item 2).
#[test]
fn the_marks_written_just_before_the_end_are_in_the_trace() {
    let dir = tmp("last");
    let path = dir.join("t.jsonl");
    let mut s = session(&path);
    let ticks = crate::synth::scripted_ticks(2, 500);
    s.turn(Some(&ticks[0]), Instant::now());
    crate::record::marks::write_mark(s.mark_path().unwrap(), "decode").unwrap();
    let last = s.finish_marks(Instant::now());
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(s.mark_path(), None, "swapsight mark no longer finds it");
    s.event("recording-stop", "stopped by the user", None, None);
    assert_eq!(
        kinds(&path),
        ["header:", "sample:", "mark:decode", "event:recording-stop"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The app's session did not say when marks were dropped; the CLI's did.
#[test]
fn a_burst_of_marks_is_cut_to_the_rate_and_the_rest_told() {
    let dir = tmp("burst");
    let path = dir.join("t.jsonl");
    let mut s = session(&path);
    let burst: Vec<String> = (0..80).map(|i| format!("m{i}")).collect();
    crate::record::marks::write_mark(s.mark_path().unwrap(), &burst.join("\n")).unwrap();
    s.finish_marks(Instant::now());
    let k = kinds(&path);
    let marks = k.iter().filter(|k| k.starts_with("mark:")).count();
    assert!((1..=50).contains(&marks), "{k:?}");
    let told: Vec<&String> = k.iter().filter(|k| *k == "event:marks-dropped").collect();
    assert_eq!(told.len(), 1, "{k:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(&format!("\"{} marks dropped in all", 80 - marks)),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn after_the_first_failed_write_nothing_more_is_written() {
    let dir = tmp("latch");
    let path = dir.join("t.jsonl");
    let mut s = RecordingSession::create(&path, &header(host(), &plan()), None).unwrap();
    let ticks = crate::synth::scripted_ticks(3, 500);
    s.turn(Some(&ticks[0]), Instant::now());
    assert_eq!(s.failed(), None);
    // Keep the file's data reachable, then take its last name away: the
    // next write lands in the file but fails (as on a full disk).
    let kept = std::fs::File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    s.turn(Some(&ticks[1]), Instant::now());
    let why = s.failed().expect("the write failed").to_string();
    assert!(why.starts_with("cannot write the trace "), "{why}");
    s.turn(Some(&ticks[2]), Instant::now());
    s.event("recording-stop", "stopped", None, None);
    assert_eq!(s.failed(), Some(why.as_str()), "the first failure is kept");
    let text = std::io::read_to_string(kept).unwrap();
    let samples = text
        .lines()
        .filter(|l| l.contains("\"type\":\"sample\""))
        .count();
    assert_eq!(samples, 2, "nothing after the failed line: {text}");
    assert!(!text.contains("recording-stop"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn counters_come_through_the_mark_path_with_their_own_allowance() {
    let dir = tmp("counters");
    let path = dir.join("t.jsonl");
    let mut s = session(&path);
    let ticks = crate::synth::scripted_ticks(1, 500);
    s.turn(Some(&ticks[0]), Instant::now());
    let mark_path = s.mark_path().unwrap().to_path_buf();
    crate::record::marks::write_mark(&mark_path, "fill").unwrap();
    let burst: Vec<String> = (0..70)
        .map(|i| crate::record::marks::counter_line("pool", f64::from(i), "bytes").unwrap())
        .collect();
    crate::record::marks::write_mark(&mark_path, &burst.join("\n")).unwrap();
    s.finish_marks(Instant::now());
    let k = kinds(&path);
    let counters = k.iter().filter(|k| *k == "counter:pool").count();
    assert!((1..=50).contains(&counters), "{k:?}");
    assert!(
        k.contains(&"mark:fill".to_string()),
        "the phase is not crowded out: {k:?}"
    );
    assert!(k.contains(&"event:counters-dropped".to_string()), "{k:?}");
    assert!(!k.contains(&"event:marks-dropped".to_string()), "{k:?}");
    let t = crate::record::trace::read(&path).unwrap();
    assert_eq!(t.counters[0].value, 0.0);
    assert_eq!(t.counters[0].unit, "bytes");
    let r = crate::judge::report::report(&t, None);
    assert_eq!(r.counters[0].name, "pool");
    assert_eq!(r.counters[0].points, counters);
    std::fs::remove_dir_all(&dir).unwrap();
}
