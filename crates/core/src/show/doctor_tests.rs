use super::*;

const MIB: f64 = 1048576.0;

fn bytes_row(s: Reading<Bracket>, t: Reading<f64>, tol: Tolerance) -> Row {
    judge("figure", "tool", Unit::Bytes, s, t, tol)
}

#[test]
fn a_tool_figure_within_the_span_of_both_readings_is_ok() {
    // Free memory fell 100 MiB while the tool read it: the tool's figure
    // between the two readings is no disagreement.
    let r = bytes_row(
        Reading::Value(Bracket::new(1000.0 * MIB, 900.0 * MIB)),
        Reading::Value(950.0 * MIB),
        Tolerance::new(0.0, 0.0),
    );
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.swapsight, Some(1000.0 * MIB));
    assert_eq!(r.difference, Some(-50.0 * MIB));
    // Outside the span by more than the tolerance: off.
    let r = bytes_row(
        Reading::Value(Bracket::new(100.0 * MIB, 101.0 * MIB)),
        Reading::Value(120.0 * MIB),
        Tolerance::new(8.0 * MIB, 2.0),
    );
    assert_eq!(r.status, Status::Off);
    assert_eq!(r.difference, Some(19.0 * MIB));
    assert_eq!(r.tolerance_text, "±8.0 MiB + 2 %");
    // Just inside: 8 MiB + 2 % of 120 MiB = 10.4 MiB.
    let r = bytes_row(
        Reading::Value(Bracket::once(110.0 * MIB)),
        Reading::Value(120.0 * MIB),
        Tolerance::new(8.0 * MIB, 2.0),
    );
    assert_eq!(r.status, Status::Ok);
}

#[test]
fn an_unreadable_side_is_named_and_never_off() {
    let r = bytes_row(
        Reading::Value(Bracket::once(1.0)),
        Reading::Unreadable("pid 1 is another user's process: \x1b[31mroot".into()),
        Tolerance::new(0.0, 0.0),
    );
    assert_eq!(r.status, Status::Unreadable);
    assert_eq!(r.tool, None);
    assert!(!r.note.as_deref().unwrap().contains('\x1b'), "{r:?}");
    let r = bytes_row(
        Reading::Unreadable("not in the sample".into()),
        Reading::Value(f64::NAN),
        Tolerance::new(0.0, 0.0),
    );
    assert_eq!(r.status, Status::Unreadable);
    assert!(r.note.unwrap().contains("swapsight: not in the sample"));
}

fn report(rows: Vec<Row>) -> Report {
    Report {
        os: "linux".into(),
        os_version: "Test\x07Linux".into(),
        kernel: "6.1".into(),
        child: Some(ChildInfo {
            pid: 42,
            size_bytes: 256 << 20,
            inherited_bytes: 0,
        }),
        rows,
        missing_tools: vec![MissingTool {
            tool: "swapon".into(),
            why: "looked at /usr/sbin/swapon (not there), /sbin/swapon (not there)".into(),
        }],
        tools: vec![UsedTool {
            tool: "free".into(),
            path: "/usr/bin/free".into(),
        }],
        span_ms: 12,
    }
}

