//! The false fit on real swap: a process filling more random memory than its
//! memory cgroup allows keeps a low footprint while its pages go to swap.
//! The report must call it a false fit, in agreement with its measured
//! `VmSwap` — and so must the detector when per-process swap is withheld
//! (`SWAPSIGHT_WITHHOLD_PROCESS_SWAP=1`, what a Mac without per-process
//! figures has). An idle, larger bystander outside the cgroup is never
//! blamed. The same process without the limit fits.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::util::*;

/// An idle process holding `mb` MiB of random bytes outside the cgroup,
/// larger than the filler's footprint; killed on drop.
struct Bystander(Child);

impl Bystander {
    fn start(mb: u64) -> Bystander {
        let code = format!(
            "import os, time\nb = bytearray(os.urandom({mb} << 20))\nprint('filled', flush=True)\ntime.sleep(600)"
        );
        let mut child = Command::new("python3")
            .args(["-c", &code])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the bystander");
        wait_filled(&mut child);
        Bystander(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads the child's stdout until its "filled" line.
fn wait_filled(child: &mut Child) {
    let out = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .expect("read stdout");
    assert_eq!(line.trim(), "filled", "unexpected output: {line:?}");
}

/// `VmSwap` of a live process, from `/proc/PID/status`: ground truth read
/// by the test itself, apart from swapsight.
fn vmswap_bytes(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("VmSwap:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// The bystander was not blamed: no report entry other than `fits`, and no
/// live flag raised for it.
fn assert_not_blamed(report: &serde_json::Value, trace_text: &str, pid: u32) {
    if let Some(q) = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["pid"] == pid)
    {
        assert_eq!(q["verdict"], "fits", "bystander blamed: {q:#}");
    }
    assert!(
        !trace_text.lines().any(|l| l.contains("\"type\":\"flag\"")
            && l.contains(&format!("\"pid\":{pid},"))
            && (l.contains("\"state\":\"false-fit\"") || l.contains("\"state\":\"overflow\""))),
        "a live flag blamed the bystander {pid}"
    );
}

#[test]
fn cgroup_limited_filler_is_a_false_fit_and_agrees_with_vmswap() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let bystander = Bystander::start(600);
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
        .args(["record", "--interval", "250ms", "--top", "1000", "-o"])
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
    // Every page of it was written to swap during the run: the kernel's
    // swap-out counter (the scope's where it counts one, else the host's)
    // grew at least as much.
    let written = r["swap_written"]["bytes"].as_u64().expect("swap written");
    assert!(
        written >= vmswap,
        "swap written {written} < VmSwap {vmswap}: {r:#}"
    );
    assert!(
        p["peak_footprint_bytes"].as_u64().unwrap() <= 300 * MIB,
        "{p:#}"
    );
    // The live detector flagged it too (a flag line in the trace), and its
    // evidence carries the process's own swap growth (VmSwap).
    let text = std::fs::read_to_string(&trace).unwrap();
    let flag = text
        .lines()
        .find(|l| {
            l.contains("\"type\":\"flag\"")
                && l.contains("\"state\":\"false-fit\"")
                && l.contains(&format!("\"pid\":{},", p["pid"]))
        })
        .expect("no live false-fit flag in the trace");
    let flag: serde_json::Value = serde_json::from_str(flag).unwrap();
    let own = flag["evidence"]["process_swap_delta_bytes"].as_i64();
    assert!(own.is_some_and(|d| d > 0), "{flag:#}");
    // Every process the detector blamed really swapped (VmSwap > 0).
    for q in r["processes"].as_array().unwrap() {
        if q["verdict"] == "false-fit" || q["verdict"] == "overflow" {
            assert!(
                q["measured_swap_peak_bytes"].as_u64().unwrap_or(0) > 0,
                "blamed without swapping: {q:#}"
            );
        }
    }
    assert_not_blamed(&r, &text, bystander.pid());
    // The report states how much of used memory the footprints explain.
    assert!(
        r["footprints"]["min_coverage"].as_f64().unwrap() > 0.0,
        "{r:#}"
    );
    let text = stdout_of(&swapsight().arg("report").arg(&trace).output().unwrap());
    assert!(
        text.contains("memory not explained by footprints"),
        "{text}"
    );
    assert!(text.contains("swap written: "), "{text}");
    eprintln!("--- report of a real false-fit run ---\n{text}");
    drop(rs);
}

/// The inference alone: per-process swap withheld, nothing watched — the
/// whole machine recorded while the filler runs beside an idle bystander.
#[test]
fn false_fit_is_found_with_per_process_swap_withheld_and_no_watched_tree() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let bystander = Bystander::start(600);
    let dir = TempDir::new("withheld");
    let trace = dir.join("withheld.jsonl");
    let mut record = swapsight()
        .args(["record", "--interval", "250ms", "--top", "1000", "-o"])
        .arg(&trace)
        .env("SWAPSIGHT_WITHHOLD_PROCESS_SWAP", "1")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));

    let fill = memfill();
    let mut filler = rs
        .command(&[
            "python3",
            fill.to_str().unwrap(),
            "--mb",
            "768",
            "--hold",
            "4",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let filler_pid = filler.id();
    wait_filled(&mut filler);
    // Ground truth, read apart from swapsight: it really is in swap.
    let vmswap = vmswap_bytes(filler_pid);
    assert!(vmswap >= 256 * MIB, "VmSwap of the filler only {vmswap}");
    wait_with_deadline(&mut filler, Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: SIGINT to the recorder we spawned, as Ctrl-C would.
    unsafe { libc::kill(record.id() as libc::pid_t, libc::SIGINT) };
    wait_with_deadline(&mut record, Duration::from_secs(30));

    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        !text.contains("\"swap_bytes\""),
        "per-process swap was not withheld"
    );
    let r = report_json(&trace);
    let p = r["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["pid"] == filler_pid)
        .unwrap_or_else(|| panic!("filler {filler_pid} not in {r:#}"));
    assert_eq!(p["verdict"], "false-fit", "{r:#}");
    assert_eq!(p["watched"], false);
    assert!(p.get("measured_swap_peak_bytes").is_none(), "{p:#}");
    assert!(
        text.lines().any(|l| l.contains("\"type\":\"flag\"")
            && l.contains("\"state\":\"false-fit\"")
            && l.contains(&format!("\"pid\":{filler_pid},"))),
        "no live false-fit flag for the filler"
    );
    assert_not_blamed(&r, &text, bystander.pid());
    let text = stdout_of(&swapsight().arg("report").arg(&trace).output().unwrap());
    eprintln!("--- report of the same run, per-process swap withheld, nothing watched ---\n{text}");
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
