//! Time to trouble and memory pressure on real swap (issue 23): a filler
//! ramping at a steady rate into swap under a capped memory cgroup is
//! forecast to cross a 512 MiB swap budget early enough and close enough,
//! and the system's PSI shows the stalls (the level leaving normal at a low
//! warning line); an idle run beside it forecasts nothing and stays at
//! normal. Needs root, a swap file and the cgroup v1
//! memory controller; never skipped under `CI=true`.

use std::path::Path;
use std::time::{Duration, Instant};

use super::util::*;

/// One sample of a trace, as the test reads it.
#[derive(Debug)]
struct Row {
    t_ms: u64,
    swap_used: u64,
    budget_s: Option<f64>,
    full_s: Option<f64>,
    some_avg10: Option<f64>,
    some_total_us: Option<u64>,
    level: Option<String>,
}

/// The samples of `trace` and the swap in use the budget counts from.
fn rows(trace: &Path) -> (Vec<Row>, u64) {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let header = lines.next().unwrap();
    let start = header["forecast"]["swap_start_bytes"].as_u64().unwrap_or(0);
    let rows = lines
        .filter(|v| v["type"] == "sample")
        .map(|v| {
            let p = &v["sys"]["pressure"];
            Row {
                t_ms: v["t_ms"].as_u64().unwrap(),
                swap_used: v["sys"]["swap_used_bytes"].as_u64().unwrap(),
                budget_s: v["forecast"]["swap_budget_s"].as_f64(),
                full_s: v["forecast"]["swap_full_s"].as_f64(),
                some_avg10: p["some"]["avg10"].as_f64(),
                some_total_us: p["some"]["total_us"].as_u64(),
                level: p["level"].as_str().map(String::from),
            }
        })
        .collect();
    (rows, start)
}

/// System PSI `some` avg10 now.
fn psi_some_avg10() -> f64 {
    let text = std::fs::read_to_string("/proc/pressure/memory").expect("PSI on this machine");
    text.lines()
        .find_map(|l| l.strip_prefix("some avg10="))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("a some line")
}

