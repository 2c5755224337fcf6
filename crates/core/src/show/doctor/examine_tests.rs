use super::on_macos::MacRead;
use super::*;

#[test]
fn a_missing_tool_is_named_once_and_its_rows_say_so() {
    let mut ctx = Ctx {
        timeout: Duration::from_secs(5),
        missing: Vec::new(),
        used: Vec::new(),
    };
    for _ in 0..2 {
        let r = ctx.parsed("swapsight-no-such-tool", &[], |_| Some(1));
        assert_eq!(
            r,
            Reading::Unreadable("no trusted swapsight-no-such-tool is installed".into())
        );
    }
    assert_eq!(ctx.missing.len(), 1);
    assert_eq!(ctx.missing[0].tool, "swapsight-no-such-tool");
    assert!(ctx.used.is_empty());
    // Output the parser cannot read is named, not a panic; the binary
    // that answered is kept, once.
    for _ in 0..2 {
        let r = ctx.parsed("uname", &["-s"], macos::parse_sysctl_u64);
        assert_eq!(r, Reading::Unreadable("cannot read uname's output".into()));
    }
    assert!(ctx.missing.len() == 1);
    assert_eq!(ctx.used.len(), 1, "{:?}", ctx.used);
    assert!(ctx.used[0].path.ends_with("/uname"), "{:?}", ctx.used);
}

fn snap(procs: Vec<ProcessSample>) -> Snap {
    (SystemSample::default(), procs)
}

#[test]
fn other_users_processes_on_a_mac_are_counted_and_never_compared() {
    let p = |pid, footprint_bytes, readable| ProcessSample {
        pid,
        name: format!("p{pid}"),
        footprint_bytes,
        readable,
        ..ProcessSample::default()
    };
    let a = snap(vec![
        p(1, 0, false),
        p(2, 0, false),
        p(3, 50 << 20, true),
        p(9, 1, true),
    ]);
    let read = MacRead {
        memsize: Reading::Unreadable("x".into()),
        vm_stat: Reading::Unreadable("x".into()),
        swapusage: Reading::Unreadable("x".into()),
        pressure: Reading::Unreadable("x".into()),
        child_footprint: Reading::Unreadable("x".into()),
        child_top: Reading::Unreadable("x".into()),
        procs: vec![(
            Pick {
                pid: 3,
                name: "p3".into(),
                what: "largest readable process",
            },
            Reading::Value(macos::Printed {
                bytes: 50 << 20,
                resolution: 1,
            }),
        )],
        others: 2,
    };
    let child = ChildInfo {
        pid: 9,
        size_bytes: 1,
    };
    let rows = rows_macos(&read, child, &a, &a);
    let largest = rows
        .iter()
        .find(|r| r.figure == "largest readable process: p3 (pid 3)")
        .unwrap();
    assert_eq!(largest.status, super::super::Status::Ok);
    let others = rows
        .iter()
        .find(|r| r.figure == "other users' processes (2)")
        .unwrap();
    assert_eq!(others.status, super::super::Status::Unreadable);
    assert!(others.note.as_deref().unwrap().contains("only to root"));
    // A process swapsight lists but cannot read is never judged.
    let row = judge(
        "x",
        "y",
        Unit::Bytes,
        proc_bracket(&a, &a, 1, |q| Some(q.footprint_bytes)),
        Reading::Value(5.0),
        Tolerance::new(0.0, 0.0),
    );
    assert_eq!(row.status, super::super::Status::Unreadable);
    assert!(row.note.unwrap().contains("another user's process"));
}
