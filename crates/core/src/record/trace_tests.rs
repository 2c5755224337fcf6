use super::fast::fast_sample;
use super::reader::is_unknown_type;
use super::*;
use crate::probe::{HostInfo, ProcessSample, Sample, SystemSample};

fn header() -> Header {
    Header::new(
        HostInfo {
            os: "linux".into(),
            phys_bytes: 8 << 30,
            page_size: 4096,
            hostname: "h".into(),
        },
        500,
        1_700_000_000_000,
    )
}

fn sample(t_ms: u64) -> Record {
    Record::Sample(TraceSample {
        sample: Sample {
            t_ms,
            system: SystemSample {
                phys_bytes: 8 << 30,
                free_pct: 50.0,
                swap_used_bytes: t_ms * 1000,
                ..Default::default()
            },
            processes: vec![ProcessSample {
                pid: 42,
                name: "python".into(),
                footprint_bytes: 1 << 30,
                ..Default::default()
            }],
            scope: None,
        },
        watched: vec![42],
        forecast: None,
    })
}

fn write_trace(records: &[Record]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in std::iter::once(&Record::Header(header())).chain(records) {
        serde_json::to_writer(&mut out, r).unwrap();
        out.push(b'\n');
    }
    out
}

fn read_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
    read_from(bytes, Path::new("t.jsonl"))
}

#[test]
fn round_trip() {
    let bytes = write_trace(&[sample(0), sample(500)]);
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.header().interval_ms, 500);
    assert_eq!(t.samples.len(), 2);
    assert_eq!(t.samples[1].sample.system.swap_used_bytes, 500_000);
    assert_eq!(t.samples[1].watched, vec![42]);
    assert!(t.problems.is_empty());
    assert!(!t.truncated_last_line);
    assert_eq!(t.duration_ms(), 500);
}

#[test]
fn truncated_last_line_is_not_an_error() {
    let mut bytes = write_trace(&[sample(0), sample(500)]);
    bytes.truncate(bytes.len() - 20);
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.samples.len(), 1);
    assert!(t.truncated_last_line);
    assert!(t.problems.is_empty());
}

#[test]
fn malformed_line_is_named_and_the_rest_recovered() {
    let mut bytes = write_trace(&[sample(0)]);
    bytes.extend_from_slice(b"{\"type\":\"sample\",\"t_ms\":\"oops\"}\n");
    bytes.extend_from_slice(b"garbage\n");
    bytes.extend_from_slice(&write_trace(&[sample(1000)])[..]);
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.samples.len(), 2);
    let lines: Vec<usize> = t.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![3, 4, 5], "{:?}", t.problems); // 5 = the second header
}

#[test]
fn unknown_record_types_are_skipped_quietly() {
    let mut bytes = write_trace(&[sample(0)]);
    bytes.extend_from_slice(b"{\"type\":\"gpu\",\"t_ms\":5}\n");
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.unknown_records, 1);
    assert!(t.problems.is_empty());
}

#[test]
fn not_a_trace() {
    assert!(matches!(read_bytes(b""), Err(TraceError::Empty { .. })));
    let e = read_bytes(b"hello\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("t.jsonl:1: not a swapsight trace header"),
        "{e}"
    );
    let bytes = write_trace(&[]);
    let body = String::from_utf8(bytes)
        .unwrap()
        .replace("\"schema\":1", "\"schema\":99");
    assert!(matches!(
        read_bytes(body.as_bytes()),
        Err(TraceError::TooNew {
            schema: 99,
            line: 1,
            ..
        })
    ));
    let first_sample = serde_json::to_vec(&sample(0)).unwrap();
    assert!(matches!(
        read_bytes(&first_sample),
        Err(TraceError::NotATrace { .. })
    ));
}

#[test]
fn a_blank_line_before_the_header_is_tolerated() {
    let mut bytes = b"\n  \n".to_vec();
    bytes.extend_from_slice(&write_trace(&[sample(0)]));
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.samples.len(), 1);
    assert!(t.problems.is_empty());
    // The header's line number is where it is, in errors too.
    let e = read_bytes(b"\n\nhello\n").unwrap_err();
    assert!(
        e.to_string().starts_with("t.jsonl:3: not a swapsight"),
        "{e}"
    );
}