/// Waits (at most a minute) until the stalls of an earlier run have faded
/// from PSI's 10 s average, so that an idle run starts idle.
fn wait_for_calm() {
    let until = Instant::now() + Duration::from_secs(60);
    while psi_some_avg10() >= 5.0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Stall time per second of run (PSI `some` total's growth).
fn stall_ms_per_s(rows: &[Row]) -> f64 {
    let (first, last) = (rows.first().unwrap(), rows.last().unwrap());
    let stalled = last.some_total_us.unwrap() - first.some_total_us.unwrap();
    let secs = (last.t_ms - first.t_ms).max(1) as f64 / 1000.0;
    stalled as f64 / 1000.0 / secs
}

/// The argv of a filler adding 32 MiB/s on a steady schedule (8 MiB
/// chunks, light sweeps) in `rs`'s cgroup, up to 1.5 GiB.
fn steady_filler(rs: &RealSwap) -> Vec<String> {
    filler_32_mib_s(rs, "8")
}

/// [`steady_filler`] in chunks of `chunk_mb`.
fn filler_32_mib_s(rs: &RealSwap, chunk_mb: &str) -> Vec<String> {
    let fill = memfill();
    let fill = fill.to_str().unwrap();
    let args = [
        fill,
        "--mb",
        "1536",
        "--chunk-mb",
        chunk_mb,
        "--rate-mb-s",
        "32",
    ];
    let mut argv = vec!["python3"];
    argv.extend(args);
    argv.extend(["--stride-pages", "64", "--hold", "5"]);
    rs.wrap(&argv)
}

/// `guard --swap-budget 512M` at 250 ms with a 3 s pressure hold, and any
/// `extra` flags, of `cmd`, recording to `trace`.
fn guard_512m_with(
    trace: &Path,
    extra: &[&str],
    cmd: &[impl AsRef<std::ffi::OsStr>],
) -> std::process::Output {
    swapsight()
        .args(["guard", "--swap-budget", "512M", "--interval", "250ms"])
        .args(["--pressure-hold", "3s"])
        .args(extra)
        .arg("-o")
        .arg(trace)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap()
}

fn guard_512m(trace: &Path, cmd: &[impl AsRef<std::ffi::OsStr>]) -> std::process::Output {
    guard_512m_with(trace, &[], cmd)
}

#[test]
fn a_steady_filler_is_forecast_before_the_swap_budget_and_stalls_show_in_psi() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("forecast-real");

    // The idle run beside it: a guard on a command that holds nothing.
    wait_for_calm();
    let idle = dir.join("idle.jsonl");
    let out = guard_512m(&idle, &["sleep", "8"]);
    assert!(out.status.success(), "idle guard: {}", stderr_of(&out));
    let (idle_rows, _) = rows(&idle);
    assert!(idle_rows.len() >= 20, "{}", idle_rows.len());
    for r in &idle_rows {
        assert_eq!(r.budget_s, None, "idle run forecast the budget: {r:?}");
        assert_eq!(r.full_s, None, "idle run forecast swap full: {r:?}");
        assert_eq!(r.level.as_deref(), Some("normal"), "idle run: {r:?}");
    }
    let idle_stall = stall_ms_per_s(&idle_rows);

    // The filler: 32 MiB/s on a steady schedule into a 256 MiB cgroup, so
    // everything past the cap goes to swap at that rate; the guard stops it
    // on the 512 MiB budget.
    let trace = dir.join("filler.jsonl");
    // The warning line low (PSI some avg10 0.8 %): the cap stalls the filler
    // 2 % of the time, so its own run shows the level leave normal.
    let extra = ["--pressure-warn", "0.8"];
    let cmd = steady_filler(&rs);
    let (rows, crossed_ms) = budget_run_shaped(&trace, &extra, &cmd, |rows, start, crossed_ms| {
        // The pace is judged where the forecast is: at its first word under
        // 10 s (5 s before the crossing where it never said so).
        let said_at = rows
            .iter()
            .find(|r| r.budget_s.is_some_and(|s| s < 10.0))
            .map_or(crossed_ms.saturating_sub(5000), |r| r.t_ms);
        pace_held(rows, start, said_at, crossed_ms)
            .map_err(|why| format!("the filler changed pace: {why}"))
    });
    let crossed = rows.iter().find(|r| r.t_ms == crossed_ms).unwrap();
    let first = rows
        .iter()
        .find(|r| r.budget_s.is_some_and(|s| s < 10.0))
        .expect("the forecast never said under 10 s");
    let real_s = (crossed.t_ms as f64 - first.t_ms as f64) / 1000.0;
    let said_s = first.budget_s.unwrap();
    let error = (said_s - real_s) / real_s;
    let stall = stall_ms_per_s(&rows);
    let peak_some = rows.iter().filter_map(|r| r.some_avg10).fold(0.0, f64::max);
    eprintln!(
        "forecast under 10 s at {:.2} s saying {said_s:.2} s; budget crossed at {:.2} s: lead {real_s:.2} s, error {:+.0} %; PSI some avg10 {:.2} → peak {peak_some:.2}; stalled {stall:.1} ms/s (idle run {idle_stall:.1} ms/s)",
        first.t_ms as f64 / 1000.0,
        crossed.t_ms as f64 / 1000.0,
        error * 100.0,
        rows[0].some_avg10.unwrap_or(f64::NAN),
    );
    assert!(
        real_s >= 3.0,
        "fired only {real_s:.2} s before the crossing"
    );
    assert!(error.abs() <= 0.5, "said {said_s:.2} s, was {real_s:.2} s");

    // PSI `some` rises: the cap stalls the filler in reclaim, more than the
    // machine stalled while the idle run watched it.
    assert!(
        stall > 2.0 * idle_stall + 5.0,
        "stalled {stall:.1} ms/s, idle {idle_stall:.1} ms/s"
    );
    assert!(rows
        .iter()
        .all(|r| r.some_total_us.is_some() && r.level.is_some()));
    // The level left normal once PSI had stayed over the line for the 3 s
    // hold, at that very tick or the next.
    let held = held_over(&rows, 0.8, 3000).expect("PSI some avg10 never held over 0.8 %");
    let raised = rows
        .iter()
        .find(|r| r.level.as_deref() == Some("warning"))
        .expect("the level never left normal");
    eprintln!(
        "PSI over 0.8 % for 3 s at {:.2} s; level warning from {:.2} s",
        held as f64 / 1000.0,
        raised.t_ms as f64 / 1000.0
    );
    assert!(
        raised.t_ms <= held + 250,
        "raised at {} ms, held at {held} ms",
        raised.t_ms
    );
    drop(rs);
}

#[test]
fn a_filler_that_swaps_in_steps_is_flagged_and_forecast() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("steps-real");
    let trace = dir.join("steps.jsonl");
    // 40 MiB chunks at 32 MiB/s: past its 256 MiB cap each chunk goes to
    // swap at once, so swap grows a step every 1.25 s and is flat between,
    // as swap written behind other I/O grows (the 8 MiB filler beside a
    // disk flood made the same staircase): most ticks see no growth.
    // A machine too busy to allocate a chunk within a tick or two smears
    // the steps: such a run says nothing of steps, and is run again.
    let cmd = filler_32_mib_s(&rs, "40");
    let (rows, crossed_ms) = budget_run_shaped(&trace, &[], &cmd, staircase);

    // Forecast: under 10 s at least 3 s before the crossing.
    let first = rows
        .iter()
        .find(|r| r.budget_s.is_some_and(|s| s < 10.0))
        .expect("swap growing in steps was never forecast under 10 s");
    let lead = crossed_ms.saturating_sub(first.t_ms) as f64 / 1000.0;
    let said = first.budget_s.unwrap();
    eprintln!(
        "forecast under 10 s at {} ms saying {said:.2} s; crossed {lead:.2} s later",
        first.t_ms
    );
    assert!(
        lead >= 3.0,
        "said under 10 s only {lead:.2} s before the crossing"
    );
    assert!(
        (said - lead).abs() <= 0.5 * lead,
        "said {said:.2} s, was {lead:.2} s"
    );

    // Flagged: a false fit (its footprint at its 256 MiB cap of 24 GiB
    // while swap climbs), before the crossing.
    let text = std::fs::read_to_string(&trace).unwrap();
    let flagged = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "flag" && v["state"] == "false-fit")
        .expect("swap growing in steps was never flagged a false fit");
    let flagged_ms = flagged["t_ms"].as_u64().unwrap();
    eprintln!("flagged at {flagged_ms} ms: {}", flagged["message"]);
    assert!(
        flagged_ms < crossed_ms,
        "flagged at {flagged_ms} ms, crossed at {crossed_ms} ms"
    );
}

