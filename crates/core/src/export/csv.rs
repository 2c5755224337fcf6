//! CSV: one row per sample and process, the system figures repeated on every
//! row so that any row stands alone (a pivot table, `pandas.read_csv`, a
//! `grep` for one pid). Units are in the column names. A sample without
//! processes still gets one row, with the process columns empty.

use std::collections::HashMap;
use std::io::Write;

use super::{ExportError, StateTimeline};
use crate::trace::Trace;
use crate::units::signed_diff;

/// The header row, in order. Documented in `docs/exports.md`.
pub const COLUMNS: [&str; 18] = [
    "time_s",
    "unix_time_ms",
    "phys_bytes",
    "free_pct",
    "swap_used_bytes",
    "swap_growth_bytes",
    "swap_total_bytes",
    "compressed_bytes",
    "pid",
    "ppid",
    "name",
    "watched",
    "state",
    "footprint_bytes",
    "pageins_total",
    "pageins_per_s",
    "swap_bytes",
    "phase",
];

/// Writes `trace` as CSV.
pub fn write(trace: &Trace, out: &mut dyn Write) -> Result<(), ExportError> {
    let io = ExportError::io("csv");
    let mut w = ::csv::WriterBuilder::new()
        .buffer_capacity(256 * 1024)
        .from_writer(out);
    let fail = |e: ::csv::Error| match e.into_kind() {
        ::csv::ErrorKind::Io(e) => ExportError::io("csv")(e),
        other => ExportError::io("csv")(std::io::Error::other(format!("{other:?}"))),
    };
    w.write_record(COLUMNS).map_err(fail)?;
    let start_unix_ms = trace.header.as_ref().map_or(0, |h| h.start_unix_ms);
    let first_swap = trace
        .samples
        .first()
        .map_or(0, |s| s.sample.system.swap_used_bytes);
    let states = StateTimeline::new(trace);
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let phases = crate::phases::spans(&trace.marks, last_ms);
    // Last (t_ms, pageins) per pid, for the rate.
    let mut prev: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut row: Vec<String> = Vec::with_capacity(COLUMNS.len());
    for ts in &trace.samples {
        let s = &ts.sample;
        let sys = &s.system;
        let system = [
            decimal(s.t_ms as f64 / 1000.0, 3),
            start_unix_ms.saturating_add(s.t_ms).to_string(),
            sys.phys_bytes.to_string(),
            decimal(sys.free_pct, 2),
            sys.swap_used_bytes.to_string(),
            signed_diff(sys.swap_used_bytes, first_swap).to_string(),
            sys.swap_total_bytes.to_string(),
            sys.compressed_bytes.to_string(),
        ];
        let phase = crate::phases::phase_at(&phases, s.t_ms).map_or("", |p| p.name.as_str());
        if s.processes.is_empty() {
            row.clear();
            row.extend(system.iter().cloned());
            row.resize(COLUMNS.len() - 1, String::new());
            row.push(phase.to_string());
            w.write_record(&row).map_err(fail)?;
            continue;
        }
        for p in &s.processes {
            let rate = match prev.insert(p.pid, (s.t_ms, p.pageins)) {
                Some((t0, n0)) if s.t_ms > t0 => decimal(
                    p.pageins.saturating_sub(n0) as f64 / ((s.t_ms - t0) as f64 / 1000.0),
                    2,
                ),
                _ => String::new(),
            };
            row.clear();
            row.extend(system.iter().cloned());
            row.push(p.pid.to_string());
            row.push(p.ppid.to_string());
            row.push(p.name.clone());
            row.push(u8::from(ts.watched.contains(&p.pid)).to_string());
            row.push(states.state_at(p.pid, s.t_ms).as_str().to_string());
            row.push(p.footprint_bytes.to_string());
            row.push(p.pageins.to_string());
            row.push(rate);
            row.push(p.swap_bytes.map(|b| b.to_string()).unwrap_or_default());
            row.push(phase.to_string());
            w.write_record(&row).map_err(fail)?;
        }
    }
    w.flush().map_err(io)
}

