//! `record` and `guard` take the same recording flags (`-o`, `--interval`,
//! `--top`, the pressure thresholds): the same values pass, the same values
//! are refused with the same line.

use super::util::*;

/// What `swapsight VERB ARGS -- true` says: exit code and stderr.
fn said(verb: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = swapsight()
        .arg(verb)
        .args(args)
        .args(["--", "true"])
        .output()
        .unwrap();
    (out.status.code(), stderr_of(&out))
}

#[test]
fn record_and_guard_refuse_the_same_values_with_the_same_line() {
    let dir = TempDir::new("flags-bad");
    let missing = dir.join("no-such-dir").join("t.jsonl");
    let missing = missing.to_str().unwrap();
    for args in [
        &["--interval", "1ns"][..],
        &["--interval", "9ms"],
        &["--interval", "1.01h"],
        &["--interval", "-1s"],
        &["--top", "-1"],
        &["--top", "ten"],
        &["--pressure-warn", "0"],
        &["--pressure-warn", "101"],
        &["--pressure-critical", "lots"],
        &["--pressure-warn", "50"],
        &["-o", missing],
    ] {
        let (code, err) = said("record", args);
        assert_ne!(code, Some(0), "record {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "record {args:?}: {err}");
        assert!(err.contains(args[0]) || args[0] == "-o", "{args:?}: {err}");
        assert_eq!(said("guard", args), (code, err), "guard {args:?}");
    }
}

#[test]
fn record_and_guard_accept_the_edges_and_write_them_in_the_header() {
    let dir = TempDir::new("flags-good");
    for verb in ["record", "guard"] {
        for (interval, ms, top) in [("10ms", 10, "0"), ("1h", 3_600_000, "1000")] {
            let trace = dir.join(&format!("{verb}-{ms}.jsonl"));
            let args = ["--interval", interval, "--top", top, "-o"];
            let out = swapsight()
                .arg(verb)
                .args(args)
                .arg(&trace)
                .args(["--", "true"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{verb}: {}", stderr_of(&out));
            let t = swapsight::trace::read(&trace).unwrap();
            assert_eq!(t.header().interval_ms, ms, "{verb} {interval}");
            assert_eq!(t.header().top_n.to_string(), top, "{verb} --top {top}");
        }
        // The pressure thresholds, into the header that report reads.
        let trace = dir.join(&format!("{verb}-psi.jsonl"));
        let out = swapsight()
            .arg(verb)
            .args(["--pressure-warn", "5%", "--pressure-critical", "20", "-o"])
            .arg(&trace)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{verb}: {}", stderr_of(&out));
        let p = &swapsight::trace::read(&trace)
            .unwrap()
            .header()
            .pressure
            .clone();
        assert_eq!(
            (p.warn_some_avg10, p.critical_some_avg10),
            (5.0, 20.0),
            "{verb}"
        );
    }
}