/// The sample line with `field` set to the raw JSON `value`.
fn sample_with(field: &str, value: &str) -> Vec<u8> {
    let line = String::from_utf8(serde_json::to_vec(&sample(500)).unwrap()).unwrap();
    let key = format!("\"{field}\":");
    let at = line
        .find(&key)
        .unwrap_or_else(|| panic!("{field} in {line}"))
        + key.len();
    let end = at + line[at..].find([',', '}']).unwrap();
    let mut bytes = write_trace(&[sample(0)]);
    bytes.extend_from_slice(format!("{}{value}{}\n", &line[..at], &line[end..]).as_bytes());
    bytes
}

#[test]
fn figures_no_os_produces_are_refused_by_line() {
    for (field, value) in [
        ("footprint_bytes", "9223372036854775808"),
        ("footprint_bytes", "18446744073709551615"),
        ("swap_used_bytes", "9223372036854775808"),
        ("phys_bytes", "18446744073709551615"),
        ("t_ms", "4611686018427387904"),
        ("t_ms", "18446744073709551615"),
        ("pageins", "18446744073709551615"),
        ("free_pct", "1000"),
        ("free_pct", "-1"),
        ("footprint_bytes", "-1"),
        ("footprint_bytes", "1e400"),
        ("t_ms", "\"soon\""),
    ] {
        let t = read_bytes(&sample_with(field, value)).unwrap();
        assert_eq!(t.samples.len(), 1, "{field}={value}");
        assert_eq!(t.bad_lines, 1, "{field}={value}");
        assert_eq!(t.problems[0].line, 3, "{field}={value}");
        assert!(
            t.problems[0].detail.contains(field)
                || t.problems[0].detail.contains("invalid")
                || t.problems[0].detail.contains("out of range"),
            "{field}={value}: {}",
            t.problems[0]
        );
    }
    // The largest figure allowed still reads.
    let t = read_bytes(&sample_with("footprint_bytes", &MAX_BYTES.to_string())).unwrap();
    assert_eq!((t.samples.len(), t.bad_lines), (2, 0));
}

#[test]
fn a_header_with_figures_no_os_produces_is_refused() {
    let text = String::from_utf8(write_trace(&[])).unwrap();
    for (from, to) in [
        (
            "\"start_unix_ms\":1700000000000",
            "\"start_unix_ms\":18446744073709551615",
        ),
        (
            "\"phys_bytes\":8589934592",
            "\"phys_bytes\":9223372036854775808",
        ),
        ("\"window_ms\":10000", "\"window_ms\":18446744073709551615"),
    ] {
        assert!(text.contains(from), "{from} in {text}");
        let e = read_bytes(text.replace(from, to).as_bytes()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("t.jsonl:1: ") && msg.contains("out of range"),
            "{msg}"
        );
    }
}

#[test]
fn a_line_longer_than_the_cap_ends_the_read_without_reading_it_all() {
    // A reader that never ends (like /dev/zero): the read stops at the cap.
    let zeros = std::io::BufReader::new(std::io::repeat(0));
    let e = read_from(zeros, Path::new("z")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "z:1: line longer than 64 MiB, not a swapsight trace line"
    );
    let mut head = write_trace(&[sample(0)]);
    head.push(b'[');
    let endless = std::io::BufReader::new(std::io::Read::chain(&head[..], std::io::repeat(b' ')));
    let e = read_from(endless, Path::new("z")).unwrap_err();
    assert!(matches!(e, TraceError::LineTooLong { line: 3, .. }), "{e}");
}