/// Whether swap grew in steps from 64 MiB grown to `crossed_ms`: at least
/// half of the intervals flat (under 256 KiB); else the series.
fn staircase(rows: &[Row], start: u64, crossed_ms: u64) -> Result<(), String> {
    let ramp: Vec<&Row> = rows
        .iter()
        .filter(|r| r.swap_used.saturating_sub(start) >= 64 * MIB && r.t_ms <= crossed_ms)
        .collect();
    let intervals = ramp.len().saturating_sub(1);
    let flat = ramp
        .windows(2)
        .filter(|w| w[1].swap_used.saturating_sub(w[0].swap_used) < MIB / 4)
        .count();
    let series: Vec<String> = ramp
        .iter()
        .map(|r| format!("{}", r.swap_used.saturating_sub(start) / MIB))
        .collect();
    let series = series.join(" ");
    eprintln!("MiB grown a tick apart: {series}");
    (intervals > 0 && flat * 2 >= intervals)
        .then_some(())
        .ok_or_else(|| format!("{flat} flat intervals of {intervals}, no staircase: {series}"))
}

/// Runs of a filler a test makes before it gives up on the shape its
/// judgement needs (a kept pace, a staircase). The steady filler keeps a
/// schedule, but on a machine busy with the tests beside it its swap can
/// change pace: in one CI run the forecast first said under 10 s at 18.5 s
/// ("9.84 s") and the budget was crossed 5 s later, at the same 23.5 s as
/// in quiet runs — the rate over its window was about half the rate that
/// followed, so true to what it had seen it was 97 % long. A linear
/// forecast is not meant to foresee that, so such a run is run again, and
/// a test judges a run whose pace held.
const STEADY_ATTEMPTS: u32 = 3;

/// Runs [`guard_512m_with`] `cmd` (stopped on the budget: exit 10) until
/// `shape` holds for its trace — given the rows, the swap they count from
/// and the crossing — at most [`STEADY_ATTEMPTS`] runs; that run's rows
/// and crossing.
fn budget_run_shaped(
    trace: &Path,
    extra: &[&str],
    cmd: &[String],
    shape: impl Fn(&[Row], u64, u64) -> Result<(), String>,
) -> (Vec<Row>, u64) {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let out = guard_512m_with(trace, extra, cmd);
        assert_eq!(out.status.code(), Some(10), "guard: {}", stderr_of(&out));
        let (rows, start) = rows(trace);
        let crossed_ms = crossed_at(&rows, start).expect("swap never crossed the budget");
        match shape(&rows, start, crossed_ms) {
            Err(why) if attempt < STEADY_ATTEMPTS => {
                eprintln!("attempt {attempt}: run again: {why}")
            }
            Err(why) => panic!("{STEADY_ATTEMPTS} runs, none of the shape needed: {why}"),
            Ok(()) => return (rows, crossed_ms),
        }
    }
}

