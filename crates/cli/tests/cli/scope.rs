//! The scope on real cgroups: a run inside a memory cgroup is judged against
//! its limit — the limit is its memory, the cgroup's swap its swap — and a
//! run its cgroup's OOM killer ends is reported as ended so. Runs on the
//! cgroup version the machine has (`RealSwap`), as swapsight does for a user
//! (`swapsight_in_scope`: no `SWAPSIGHT_SCOPE=host`).

use super::util::*;

fn record_filler(rs: &RealSwap, trace: &std::path::Path, mb: &str) -> std::process::Output {
    let fill = memfill();
    // A pause between chunks: the recorder looks into the cgroup many
    // times before the filler outgrows it (a kill before swapsight's first
    // look would be taken for the cgroup's past). At 0.25 s a chunk the
    // kill came after 2 s, and CI, loaded by the tests beside it, once saw
    // no look before it; at 0.5 s it comes after 4 s, 16 ticks.
    let cmd = rs.wrap(&[
        "python3",
        fill.to_str().unwrap(),
        "--mb",
        mb,
        "--pause",
        "0.5",
        "--hold",
        "3",
    ]);
    swapsight_in_scope()
        .args(["record", "--interval", "250ms", "-o"])
        .arg(trace)
        .arg("--")
        .args(&cmd)
        .output()
        .unwrap()
}

fn report_text(trace: &std::path::Path) -> String {
    stdout_of(
        &swapsight_in_scope()
            .arg("report")
            .arg(trace)
            .output()
            .unwrap(),
    )
}

#[test]
fn a_filler_in_a_256_mib_cgroup_is_judged_against_its_limit() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("scope");
    let trace = dir.join("scoped.jsonl");
    let out = record_filler(&rs, &trace, "768");
    assert!(out.status.success(), "record failed: {}", stderr_of(&out));

    // The trace carries the scope: this cgroup, its limit, its swap.
    let text = std::fs::read_to_string(&trace).unwrap();
    let needle = format!(
        r#""scope":{{"path":"{}","version":{},"limit_bytes":{}"#,
        rs.cgroup_path(),
        rs.version,
        256 * MIB
    );
    assert!(text.contains(&needle), "no {needle} in the trace");

    let r = report_json(&trace);
    let scope = &r["scope"];
    assert_eq!(scope["path"], rs.cgroup_path().as_str(), "{r:#}");
    assert_eq!(scope["version"], rs.version);
    assert_eq!(scope["limit_bytes"], 256 * MIB);
    assert!(
        scope["peak_swap_bytes"].as_u64().unwrap() >= 256 * MIB,
        "the cgroup's own swap: {scope:#}"
    );
    assert!(scope["limit_hits"].as_u64().unwrap() > 0, "{scope:#}");
    assert_eq!(scope["oom_kills"], 0);
    assert!(r.get("swap_off").is_none(), "it swapped: {r:#}");
    // Judged against the limit: its memory is 256 MiB, and the filler's
    // footprint fills it while its swap grows — an overflow of the limit,
    // not a false fit (the host, 23 GiB, was nearly all free).
    assert_eq!(r["phys_bytes"], 256 * MIB, "{r:#}");
    let p = heaviest_watched(&r);
    assert_eq!(p["verdict"], "overflow", "{r:#}");
    assert_eq!(r["verdict"], "overflow");
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.ends_with("inside a 256 MiB cgroup limit"),
        "{summary}"
    );
    let swap_growth = r["swap_growth_bytes"].as_i64().unwrap();
    assert!(
        swap_growth >= 256 * MIB as i64,
        "the scope's swap grew {swap_growth}"
    );

    let text = report_text(&trace);
    assert!(
        text.contains(&format!(
            "scope: inside a 256 MiB cgroup limit (cgroup v{} {})",
            rs.version,
            rs.cgroup_path()
        )),
        "{text}"
    );
    eprintln!("--- report of a real run in a 256 MiB cgroup ---\n{text}");
}

#[test]
fn a_filler_its_cgroup_oom_kills_is_reported_as_ended_so() {
    // No swap for the cgroup: past its limit the kernel kills.
    let Some(rs) = RealSwap::with(256, 256, CgroupSwap::None) else {
        return;
    };
    let dir = TempDir::new("scope-oom");
    let trace = dir.join("oom.jsonl");
    let out = record_filler(&rs, &trace, "768");
    assert_eq!(
        out.status.code(),
        Some(128 + 9),
        "the filler should die of SIGKILL: {}",
        stderr_of(&out)
    );
    assert!(rs.oom_kills() >= 1, "the kernel counted no OOM kill");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains(r#""type":"event""#) && l.contains(r#""kind":"oom-kill""#)),
        "no oom-kill event in the trace; its samples' t_ms, scope path and oom_kill:\n{}\nits events:\n{}",
        scope_looks(&text),
        text.lines()
            .filter(|l| l.contains(r#""type":"event""#))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let r = report_json(&trace);
    assert!(r["scope"]["oom_kills"].as_u64().unwrap() >= 1, "{r:#}");
    assert!(r["scope"]["first_oom_kill_ms"].is_u64(), "{r:#}");
    // Killed for not fitting, with no swap to slide into: it did not fit.
    assert_eq!(r["verdict"], "overflow", "{r:#}");
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.contains(
            "inside a 256 MiB cgroup limit; ended by the cgroup's OOM killer (1 process killed at "
        ),
        "{summary}"
    );
    // The filler the kernel killed is not listed as fitting: it carries the
    // run, and its footprint filled the limit.
    let p = heaviest_watched(&r);
    assert_eq!(p["verdict"], "overflow", "{r:#}");
    assert!(
        p["evidence"]
            .as_str()
            .unwrap()
            .contains("the cgroup's OOM killer ended the run"),
        "{p:#}"
    );
    // A cgroup that may not swap has no swap to fill, and the report says
    // a swap budget could not have been broken.
    assert_eq!(r["swap_off"], "scope-swap-off", "{r:#}");
    let forecasts = r["forecasts"].as_array().unwrap();
    assert!(
        forecasts.iter().all(|o| o["limit"] != "swap-full"),
        "{forecasts:#?}"
    );
    let text = report_text(&trace);
    assert!(
        text.contains("ended by: the cgroup's OOM killer (1 process killed at "),
        "{text}"
    );
    assert!(
        text.contains(
            "swap could not grow: the run's cgroup allows it no swap (its swap limit is 0)"
        ),
        "{text}"
    );
    eprintln!("--- report of a real cgroup OOM kill ---\n{text}");
}

/// Each sample's time, scope path and `oom_kill` count: when the recorder
/// looked into which cgroup (for a failure's message).
fn scope_looks(trace: &str) -> String {
    trace
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "sample")
        .map(|v| {
            let sc = &v["scope"];
            format!("{} {} {}", v["t_ms"], sc["path"], sc["events"]["oom_kill"])
        })
        .collect::<Vec<_>>()
        .join("\n")
}