#[test]
fn a_run_of_bad_lines_ends_the_read_and_only_a_few_are_kept() {
    let mut bytes = write_trace(&[sample(0)]);
    for _ in 0..MAX_BAD_RUN - 1 {
        bytes.extend_from_slice(b"{}\n");
    }
    let record_line = |r: &Record| [serde_json::to_vec(r).unwrap(), b"\n".to_vec()].concat();
    bytes.extend_from_slice(&record_line(&sample(500)));
    // One short of the limit, then a record: read, bad lines counted.
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.samples.len(), 2);
    assert_eq!(t.bad_lines, MAX_BAD_RUN - 1);
    assert_eq!(t.problems.len(), KEPT_PROBLEMS);
    assert_eq!(t.problems[0].line, 3);
    for _ in 0..MAX_BAD_RUN {
        bytes.extend_from_slice(b"{}\n");
    }
    bytes.extend_from_slice(&record_line(&sample(1000)));
    let e = read_bytes(&bytes).unwrap_err().to_string();
    let first = MAX_BAD_RUN + 3;
    assert!(
        e.starts_with(&format!(
            "t.jsonl:{first}-{}: {MAX_BAD_RUN} lines in a row hold no record, giving up (line {first}: missing field `type`",
            first + MAX_BAD_RUN - 1
        )),
        "{e}"
    );
}

#[test]
fn marks_are_read_checked_and_old_readers_skip_them() {
    let mark = |t_ms, name: &str, end| {
        Record::Mark(Mark {
            t_ms,
            name: name.into(),
            end,
        })
    };
    let mut bytes = write_trace(&[sample(0), mark(10, "load", false), mark(20, "", true)]);
    bytes.extend_from_slice(b"{\"type\":\"mark\",\"t_ms\":30,\"name\":\"a\\u0007b\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"mark\",\"t_ms\":30,\"name\":\"\"}\n");
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.marks.len(), 2);
    assert_eq!(t.marks[0].name, "load");
    assert!(t.marks[1].end);
    assert_eq!(t.bad_lines, 2, "{:?}", t.problems);
    assert!(t.problems[0].detail.contains("control characters"));
    // A reader that does not know marks counts them as unknown records.
    let line = serde_json::to_vec(&mark(10, "load", false)).unwrap();
    assert!(!is_unknown_type(&line));
    assert!(String::from_utf8(line)
        .unwrap()
        .starts_with("{\"type\":\"mark\",\"t_ms\":10,\"name\":\"load\"}"));
}

