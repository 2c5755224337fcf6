//! The false fit on real swap: a process filling more random memory than its
//! memory cgroup allows keeps a low footprint while its pages go to swap.
//! The report must call it a false fit, in agreement with its measured
//! `VmSwap`; the same process without the limit fits.

use super::util::*;

#[test]
fn cgroup_limited_filler_is_a_false_fit_and_agrees_with_vmswap() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("realswap");
    let trace = dir.join("ff.jsonl");
    let fill = memfill();
    let cmd = rs.wrap(&[
        "python3",
        fill.to_str().unwrap(),
        "--mb",
        "768",
        "--hold",
        "4",
    ]);
    let out = swapsight()
        .args(["record", "--interval", "250ms", "-o"])
        .arg(&trace)
        .arg("--")
        .args(&cmd)
        .output()
        .unwrap();
    assert!(out.status.success(), "record failed: {}", stderr_of(&out));

    let r = report_json(&trace);
    let p = heaviest_watched(&r);
    assert_eq!(p["verdict"], "false-fit", "{r:#}");
    assert_eq!(r["verdict"], "false-fit");
    // Ground truth: the process really swapped, and its footprint stayed low.
    let vmswap = p["measured_swap_peak_bytes"].as_u64().unwrap();
    assert!(vmswap >= 256 * MIB, "VmSwap peaked at only {vmswap}");
    assert!(
        p["peak_footprint_bytes"].as_u64().unwrap() <= 300 * MIB,
        "{p:#}"
    );
    // The live detector flagged it too (a flag line in the trace).
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.lines().any(|l| l.contains("\"type\":\"flag\"")
            && l.contains("\"state\":\"false-fit\"")
            && l.contains(&format!("\"pid\":{}", p["pid"]))),
        "no live false-fit flag in the trace"
    );
    // Every process the detector blamed really swapped (VmSwap > 0).
    for q in r["processes"].as_array().unwrap() {
        if q["verdict"] == "false-fit" || q["verdict"] == "overflow" {
            assert!(
                q["measured_swap_peak_bytes"].as_u64().unwrap_or(0) > 0,
                "blamed without swapping: {q:#}"
            );
        }
    }
    let text = stdout_of(&swapsight().arg("report").arg(&trace).output().unwrap());
    eprintln!("--- report of a real false-fit run ---\n{text}");
    drop(rs);
}

#[test]
fn same_filler_without_limit_fits() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("control");
    let trace = dir.join("fits.jsonl");
    let fill = memfill();
    let out = swapsight()
        .args(["record", "--interval", "250ms", "-o"])
        .arg(&trace)
        .args([
            "--",
            "python3",
            fill.to_str().unwrap(),
            "--mb",
            "768",
            "--hold",
            "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "record failed: {}", stderr_of(&out));
    let r = report_json(&trace);
    let p = heaviest_watched(&r);
    assert_eq!(p["verdict"], "fits", "{r:#}");
    assert!(
        p["peak_footprint_bytes"].as_u64().unwrap() >= 700 * MIB,
        "{p:#}"
    );
    assert_eq!(p["measured_swap_peak_bytes"].as_u64().unwrap_or(0), 0);
    drop(rs);
}