/// `x` rounded to `places` decimals, without trailing zeros: `12.5`, `38.54`.
fn decimal(x: f64, places: i32) -> String {
    let scale = 10f64.powi(places);
    let r = (x * scale).round() / scale;
    if r == r.trunc() && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{ProcessSample, Sample, SystemSample};
    use crate::synth;
    use crate::trace::TraceSample;

    fn csv_of(trace: &Trace) -> String {
        let mut out = Vec::new();
        write(trace, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn export_csv_golden_shape() {
        let t = synth::seed_offload();
        let text = csv_of(&t);
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, COLUMNS);
        let rows: Vec<::csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
        let expected: usize = t.samples.iter().map(|s| s.sample.processes.len()).sum();
        assert_eq!(rows.len(), expected);
        // First row: time 0, system columns filled, a process.
        let first = &rows[0];
        assert_eq!(&first[0], "0");
        assert_eq!(&first[1], "1780000000000");
        assert_eq!(&first[2], (48u64 << 30).to_string());
        assert_eq!(&first[5], "0", "swap growth starts at 0");
        assert!(!first[8].is_empty());
        assert_eq!(&first[15], "", "no page-in rate before a second sample");
        // The watched python, flagged false fit at some point.
        let python: Vec<_> = rows.iter().filter(|r| &r[8] == "4243").collect();
        assert!(python.iter().all(|r| &r[10] == "python" && &r[11] == "1"));
        assert!(python.iter().any(|r| &r[12] == "false-fit"));
        assert!(python.iter().any(|r| &r[12] == "fits"));
        // Every numeric column parses.
        for r in &rows {
            for i in [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14] {
                r[i].parse::<f64>()
                    .unwrap_or_else(|_| panic!("col {i}: {:?}", &r[i]));
            }
        }
        let last = rows.last().unwrap();
        assert_eq!(&last[0], "104");
    }

    #[test]
    fn export_csv_quotes_awkward_names_and_keeps_empty_samples() {
        let mut t = synth::seed_staged();
        t.samples.truncate(2);
        t.samples[0].sample.processes[0].name = "my \"app\", v2\nbeta".into();
        t.samples.push(TraceSample {
            sample: Sample {
                t_ms: 1500,
                system: SystemSample {
                    phys_bytes: 1 << 30,
                    ..Default::default()
                },
                processes: vec![],
            },
            watched: vec![],
        });
        t.samples[1].sample.processes.push(ProcessSample {
            pid: 7,
            name: "vm".into(),
            swap_bytes: Some(4096),
            ..Default::default()
        });
        let text = csv_of(&t);
        assert!(text.contains("\"my \"\"app\"\", v2\nbeta\""), "{text}");
        let rows: Vec<_> = ::csv::Reader::from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(&rows[0][10], "my \"app\", v2\nbeta");
        let vm = rows.iter().find(|r| &r[8] == "7").unwrap();
        assert_eq!(&vm[16], "4096");
        let empty = rows.last().unwrap();
        assert_eq!(&empty[0], "1.5");
        assert_eq!(&empty[8], "");
        assert_eq!(empty.len(), COLUMNS.len());
    }

    #[test]
    fn export_csv_decimals() {
        assert_eq!(decimal(12.5, 3), "12.5");
        assert_eq!(decimal(38.541_666, 2), "38.54");
        assert_eq!(decimal(104.0, 3), "104");
        assert_eq!(decimal(0.0004, 3), "0");
    }

    #[test]
    fn the_phase_column_names_the_phase_under_way() {
        let mut t = crate::synth::seed_offload();
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
        let text = csv_of(&t);
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let phase_at = |time: &str| -> Vec<String> {
            let mut r = ::csv::Reader::from_reader(text.as_bytes());
            r.records()
                .map(|x| x.unwrap())
                .filter(|x| &x[0] == time)
                .map(|x| x[17].to_string())
                .collect()
        };
        assert_eq!(r.headers().unwrap().get(17), Some("phase"));
        assert!(phase_at("10").iter().all(|p| p == "load"));
        assert!(phase_at("20").iter().all(|p| p == "denoise"));
        assert!(phase_at("95").iter().all(|p| p.is_empty()));
        assert!(!phase_at("95").is_empty());
    }
}