#[test]
fn writer_flushes_every_line() {
    let dir = std::env::temp_dir().join(format!("swapsight-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("w.jsonl");
    let mut w = TraceWriter::create(&path, &header()).unwrap();
    w.write(&sample(0)).unwrap();
    // Read while the writer is still open: everything written is on disk.
    let t = read(&path).unwrap();
    assert_eq!(t.samples.len(), 1);
    drop(w);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every string in `v`, keys left out.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Issue 20: the reader kept a crafted trace's escapes (an OSC 52 clipboard
/// write, a screen clear) and bidi overrides in the hostname, command,
/// process names, command lines, flags and events, and every reader of the
/// trace showed them raw.
#[test]
fn escapes_and_bidi_of_a_crafted_trace_are_cleaned_as_read() {
    let t = read_bytes(&crate::synth::to_jsonl(&crate::synth::hostile_text())).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    assert_eq!(t.header().host.hostname, "m5?[2J?orp");
    assert_eq!(
        t.header().command.as_deref().unwrap()[1..],
        ["?]52;c;ZXZpbA==?generate.py", "--mode?"]
    );
    let p = t.samples[0]
        .sample
        .processes
        .iter()
        .find(|p| p.pid == 4243)
        .unwrap();
    assert_eq!(&*p.name, "?]52;c;ZXZpbA==?python?yp.exe");
    assert_eq!(p.cmdline.as_deref(), Some("python ?[2Jgenerate.py?"));
    assert_eq!(t.events[0].kind, "command-start?[2J");
    let mut all = Vec::new();
    strings(&serde_json::to_value(t.header()).unwrap(), &mut all);
    strings(&serde_json::to_value(&t.samples).unwrap(), &mut all);
    strings(&serde_json::to_value(&t.flags).unwrap(), &mut all);
    strings(&serde_json::to_value(&t.events).unwrap(), &mut all);
    strings(&serde_json::to_value(&t.marks).unwrap(), &mut all);
    assert!(all.len() > 1000);
    for s in &all {
        assert!(!s.chars().any(crate::util::text::is_unsafe), "{s:?}");
    }
}

/// Issue 20: a bad line's reason may quote the value serde choked on (an
/// unknown state is quoted raw, escapes and all), and the CLI prints it.
#[test]
fn a_bad_lines_reason_quotes_no_escapes() {
    let mut bytes = write_trace(&[sample(0)]);
    bytes.extend_from_slice(
        br#"{"type":"flag","t_ms":0,"pid":1,"name":"x","state":"\u001b]52;c;eA==\u0007\u202e","previous":"fits","evidence":{},"message":""}"#,
    );
    bytes.push(b'\n');
    let t = read_bytes(&bytes).unwrap();
    let why = t.problems[0].to_string();
    assert!(why.contains("?]52;c;eA==??"), "{why}");
    assert!(!why.chars().any(crate::util::text::is_unsafe), "{why:?}");
}

/// A mark a writer could not have written (a bidi override in its name) is
/// malformed, like one with a control character.
#[test]
fn a_mark_with_a_bidi_override_is_refused() {
    let mark = Record::Mark(Mark {
        t_ms: 0,
        name: "load\u{202e}".into(),
        end: false,
    });
    let t = read_bytes(&write_trace(&[sample(0), mark])).unwrap();
    assert!(t.marks.is_empty());
    assert_eq!(t.bad_lines, 1);
    assert!(
        t.problems[0].detail.contains("bidi controls"),
        "{:?}",
        t.problems
    );
}
/// The reader's fast path for sample lines reads what the general one does,
/// line for line, and leaves every other line to it.
#[test]
fn sample_lines_read_the_same_by_the_fast_path() {
    let bytes = crate::synth::to_jsonl(&crate::synth::seed_to_cpu());
    let mut samples = 0;
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let general: Record = serde_json::from_slice(line).unwrap();
        match fast_sample(line) {
            Some(fast) => {
                assert_eq!(fast, general);
                samples += 1;
            }
            None => assert!(!matches!(general, Record::Sample(_))),
        }
    }
    assert!(samples > 10);
    // Not laid out as the writer does: the general reader takes it.
    let moved = br#"{"t_ms":5,"type":"sample","sys":{"phys_bytes":1,"free_pct":50.0,"swap_used_bytes":0,"swap_total_bytes":0,"compressed_bytes":0,"page_size":4096},"procs":[]}"#;
    assert!(fast_sample(moved).is_none());
    let t = read_bytes(&[&write_trace(&[])[..], moved, b"\n"].concat()).unwrap();
    assert_eq!(t.samples.len(), 1);
}

/// The streaming reader yields the records `read` keeps, in file order, and
/// the same notes; a second pass reads the lines the first one did, even
/// when the file has grown since (a recording still being written).
#[test]
fn the_reader_streams_and_a_second_pass_reads_the_same_lines() {
    let mut bytes = write_trace(&[sample(0), sample(500)]);
    bytes.extend_from_slice(b"not json\n");
    bytes.extend_from_slice(&write_trace(&[sample(1000)])[write_trace(&[]).len()..]);
    let whole = read_bytes(&bytes).unwrap();
    let mut reader = TraceReader::new(&bytes[..], Path::new("t.jsonl")).unwrap();
    assert_eq!(reader.header(), whole.header());
    let mut first = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        first.push(r);
    }
    assert_eq!(first.len(), 3);
    assert_eq!(reader.notes(), &whole.notes());
    assert_eq!(reader.notes().problems[0].line, 4);
    // The file grows between the passes: the new line is not read again.
    let dir = std::env::temp_dir().join(format!("swapsight-reader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let mut reader = TraceReader::open(&path).unwrap();
    while reader.next_record().unwrap().is_some() {}
    let lines = reader.lines();
    let grown: Vec<u8> = write_trace(&[sample(1500)])[write_trace(&[]).len()..].to_vec();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&grown)
        .unwrap();
    reader.rewind().unwrap();
    let mut again = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        again.push(r);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(again, first);
    assert_eq!(reader.lines(), lines);
    assert_eq!(
        reader.notes().bad_lines,
        1,
        "the notes are the first pass's"
    );
}

/// A last line cut off in the first pass (the recorder was writing it) is
/// not read in the second even when it is whole by then.
#[test]
fn a_second_pass_skips_the_line_cut_off_in_the_first() {
    let whole = write_trace(&[sample(0), sample(500)]);
    let cut = whole.len() - 10;
    let dir = std::env::temp_dir().join(format!("swapsight-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.jsonl");
    std::fs::write(&path, &whole[..cut]).unwrap();
    let mut reader = TraceReader::open(&path).unwrap();
    let mut first = 0;
    while reader.next_record().unwrap().is_some() {
        first += 1;
    }
    assert!(reader.notes().truncated_last_line);
    std::fs::write(&path, &whole).unwrap();
    reader.rewind().unwrap();
    let mut second = 0;
    while reader.next_record().unwrap().is_some() {
        second += 1;
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!((first, second), (1, 1));
}

#[test]
fn counters_are_read_checked_and_cleaned() {
    let counter = |t_ms, name: &str, value, unit: &str| {
        Record::Counter(Counter {
            t_ms,
            name: name.into(),
            value,
            unit: unit.into(),
        })
    };
    let mut bytes = write_trace(&[
        sample(0),
        counter(
            10,
            "mps.driver_allocated",
            3.0 * (1u64 << 30) as f64,
            "bytes",
        ),
        counter(20, "queue", 2.5, "items"),
    ]);
    // No unit: bytes.
    bytes.extend_from_slice(b"{\"type\":\"counter\",\"t_ms\":30,\"name\":\"q\",\"value\":7}\n");
    for bad in [
        r#"{"type":"counter","t_ms":40,"name":"a\u0007b","value":1,"unit":"bytes"}"#,
        r#"{"type":"counter","t_ms":40,"name":"","value":1,"unit":"bytes"}"#,
        r#"{"type":"counter","t_ms":40,"name":"x","value":1e300,"unit":"bytes"}"#,
        r#"{"type":"counter","t_ms":40,"name":"x","value":1,"unit":"by tes"}"#,
        r#"{"type":"counter","t_ms":40,"name":"x","value":"1","unit":"bytes"}"#,
    ] {
        bytes.extend_from_slice(bad.as_bytes());
        bytes.push(b'\n');
    }
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.counters.len(), 3, "{:?}", t.counters);
    assert_eq!(t.counters[2].unit, "bytes");
    assert_eq!(t.counters[1].value, 2.5);
    assert_eq!(t.bad_lines, 5, "{:?}", t.problems);
    assert!(
        t.problems[0].detail.contains("counter name"),
        "{:?}",
        t.problems
    );
    assert!(
        t.problems[2].detail.contains("out of range"),
        "{:?}",
        t.problems
    );
    assert!(
        t.problems[3].detail.contains("counter unit"),
        "{:?}",
        t.problems
    );
    assert_eq!(t.unknown_records, 0);
    let line = serde_json::to_vec(&counter(10, "q", 1.0, "items")).unwrap();
    assert!(!is_unknown_type(&line));
    assert_eq!(
        String::from_utf8(line).unwrap(),
        r#"{"type":"counter","t_ms":10,"name":"q","value":1.0,"unit":"items"}"#
    );
}

fn scoped_sample(t_ms: u64) -> Record {
    let Record::Sample(mut ts) = sample(t_ms) else {
        unreachable!()
    };
    ts.sample.scope = Some(crate::probe::Scope {
        path: "/swapsight-test-42".into(),
        version: 1,
        limit_bytes: 256 << 20,
        usage_bytes: 250 << 20,
        swap_bytes: Some(t_ms << 20),
        events: crate::probe::ScopeEvents {
            max: Some(3),
            oom_kill: Some(0),
            ..Default::default()
        },
        ..Default::default()
    });
    Record::Sample(ts)
}

#[test]
fn the_scope_is_written_read_and_checked() {
    let bytes = write_trace(&[sample(0), scoped_sample(500)]);
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.contains(
            r#""scope":{"path":"/swapsight-test-42","version":1,"limit_bytes":268435456"#
        ),
        "{text}"
    );
    let t = read_bytes(&bytes).unwrap();
    assert_eq!(t.samples[0].sample.scope, None, "no scope: the host");
    let scope = t.samples[1].sample.scope.as_ref().unwrap();
    assert_eq!(scope.swap_bytes, Some(500 << 20));
    assert_eq!(scope.events.max, Some(3));
    // Out of range, or a version no kernel has: a malformed line.
    for (from, to) in [
        (
            r#""limit_bytes":268435456"#,
            r#""limit_bytes":18446744073709551615"#,
        ),
        (r#""version":1"#, r#""version":7"#),
        (r#""oom_kill":0"#, r#""oom_kill":9007199254740993"#),
    ] {
        let bad = text.replace(from, to);
        let t = read_bytes(bad.as_bytes()).unwrap();
        assert_eq!((t.samples.len(), t.bad_lines), (1, 1), "{to}");
    }
    // Text from outside is cleaned.
    let odd = text.replace("/swapsight-test-42", "/job\\u001b[2J");
    let t = read_bytes(odd.as_bytes()).unwrap();
    assert_eq!(t.samples[1].sample.scope.as_ref().unwrap().path, "/job?[2J");
}

/// Regression: hostile pressure and forecast fields (avg10 1e308 or
/// −1e308, total_us 2^64−1, a forecast of −5 s, a header warning line of
/// 1e308) were kept, and report printed a 309-digit percentage, a negative
/// stall, `inf` in CSV and "reached at 0.0s". They are refused by line
/// (a sample) or for the whole trace (the header), naming the field.
#[test]
fn hostile_pressure_and_forecast_figures_are_refused() {
    use crate::step::forecast::Forecast;
    use crate::step::pressure::{Pressure, PsiLine};
    let Record::Sample(mut s) = sample(500) else {
        unreachable!()
    };
    s.sample.system.pressure = Some(Pressure {
        some: Some(PsiLine {
            avg10: 12.5,
            avg60: 3.25,
            total_us: 777,
        }),
        ..Pressure::default()
    });
    s.forecast = Some(Forecast {
        swap_full_s: Some(42.5),
        ..Forecast::default()
    });
    let line = serde_json::to_string(&Record::Sample(s)).unwrap();
    let mut good = write_trace(&[sample(0)]);
    good.extend_from_slice(format!("{line}\n").as_bytes());
    assert_eq!(read_bytes(&good).unwrap().samples.len(), 2, "{line}");
    for (from, to, field) in [
        (
            "\"avg10\":12.5",
            "\"avg10\":1e308",
            "sys.pressure.some.avg10",
        ),
        (
            "\"avg10\":12.5",
            "\"avg10\":-1e308",
            "sys.pressure.some.avg10",
        ),
        ("\"avg60\":3.25", "\"avg60\":101", "sys.pressure.some.avg60"),
        (
            "\"total_us\":777",
            "\"total_us\":18446744073709551615",
            "sys.pressure.some.total_us",
        ),
        (
            "\"swap_full_s\":42.5",
            "\"swap_full_s\":-5",
            "forecast.swap_full_s",
        ),
        (
            "\"swap_full_s\":42.5",
            "\"swap_full_s\":1e300",
            "forecast.swap_full_s",
        ),
    ] {
        assert!(line.contains(from), "{from} in {line}");
        let mut bytes = write_trace(&[sample(0)]);
        bytes.extend_from_slice(format!("{}\n", line.replace(from, to)).as_bytes());
        let t = read_bytes(&bytes).unwrap();
        assert_eq!((t.samples.len(), t.bad_lines), (1, 1), "{to}");
        assert!(
            t.problems[0].detail.contains(field),
            "{to}: {}",
            t.problems[0]
        );
    }
    let text = String::from_utf8(write_trace(&[])).unwrap();
    for (from, to, says) in [
        (
            "\"warn_some_avg10\":10.0",
            "\"warn_some_avg10\":1e308",
            "pressure.warn_some_avg10",
        ),
        (
            "\"warn_some_avg10\":10.0",
            "\"warn_some_avg10\":50.0",
            "--pressure-warn 50 must be below --pressure-critical 40",
        ),
        (
            "\"free_floor_pct\":5.0",
            "\"free_floor_pct\":-1e308",
            "forecast.free_floor_pct",
        ),
    ] {
        assert!(text.contains(from), "{from} in {text}");
        let e = read_bytes(text.replace(from, to).as_bytes()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("t.jsonl:1: ") && msg.contains(says),
            "{msg}"
        );
    }
}

/// The figures added for the GPU and swap written are bounded like the
/// rest: a corrupt line with one past 8 PiB is refused by name.
#[test]
fn gpu_and_swap_written_figures_past_the_bound_are_refused_by_name() {
    let over = MAX_BYTES + 1;
    let with = |edit: &dyn Fn(&mut TraceSample)| {
        let Record::Sample(mut ts) = sample(500) else {
            unreachable!()
        };
        edit(&mut ts);
        check::check(&Record::Sample(ts))
    };
    let gpu =
        |g: crate::probe::GpuMemory| move |ts: &mut TraceSample| ts.sample.system.gpu = Some(g);
    type Edit<'a> = Box<dyn Fn(&mut TraceSample) + 'a>;
    let cases: [(&str, Edit); 5] = [
        (
            "sys.swap_out_bytes",
            Box::new(|ts: &mut TraceSample| ts.sample.system.swap_out_bytes = Some(over)),
        ),
        (
            "sys.gpu.in_use_bytes",
            Box::new(gpu(crate::probe::GpuMemory {
                in_use_bytes: Some(over),
                ..Default::default()
            })),
        ),
        (
            "sys.gpu.wired_limit_mb",
            Box::new(gpu(crate::probe::GpuMemory {
                wired_limit_mb: Some(u64::MAX),
                ..Default::default()
            })),
        ),
        (
            "scope.swap_out_bytes",
            Box::new(move |ts: &mut TraceSample| {
                ts.sample.scope = Some(crate::probe::Scope {
                    version: 2,
                    swap_out_bytes: Some(over),
                    ..Default::default()
                })
            }),
        ),
        (
            "sys.gpu.recommended_working_set_bytes",
            Box::new(gpu(crate::probe::GpuMemory {
                recommended_working_set_bytes: Some(over),
                ..Default::default()
            })),
        ),
    ];
    for (name, edit) in cases {
        let err = with(&*edit).expect_err(name);
        assert!(err.contains(name), "{name}: {err}");
    }
    // At the bound they read.
    assert!(
        with(&|ts: &mut TraceSample| ts.sample.system.swap_out_bytes = Some(MAX_BYTES)).is_ok()
    );
}

/// A figure of memory in RAM past the machine's memory is refused: a GPU
/// holding 8 PiB of a 16 GiB host's memory read as "8388608.0 GiB" before.
#[test]
fn figures_in_ram_past_the_machines_memory_are_refused_by_name() {
    let phys = 8u64 << 30;
    let with = |edit: &dyn Fn(&mut SystemSample)| {
        let Record::Sample(mut ts) = sample(500) else {
            unreachable!()
        };
        edit(&mut ts.sample.system);
        check::check(&Record::Sample(ts))
    };
    let gpu = |in_use, driver| crate::probe::GpuMemory {
        in_use_bytes: in_use,
        driver_in_use_bytes: driver,
        ..Default::default()
    };
    type Edit = Box<dyn Fn(&mut SystemSample)>;
    let cases: [(&str, Edit); 5] = [
        (
            "sys.gpu.in_use_bytes",
            Box::new(move |s| s.gpu = Some(gpu(Some(MAX_BYTES), None))),
        ),
        (
            "sys.gpu.driver_in_use_bytes",
            Box::new(move |s| s.gpu = Some(gpu(None, Some(phys + 1)))),
        ),
        (
            "sys.wired_bytes",
            Box::new(move |s| s.wired_bytes = Some(phys + 1)),
        ),
        (
            "sys.memory_used_bytes",
            Box::new(move |s| s.memory_used_bytes = Some(phys * 2)),
        ),
        (
            "sys.compressed_bytes",
            Box::new(move |s| s.compressed_bytes = phys + 4096),
        ),
    ];
    for (name, edit) in cases {
        let err = with(&*edit).expect_err(name);
        assert!(
            err.contains(name) && err.contains("sys.phys_bytes"),
            "{name}: {err}"
        );
    }
    // All of the machine's memory, swap past it and a GPU's allocations
    // past it (virtual) read; so does a sample that does not know its memory.
    assert!(with(&|s| s.gpu = Some(gpu(Some(phys), Some(phys)))).is_ok());
    assert!(with(&|s| s.swap_used_bytes = 4 * phys).is_ok());
    assert!(with(&|s| s.gpu = Some(crate::probe::GpuMemory {
        alloc_bytes: Some(4 * phys),
        ..Default::default()
    }))
    .is_ok());
    assert!(with(&|s| {
        s.phys_bytes = 0;
        s.wired_bytes = Some(phys);
    })
    .is_ok());
}

/// A swap-out counter in a sawtooth (up by 8 PiB, back to 0, up again)
/// added up to "167772160.0 GiB" written: a rise faster than any machine
/// writes swap is refused, the line skipped and said, and what was written
/// at a real machine's pace still counts.
#[test]
fn a_counter_rising_faster_than_any_machine_writes_is_refused() {
    let at = |t_ms: u64, written: u64| {
        let Record::Sample(mut ts) = sample(t_ms) else {
            unreachable!()
        };
        ts.sample.system.swap_out_bytes = Some(written);
        Record::Sample(ts)
    };
    const GIB: u64 = 1 << 30;
    let mut records = vec![at(0, 0)];
    for i in 1..=20u64 {
        let t = i * 500;
        records.push(at(t, if i % 2 == 1 { MAX_BYTES } else { 0 }));
    }
    // Then 1 GiB written over half a second, a real pace.
    records.push(at(10_500, GIB));
    let t = read_bytes(&write_trace(&records)).unwrap();
    assert_eq!(t.bad_lines, 10, "{:?}", t.problems);
    assert!(
        t.problems[0].detail.contains("sys.swap_out_bytes rose by")
            && t.problems[0]
                .detail
                .contains("faster than any machine writes swap"),
        "{}",
        t.problems[0]
    );
    let mut fold = crate::step::written::WrittenFold::default();
    for ts in &t.samples {
        fold.push(ts.sample.t_ms, &ts.sample.system, ts.sample.scope.as_ref());
    }
    assert_eq!(fold.finish().unwrap().bytes, GIB);
    // A long gap allows a large rise: 2 TiB over 10 s is under 1 TiB/s.
    let t = read_bytes(&write_trace(&[at(0, 0), at(10_000, 2 << 40)])).unwrap();
    assert_eq!((t.samples.len(), t.bad_lines), (2, 0));
    // Another counter (a scope's) starts again, whatever its value.
    let mut scoped = at(10_500, 2 << 40);
    if let Record::Sample(ts) = &mut scoped {
        ts.sample.scope = Some(crate::probe::Scope {
            path: "/job".into(),
            version: 2,
            swap_out_bytes: Some(MAX_BYTES),
            ..Default::default()
        });
    }
    let t = read_bytes(&write_trace(&[at(0, 0), scoped])).unwrap();
    assert_eq!((t.samples.len(), t.bad_lines), (2, 0), "{:?}", t.problems);
}

/// A figure far out of range is said in a short form, not in the 309
/// digits Rust writes 1e308 with.
#[test]
fn an_out_of_range_figure_is_said_cut() {
    let mut bytes = write_trace(&[sample(0)]);
    let line = String::from_utf8(write_trace(&[sample(500)])).unwrap();
    let line = line
        .lines()
        .nth(1)
        .unwrap()
        .replace("\"free_pct\":50.0", "\"free_pct\":1e180");
    bytes.extend_from_slice(format!("{line}\n").as_bytes());
    let t = read_bytes(&bytes).unwrap();
    let detail = t.problems[0].to_string();
    assert!(detail.contains("sys.free_pct 1.000000e180"), "{detail}");
    assert!(detail.len() < 200, "{} chars: {detail}", detail.len());
}