/// When swap had first grown by the 512 MiB budget since `start`.
fn crossed_at(rows: &[Row], start: u64) -> Option<u64> {
    rows.iter()
        .find(|r| r.swap_used.saturating_sub(start) >= 512 * MIB)
        .map(|r| r.t_ms)
}

/// Whether swap kept its pace around `at_ms`: the rate of the 5 s before it
/// and the rate from it to `end_ms` within a factor 1.5 of each other (the
/// forecast extrapolates the one to say the other); else how it went.
fn pace_held(rows: &[Row], start: u64, at_ms: u64, end_ms: u64) -> Result<(), String> {
    let at = |t: u64| rows.iter().rfind(|r| r.t_ms <= t);
    let rate = |a: &Row, b: &Row| {
        let grown = b.swap_used.saturating_sub(a.swap_used) as f64 / MIB as f64;
        grown / (b.t_ms.saturating_sub(a.t_ms).max(1) as f64 / 1000.0)
    };
    let (Some(a), Some(b), Some(c)) = (at(at_ms.saturating_sub(5000)), at(at_ms), at(end_ms))
    else {
        return Err(format!("no samples around {at_ms} ms"));
    };
    let (before, after) = (rate(a, b), rate(b, c));
    let series: Vec<String> = rows
        .iter()
        .step_by(4)
        .map(|r| {
            let grown = r.swap_used.saturating_sub(start) / MIB;
            format!("{:.1}:{grown}", r.t_ms as f64 / 1000.0)
        })
        .collect();
    let held = before > 0.0 && (2.0 / 3.0..=1.5).contains(&(after / before));
    held.then_some(()).ok_or_else(|| {
        format!(
            "swap grew {before:.1} MiB/s over the 5 s before {:.2} s and {after:.1} MiB/s from \
             then to {:.2} s (s:MiB grown {})",
            at_ms as f64 / 1000.0,
            end_ms as f64 / 1000.0,
            series.join(" ")
        )
    })
}

/// When PSI `some` avg10 had first stayed at or over `line` % for `hold_ms`
/// (the tick the gauge raises the level at).
fn held_over(rows: &[Row], line: f64, hold_ms: u64) -> Option<u64> {
    let mut since = None;
    for r in rows {
        if r.some_avg10.is_some_and(|v| v >= line) {
            let s = *since.get_or_insert(r.t_ms);
            if r.t_ms - s >= hold_ms {
                return Some(r.t_ms);
            }
        } else {
            since = None;
        }
    }
    None
}

/// The guard-stop event of a trace: its time, message and code.
fn guard_stop(trace: &Path) -> (u64, String, i64) {
    let text = std::fs::read_to_string(trace).unwrap();
    let v = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "event" && v["kind"] == "guard-stop")
        .expect("a guard-stop event");
    (
        v["t_ms"].as_u64().unwrap(),
        v["message"].as_str().unwrap().to_string(),
        v["code"].as_i64().unwrap(),
    )
}

#[test]
fn stop_before_stops_the_filler_before_its_swap_budget_with_13() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("stop-before-real");
    let trace = dir.join("sb.jsonl");
    let mut attempt = 0;
    let out = loop {
        attempt += 1;
        let out = guard_512m_with(&trace, &["--stop-before", "10s"], &steady_filler(&rs));
        if out.status.code() == Some(13) || attempt == STEADY_ATTEMPTS {
            break out;
        }
        // Not stopped before the budget: run again only where the filler
        // changed pace in the 5 s before the crossing, which no linear
        // forecast foresees.
        let (rows, start) = rows(&trace);
        let Some(crossed_ms) = crossed_at(&rows, start) else {
            break out;
        };
        match pace_held(&rows, start, crossed_ms.saturating_sub(5000), crossed_ms) {
            Err(why) => eprintln!("attempt {attempt}: the filler changed pace, run again: {why}"),
            Ok(()) => break out,
        }
    };
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(13), "attempt {attempt}: {err}");
    assert!(err.contains("the forecast put the swap budget "), "{err}");
    let (stop_ms, message, code) = guard_stop(&trace);
    assert_eq!(code, 13);
    assert!(message.contains("(under 10.0s)"), "{message}");
    let (rows, start) = rows(&trace);
    let at_stop = rows.iter().rfind(|r| r.t_ms <= stop_ms).unwrap();
    let grown = at_stop.swap_used.saturating_sub(start);
    eprintln!(
        "stopped at {:.2} s with swap grown {} MiB: {message}",
        stop_ms as f64 / 1000.0,
        grown / MIB
    );
    assert!(grown < 512 * MIB, "grew {} MiB by the stop", grown / MIB);
    assert!(grown > 64 * MIB, "stopped before the filler swapped at all");
}

