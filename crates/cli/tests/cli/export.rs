//! `swapsight export` and `swapsight plot` on the seeds' runs and on bad
//! input.

use std::path::PathBuf;
use std::process::Output;

use super::util::*;

fn write_trace(dir: &TempDir, name: &str, trace: &swapsight::trace::Trace) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, swapsight::synth::to_jsonl(trace)).unwrap();
    p
}

fn offload(dir: &TempDir) -> PathBuf {
    write_trace(dir, "offload.jsonl", &swapsight::synth::seed_offload())
}

/// The offload trace with its 5th line corrupted in place.
fn corrupt(dir: &TempDir) -> PathBuf {
    let mut bytes = swapsight::synth::to_jsonl(&swapsight::synth::seed_offload());
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    bytes[starts[4]] = b'#';
    let p = dir.join("c.jsonl");
    std::fs::write(&p, bytes).unwrap();
    p
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    swapsight().args(args).output().unwrap()
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

/// One line on stderr, `swapsight: ` first, and the exit code.
fn one_line_error(out: &Output, code: i32) -> String {
    let err = stderr_of(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("swapsight: "), "{err}");
    err
}

/// (width, height) from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn export_csv_to_a_file() {
    let dir = TempDir::new("export-csv");
    let trace = offload(&dir);
    let csv = dir.join("run.csv");
    let out = run(&[
        os("export"),
        trace.as_os_str(),
        os("--format"),
        os("csv"),
        os("-o"),
        csv.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out), "", "a file was asked for");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with(
            "time_s,unix_time_ms,phys_bytes,free_pct,swap_used_bytes,swap_growth_bytes"
        ),
        "{header}"
    );
    assert!(
        header.ends_with("footprint_bytes,pageins_total,pageins_per_s,swap_bytes,phase,scope_limit_bytes,scope_usage_bytes,scope_swap_bytes,pressure_level,psi_some_avg10,psi_full_avg10"),
        "{header}"
    );
    let t = swapsight::synth::seed_offload();
    let rows: usize = t.samples.iter().map(|s| s.sample.processes.len()).sum();
    assert_eq!(lines.count(), rows);
    assert!(
        text.contains(",4243,800,python,1,false-fit,"),
        "the watched python, flagged"
    );
}

#[test]
fn export_perfetto_to_stdout_is_a_chrome_trace() {
    let dir = TempDir::new("export-perfetto");
    let trace = offload(&dir);
    let out = run(&[
        os("export"),
        trace.as_os_str(),
        os("--format"),
        os("perfetto"),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 0));
    let counters: Vec<_> = events.iter().filter(|e| e["ph"] == "C").collect();
    assert!(counters.len() > 1000);
    assert!(counters.iter().all(|e| {
        let a = e["args"].as_object().unwrap();
        a.len() == 1 && a.values().all(|x| x.is_number())
    }));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "i" && e["args"]["state"] == "false-fit"));
}

#[test]
fn export_prometheus_to_stdout() {
    let dir = TempDir::new("export-prom");
    let trace = offload(&dir);
    let out = run(&[
        os("export"),
        trace.as_os_str(),
        os("-f"),
        os("prometheus"),
        os("--processes"),
        os("2"),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.contains("# TYPE swapsight_swap_used_bytes gauge\n"),
        "{text}"
    );
    assert!(
        text.contains("# TYPE swapsight_process_pageins_total counter\n"),
        "{text}"
    );
    assert!(
        text.contains("swapsight_process_footprint_bytes{pid=\"4243\",name=\"python\"} "),
        "{text}"
    );
    let footprints = text
        .lines()
        .filter(|l| l.starts_with("swapsight_process_footprint_bytes{"))
        .count();
    assert_eq!(footprints, 2, "--processes bounds the series");
}

#[test]
fn export_with_a_corrupt_line_warns_and_still_exports() {
    let dir = TempDir::new("export-corrupt");
    let trace = corrupt(&dir);
    for format in ["csv", "perfetto", "prometheus"] {
        let out = run(&[os("export"), trace.as_os_str(), os("--format"), os(format)]);
        assert!(out.status.success(), "{format}: {}", stderr_of(&out));
        let err = stderr_of(&out);
        assert!(err.starts_with("swapsight: warning: "), "{err}");
        assert!(
            err.contains("c.jsonl: line 5:") && err.contains("(skipped)"),
            "{err}"
        );
        assert!(!out.stdout.is_empty(), "{format}");
    }
}

#[test]
fn export_bad_input_is_one_line_and_nonzero() {
    let dir = TempDir::new("export-bad");
    let trace = offload(&dir);

    let out = run(&[os("export"), trace.as_os_str(), os("--format"), os("xml")]);
    let err = one_line_error(&out, 2);
    assert!(err.contains("'xml'"), "{err}");

    let out = run(&[
        os("export"),
        dir.join("missing.jsonl").as_os_str(),
        os("--format"),
        os("csv"),
    ]);
    let err = one_line_error(&out, 1);
    assert!(
        err.starts_with("swapsight: cannot read ") && err.contains("missing.jsonl"),
        "{err}"
    );

    let not_a_trace = dir.join("x.jsonl");
    std::fs::write(&not_a_trace, "hello\n").unwrap();
    let out = run(&[
        os("export"),
        not_a_trace.as_os_str(),
        os("--format"),
        os("csv"),
    ]);
    let err = one_line_error(&out, 1);
    assert!(err.contains("x.jsonl:1: not a swapsight trace"), "{err}");

    let nowhere = dir.join("no/such/dir/out.csv");
    let out = run(&[
        os("export"),
        trace.as_os_str(),
        os("--format"),
        os("csv"),
        os("-o"),
        nowhere.as_os_str(),
    ]);
    let err = one_line_error(&out, 1);
    assert!(
        err.contains("cannot write ") && err.contains("out.csv"),
        "{err}"
    );

    let header_only = dir.join("h.jsonl");
    let first = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&header_only, first + "\n").unwrap();
    let out = run(&[
        os("export"),
        header_only.as_os_str(),
        os("-f"),
        os("prometheus"),
    ]);
    let err = one_line_error(&out, 1);
    assert!(err.contains("h.jsonl: the trace has no samples"), "{err}");

    let out = run(&[os("export"), trace.as_os_str()]);
    let err = one_line_error(&out, 2);
    assert!(
        err.contains("--format csv, perfetto or prometheus"),
        "{err}"
    );
}

