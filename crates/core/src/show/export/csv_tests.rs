use super::*;
use crate::probe::{ProcessSample, Sample, SystemSample};
use crate::record::trace::Trace;
use crate::record::trace::TraceSample;
use crate::synth;

fn csv_of(trace: &Trace) -> String {
    let mut out = Vec::new();
    crate::show::export::ExportFormat::Csv
        .write(trace, &Default::default(), &mut out)
        .unwrap();
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
            scope: Some(crate::probe::Scope {
                limit_bytes: 256 << 20,
                usage_bytes: 200 << 20,
                ..Default::default()
            }),
        },
        watched: vec![],
        forecast: None,
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
    // The scope's columns: its figures where the sample has one, else empty.
    let at = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
    assert_eq!(&empty[at("scope_limit_bytes")], "268435456");
    assert_eq!(&empty[at("scope_usage_bytes")], "209715200");
    assert_eq!(&empty[at("scope_swap_bytes")], "", "not accounted");
    assert_eq!(&empty[at("phase")], "");
    assert_eq!(&vm[at("scope_limit_bytes")], "");
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

/// The hostile trace as the reader keeps it.
fn hostile() -> Trace {
    let bytes = synth::to_jsonl(&synth::hostile_text());
    crate::record::trace::read_from(&bytes[..], std::path::Path::new("t.jsonl")).unwrap()
}

/// Issue 20: a process named `=HYPERLINK(…)` became a live formula in a
/// spreadsheet, and so did names starting with `+`, `-` or `@`; a leading `'`
/// keeps them text, while swapsight's own negative figures stay numbers.
#[test]
fn formula_names_are_text_in_export_csv() {
    let mut t = hostile();
    // Swap falls after the first sample: a negative growth.
    t.samples[1].sample.system.swap_used_bytes = 0;
    let text = csv_of(&t);
    let mut r = ::csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<::csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    let name_of = |pid: &str| rows.iter().find(|r| &r[8] == pid).unwrap()[10].to_string();
    assert_eq!(name_of("300"), format!("'{}", synth::FORMULA));
    assert_eq!(name_of("120"), "'-2+3");
    assert_eq!(name_of("410"), "'@SUM(A1)");
    assert_eq!(name_of("4243"), "?]52;c;ZXZpbA==?python?yp.exe");
    assert_eq!(&rows[0][17], "'=1+1");
    let growth = &rows.iter().find(|r| &r[0] == "0.5").unwrap()[5];
    assert!(
        growth.starts_with('-') && growth.parse::<i64>().is_ok(),
        "{growth}"
    );
}

#[test]
fn each_counter_is_a_column_holding_its_last_value() {
    let mut t = synth::seed_offload();
    let t0 = t.samples[0].sample.t_ms;
    let t1 = t.samples[1].sample.t_ms;
    let point = synth::counter;
    // Out of order on purpose; "=cmd" cannot start a cell as a formula.
    t.counters = vec![
        point(t1, "pool", 3e9, "bytes"),
        point(t0, "pool", 1e9, "bytes"),
        point(t1, "=cmd", 2.5, "items"),
    ];
    let text = csv_of(&t);
    let mut r = ::csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[..COLUMNS.len()], COLUMNS);
    assert_eq!(
        header[COLUMNS.len()..],
        ["counter:pool:bytes", "counter:=cmd:items"]
    );
    let rows: Vec<::csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    let at = |t_s: u64| {
        rows.iter()
            .find(|r| r[0] == *(t_s as f64 / 1000.0).to_string())
            .unwrap()
            .clone()
    };
    let first = at(t0);
    assert_eq!(&first[COLUMNS.len()], "1000000000");
    assert_eq!(&first[COLUMNS.len() + 1], "", "no value before the first");
    let second = at(t1);
    assert_eq!(&second[COLUMNS.len()], "3000000000");
    assert_eq!(&second[COLUMNS.len() + 1], "2.5");
    // Without counters, the columns are as they were.
    let plain = csv_of(&synth::seed_offload());
    assert_eq!(plain.lines().next().unwrap(), COLUMNS.join(","));
}

#[test]
fn pressure_columns_hold_the_level_and_psi_and_are_empty_without_them() {
    use crate::step::pressure::{Level, Pressure, PsiLine};
    let mut t = synth::seed_offload();
    let (t0, t1) = (t.samples[0].sample.t_ms, t.samples[1].sample.t_ms);
    t.samples[0].sample.system.pressure = Some(Pressure {
        some: Some(PsiLine {
            avg10: 12.5,
            avg60: 3.0,
            total_us: 99,
        }),
        full: None,
        kernel_level: None,
        level: Some(Level::Warning),
    });
    t.samples[1].sample.system.pressure = None;
    let text = csv_of(&t);
    let mut r = ::csv::Reader::from_reader(text.as_bytes());
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
    let rows: Vec<::csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    let at = |t_ms: u64| {
        rows.iter()
            .filter(|r| r[0] == *(t_ms as f64 / 1000.0).to_string())
            .cloned()
            .collect::<Vec<_>>()
    };
    let first = at(t0);
    assert!(!first.is_empty());
    for row in &first {
        assert_eq!(&row[col("pressure_level")], "warning");
        assert_eq!(&row[col("psi_some_avg10")], "12.5");
        assert_eq!(
            &row[col("psi_full_avg10")],
            "",
            "no full line: empty, not 0"
        );
    }
    for row in at(t1) {
        for c in ["pressure_level", "psi_some_avg10", "psi_full_avg10"] {
            assert_eq!(&row[col(c)], "", "{c} without pressure figures");
        }
    }
}