/// Attempts at the thrash below: the kernel's memcg v1 OOM killer ends
/// about one in four (16 reclaim rounds without progress while every page
/// in the cgroup is swap cache just read back; CI lost one at 5.7 s), which
/// says nothing of the guard, so such a run is run again.
const THRASH_ATTEMPTS: u32 = 4;

#[test]
fn stop_at_pressure_stops_a_thrashing_tree_on_real_psi_with_14() {
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("stop-pressure-real");
    let trace = dir.join("sp.jsonl");
    // Three processes sweeping every page of 64 MiB and a filler sweeping
    // every page of 768 MiB, in 256 MiB: they take turns at the swap file,
    // stalled most of the time.
    let fill = memfill();
    let fill = fill.to_str().unwrap();
    let script = format!(
        "for i in 1 2 3; do python3 {fill} --mb 64 --chunk-mb 8 --stride-pages 1 --hold 120 & done; \
         exec python3 {fill} --mb 768 --chunk-mb 8 --stride-pages 1 --hold 120"
    );
    let mut attempt = 0;
    let out = loop {
        attempt += 1;
        // From calm, so the level is the thrash's, not an earlier test's.
        wait_for_calm();
        let oom_kills = rs.oom_kills();
        let out = swapsight()
            .args([
                "guard",
                "--stop-at-pressure",
                "warning",
                "--pressure-hold",
                "3s",
            ])
            .args(["--interval", "250ms", "-o"])
            .arg(&trace)
            .arg("--")
            .args(rs.wrap(&["sh", "-c", &script]))
            .output()
            .unwrap();
        let killed = out.status.code() == Some(128 + libc::SIGKILL) && rs.oom_kills() > oom_kills;
        if !killed || attempt == THRASH_ATTEMPTS {
            break out;
        }
        eprintln!(
            "attempt {attempt}: the cgroup's OOM killer ended the thrash first: {}",
            stderr_of(&out)
        );
    };
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(14), "attempt {attempt}: {err}");
    let (stop_ms, message, code) = guard_stop(&trace);
    assert_eq!(code, 14);
    assert!(message.contains("memory pressure reached "), "{message}");
    let (rows, _) = rows(&trace);
    let at_stop = rows.iter().rfind(|r| r.t_ms <= stop_ms).unwrap();
    let level = at_stop.level.as_deref().unwrap();
    assert!(level == "warning" || level == "critical", "{at_stop:?}");
    // The level left normal on PSI: some avg10 over the 10 % line.
    let some = at_stop.some_avg10.unwrap();
    assert!(some >= 10.0, "{at_stop:?}");
    assert_eq!(rows[0].level.as_deref(), Some("normal"));
    eprintln!(
        "stopped at {:.2} s at {level}, PSI some avg10 {some:.2}: {message}",
        stop_ms as f64 / 1000.0
    );
}

/// Regression: `guard --stop-at-pressure warning` on a machine without PSI
/// ran the command unprotected and exited 0. It is refused before anything
/// starts, saying why. PSI is hidden the way a container hides it: a tmpfs
/// over /proc/pressure in a mount namespace of the test's own (root).
#[cfg(target_os = "linux")]
#[test]
fn guard_refuses_a_pressure_stop_it_cannot_keep() {
    let why_not = if !is_root() {
        Some("hiding /proc/pressure in a mount namespace needs root".to_string())
    } else if which("unshare").is_none() {
        Some("unshare (util-linux) is not installed".to_string())
    } else {
        None
    };
    if skip_unless_ci("guard without PSI", why_not).is_none() {
        return;
    }
    let dir = TempDir::new("guard-no-psi");
    let ran = dir.join("ran");
    let trace = dir.join("run.jsonl");
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount -t tmpfs none /proc/pressure && exec "$@""#)
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_swapsight"))
        .args(["guard", "--stop-at-pressure", "warning", "-o"])
        .arg(&trace)
        .args(["--", "touch"])
        .arg(&ran)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--stop-at-pressure warning needs memory pressure figures")
            && err.contains("/proc/pressure/memory"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!ran.exists(), "the command ran unprotected");
    assert!(!trace.exists(), "a trace was started");
}