#[test]
fn export_format_follows_the_output_extension() {
    let dir = TempDir::new("export-ext");
    let trace = offload(&dir);
    let json = dir.join("run.json");
    let out = run(&[os("export"), trace.as_os_str(), os("-o"), json.as_os_str()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v["traceEvents"].is_array());
    let prom = dir.join("run.prom");
    let out = run(&[os("export"), trace.as_os_str(), os("-o"), prom.as_os_str()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(std::fs::read_to_string(&prom)
        .unwrap()
        .starts_with("# HELP swapsight_"));
}

#[test]
fn plot_png_and_svg() {
    let dir = TempDir::new("plot");
    let trace = offload(&dir);
    let png = dir.join("run.png");
    let out = run(&[
        os("plot"),
        trace.as_os_str(),
        os("-o"),
        png.as_os_str(),
        os("--size"),
        os("800x450"),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(stderr_of(&out), "");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(png_size(&bytes), (800, 450));
    assert!(bytes.len() > 10_000, "{} bytes: blank?", bytes.len());

    let svg = dir.join("run.SVG");
    let out = run(&[
        os("plot"),
        trace.as_os_str(),
        os("-o"),
        svg.as_os_str(),
        os("--processes"),
        os("2"),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("<svg") && text.contains("width=\"1200\""),
        "{}",
        &text[..200.min(text.len())]
    );
    assert!(
        text.contains(">\nFALSE FIT\n<") || text.contains(">FALSE FIT<"),
        "verdict in the title"
    );
    assert!(text.trim_end().ends_with("</svg>"));
}

#[test]
fn plot_with_a_corrupt_line_warns_and_still_draws() {
    let dir = TempDir::new("plot-corrupt");
    let trace = corrupt(&dir);
    let png = dir.join("c.png");
    let out = run(&[os("plot"), trace.as_os_str(), os("-o"), png.as_os_str()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("swapsight: warning: ")
            && err.contains("c.jsonl: line 5:")
            && err.contains("(skipped)"),
        "{err}"
    );
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), (1200, 675));
}

#[test]
fn plot_bad_input_is_one_line_and_nonzero() {
    let dir = TempDir::new("plot-bad");
    let trace = offload(&dir);
    let png = dir.join("x.png");

    let out = run(&[
        os("plot"),
        trace.as_os_str(),
        os("-o"),
        png.as_os_str(),
        os("--size"),
        os("12x"),
    ]);
    let err = one_line_error(&out, 2);
    assert!(
        err.contains("'12x'") && err.contains("WIDTHxHEIGHT"),
        "{err}"
    );

    let out = run(&[
        os("plot"),
        trace.as_os_str(),
        os("-o"),
        png.as_os_str(),
        os("--size"),
        os("10x10"),
    ]);
    let err = one_line_error(&out, 2);
    assert!(err.contains("320 to 8192"), "{err}");

    let jpg = dir.join("x.jpg");
    let out = run(&[os("plot"), trace.as_os_str(), os("-o"), jpg.as_os_str()]);
    let err = one_line_error(&out, 2);
    assert!(
        err.contains("x.jpg") && err.contains(".png or .svg"),
        "{err}"
    );
    assert!(!jpg.exists());

    let out = run(&[
        os("plot"),
        dir.join("missing.jsonl").as_os_str(),
        os("-o"),
        png.as_os_str(),
    ]);
    let err = one_line_error(&out, 1);
    assert!(err.starts_with("swapsight: cannot read "), "{err}");
    assert!(!png.exists());

    let nowhere = dir.join("no/such/dir/x.png");
    let out = run(&[os("plot"), trace.as_os_str(), os("-o"), nowhere.as_os_str()]);
    let err = one_line_error(&out, 1);
    assert!(
        err.contains("cannot write ") && err.contains("x.png"),
        "{err}"
    );

    let out = run(&[os("plot"), trace.as_os_str()]);
    let err = one_line_error(&out, 2);
    assert!(err.contains("-o FILE.png"), "{err}");
}

/// Regression: `export … -o /dev/stdout >> f` followed /dev/stdout's link
/// to `f` and renamed the export over it, its old content lost; the shell's
/// descriptor, opened to append, is written through instead.
#[test]
fn export_to_dev_stdout_appends_where_the_shell_said() {
    use std::os::unix::fs::MetadataExt;
    let dir = TempDir::new("export-devstdout");
    let trace = offload(&dir);
    let f = dir.join("f.csv");
    std::fs::write(&f, "kept line\n").unwrap();
    let inode = std::fs::metadata(&f).unwrap().ino();
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(r#""$0" export "$1" --format csv -o /dev/stdout >> "$2""#)
        .arg(env!("CARGO_BIN_EXE_swapsight"))
        .arg(&trace)
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(
        text.starts_with("kept line\n"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.lines().count() > 100, "the CSV follows");
    assert_eq!(std::fs::metadata(&f).unwrap().ino(), inode, "replaced");
}
