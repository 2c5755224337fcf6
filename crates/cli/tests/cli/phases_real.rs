//! The whole path on real swap: a shell pipeline under `swapsight record`
//! marks three phases; only the middle one runs in a capped memory cgroup
//! and fills more than the cap, so its pages go to swap. `report` gives
//! three phase rows with the swap growth in the middle one only, `compare`
//! sets the run beside a control run without the cap, and the Perfetto
//! export holds the three phases as slices.

use super::util::*;

/// The pipeline: `prepare`, `fill` (the filler, in the cgroup when `cgroup`
/// is given), `finish`.
fn pipeline(cgroup: Option<&std::path::Path>) -> String {
    let fill = memfill();
    let filler = format!("python3 '{}' --mb 768 --hold 4", fill.display());
    let fill_cmd = match cgroup {
        Some(cg) => format!(
            "sh -c 'echo $$ > {}/cgroup.procs && exec {}'",
            cg.display(),
            filler.replace('\'', "\"")
        ),
        None => filler,
    };
    format!(
        "echo prepare > \"$SWAPSIGHT_MARK\"; sleep 3; \
         echo fill > \"$SWAPSIGHT_MARK\"; {fill_cmd} > /dev/null; \
         echo finish > \"$SWAPSIGHT_MARK\"; sleep 3"
    )
}

fn record(dir: &TempDir, name: &str, script: &str) -> std::path::PathBuf {
    let trace = dir.join(name);
    let rt = dir.join("runtime");
    std::fs::create_dir_all(&rt).unwrap();
    let out = swapsight()
        .env("XDG_RUNTIME_DIR", &rt)
        .args(["record", "--interval", "250ms", "--top", "20", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(out.status.success(), "record failed: {}", stderr_of(&out));
    trace
}

#[test]
fn three_marked_phases_on_real_swap_report_compare_and_perfetto() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("phases-real");
    let capped = record(&dir, "capped.jsonl", &pipeline(Some(&rs.cgroup)));
    let control = record(&dir, "control.jsonl", &pipeline(None));
    drop(rs);

    // report: three rows, the swap growth in the middle one only.
    let r = report_json(&capped);
    let rows = r["phases"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["prepare", "fill", "finish"], "{r:#}");
    let tolerance = r["swap_tolerance_bytes"].as_i64().unwrap();
    let growth = |i: usize| rows[i]["swap_growth_bytes"].as_i64().unwrap();
    assert!(growth(0) < tolerance, "{:#}", rows[0]);
    assert!(growth(1) >= 256 * MIB as i64, "{:#}", rows[1]);
    assert!(growth(2) < tolerance, "{:#}", rows[2]);
    let verdicts: Vec<&str> = rows
        .iter()
        .map(|p| p["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["fits", "false-fit", "fits"], "{r:#}");
    assert_eq!(r["verdict"], "false-fit");
    // The watched tree's footprint stayed under the cap while it swapped.
    assert!(rows[1]["peak_footprint_bytes"].as_u64().unwrap() <= 320 * MIB);
    let text = stdout_of(&swapsight().arg("report").arg(&capped).output().unwrap());
    assert!(text.contains("\nby phase:\n"), "{text}");
    println!("$ swapsight report capped.jsonl\n{text}");

    // The control run fits throughout.
    let c = report_json(&control);
    let cv: Vec<&str> = c["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(cv, ["fits", "fits", "fits"], "{c:#}");

    // compare: the table and a chart.
    let png = dir.join("compare.png");
    let out = swapsight()
        .arg("compare")
        .arg(&capped)
        .arg(&control)
        .args(["--format", "md", "--plot"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let md = stdout_of(&out);
    let lines: Vec<&str> = md.lines().collect();
    assert!(
        lines[2].starts_with("| capped |") && lines[2].contains("| false fit |"),
        "{md}"
    );
    assert!(
        lines[3].starts_with("| control |") && lines[3].contains("| fits |"),
        "{md}"
    );
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    println!("$ swapsight compare capped.jsonl control.jsonl --format md\n{md}");
    if let Ok(keep) = std::env::var("SWAPSIGHT_KEEP_PICTURE") {
        std::fs::copy(&png, keep).unwrap();
    }

    // Perfetto, read back: three slices on the phases track.
    let out = swapsight()
        .args(["export", "--format", "perfetto"])
        .arg(&capped)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let slices: Vec<&str> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == 1)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(slices, ["prepare", "fill", "finish"]);
}