#[test]
fn the_text_table_cleans_what_came_from_outside() {
    let off = judge(
        "largest process: evil\x1b]0;pwned\x07 (pid 7)",
        "footprint",
        Unit::Bytes,
        Reading::Value(Bracket::once(100.0 * MIB)),
        Reading::Value(200.0 * MIB),
        Tolerance::new(0.0, 1.0),
    );
    let ok = judge(
        "free memory",
        "memory_pressure",
        Unit::Percent,
        Reading::Value(Bracket::new(61.4, 61.6)),
        Reading::Value(62.0),
        Tolerance::new(1.0, 0.0),
    );
    let r = report(vec![off, ok]);
    assert!(r.any_off());
    let text = r.to_text();
    assert!(
        !text.contains(|c: char| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(text.contains("Test?Linux"), "{text}");
    assert!(text.contains("OFF"), "{text}");
    assert!(text.contains("+100.0 MiB"), "{text}");
    assert!(text.contains("61.6 %"), "{text}");
    assert!(
        text.contains("missing tool: swapon (looked at /usr/sbin/swapon (not there), "),
        "{text}"
    );
    assert!(text.contains("tools: free /usr/bin/free\n"), "{text}");
    assert!(
        text.contains("1 ok, 1 off, 0 unreadable, 0 for reference"),
        "{text}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["rows"][0]["status"], "off");
    assert_eq!(json["rows"][1]["unit"], "percent");
    assert_eq!(json["child"]["size_bytes"], 256 << 20);
    assert_eq!(json["tools"][0]["path"], "/usr/bin/free");
}

#[test]
fn info_rows_carry_no_verdict() {
    let r = info(
        "cached files",
        "vm_stat",
        Unit::Bytes,
        None,
        Reading::Value(5.0),
        "no figure",
    );
    assert_eq!(r.status, Status::Info);
    let r = info(
        "cached files",
        "vm_stat",
        Unit::Bytes,
        None,
        Reading::Unreadable("vm_stat is not installed".into()),
        "no figure",
    );
    assert_eq!(r.status, Status::Unreadable);
    assert!(!report(vec![r]).any_off());
}

#[cfg(target_os = "linux")]
#[test]
fn the_child_holds_what_it_was_asked_for_and_ends_with_its_handle() {
    let held = child::Held::spawn(32 << 20, std::time::Duration::from_secs(10)).unwrap();
    let pid = held.pid();
    let status = std::fs::read(format!("/proc/{pid}/status")).unwrap();
    let anon = crate::probe::linux::parse::parse_status(&status).rss_anon_bytes;
    assert!(anon >= 32 << 20, "RssAnon {anon}");
    drop(held);
    assert!(std::fs::metadata(format!("/proc/{pid}")).is_err());
}

#[cfg(target_os = "linux")]
use crate::probe;

/// The native probe with swap used 1 GiB too high. It passes the doctor's
/// watch on, as the native probe's wrappers do: a wrapper that dropped it
/// would repeat at the second sample what the first read of an idle
/// process, and a process that moved between would be off too.
#[cfg(target_os = "linux")]
struct SwapTooHigh(Box<dyn probe::Probe + Send>);

#[cfg(target_os = "linux")]
impl probe::Probe for SwapTooHigh {
    fn system(&mut self) -> Result<probe::SystemSample, probe::ProbeError> {
        self.0.system()
    }

    fn sample(
        &mut self,
    ) -> Result<(probe::SystemSample, Vec<probe::ProcessSample>), probe::ProbeError> {
        let (mut sys, procs) = self.0.sample()?;
        sys.swap_used_bytes += 1 << 30;
        Ok((sys, procs))
    }

    fn host(&mut self) -> Result<probe::HostInfo, probe::ProbeError> {
        self.0.host()
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        self.0.watch_closely(pids);
    }
}

/// The whole doctor on this machine: first with the native probe (every
/// figure agrees), then through it with swap used 1 GiB too high
/// ([`SwapTooHigh`]), which only the swap rows catch.
#[cfg(target_os = "linux")]
#[test]
fn a_wrong_figure_from_the_probe_is_off_and_only_that_one() {
    let opts = Options {
        child_size: 64 << 20,
        ..Options::default()
    };
    let mut native = crate::probe::native().unwrap();
    let honest = examine(native.as_mut(), &opts).unwrap();
    assert!(!honest.any_off(), "{}", honest.to_text());
    assert!(honest.count(Status::Ok) >= 8, "{}", honest.to_text());

    let r = examine(&mut SwapTooHigh(native), &opts).unwrap();
    assert!(r.any_off(), "{}", r.to_text());
    for row in &r.rows {
        let expect_off = row.figure == "swap used" && row.tool.is_some();
        assert_eq!(
            row.status == Status::Off,
            expect_off,
            "{}: {row:?}\n{}",
            row.figure,
            r.to_text()
        );
    }
    assert!(r
        .rows
        .iter()
        .any(|x| x.figure == "swap used" && x.status == Status::Off));
}
