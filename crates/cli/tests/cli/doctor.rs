//! `swapsight doctor`: on Linux end to end (a real child, the real tools,
//! `--strict` passing on this machine); on a Mac, against `footprint`,
//! `vm_stat` and `sysctl vm.swapusage` (run by the `macos-14` CI job, which
//! keeps the JSON as an artifact when $SWAPSIGHT_DOCTOR_JSON names a file).

use super::util::*;

/// `swapsight doctor --json --strict` run once: its exit code and JSON,
/// written to $SWAPSIGHT_DOCTOR_JSON as well when that is set.
fn doctor_json(extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = swapsight()
        .args(["doctor", "--json", "--strict"])
        .args(extra)
        .output()
        .unwrap();
    if let Some(path) = std::env::var_os("SWAPSIGHT_DOCTOR_JSON") {
        std::fs::write(path, &out.stdout).unwrap();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor --json is not JSON ({e}): {}", stderr_of(&out)));
    (out.status.code(), v, stderr_of(&out))
}

fn row<'a>(v: &'a serde_json::Value, figure: &str, tool: &str) -> &'a serde_json::Value {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"] == figure && r["tool_name"].as_str().unwrap().starts_with(tool))
        .unwrap_or_else(|| panic!("no row {figure} / {tool} in {v:#}"))
}

#[cfg(target_os = "linux")]
#[test]
fn doctor_on_linux_agrees_with_free_ps_smaps_rollup_and_swapon() {
    // No real-swap test may move system swap between the doctor's readings.
    let _still = hold_swap_pool();
    let (code, v, err) = doctor_json(&["--child-size", "96M"]);
    assert_eq!(code, Some(0), "{err}\n{v:#}");
    assert_eq!(v["os"], "linux");
    let child = &v["child"];
    assert_eq!(child["size_bytes"], 96 << 20);
    let pid = child["pid"].as_u64().unwrap() as u32;
    // The child is gone once the doctor is.
    assert!(!pid_alive(pid), "child {pid} outlived the doctor");
    for (figure, tool) in [
        ("memory total", "free -b"),
        ("free memory (available)", "free -b"),
        ("free memory (available)", "/proc/meminfo"),
        ("used memory", "free -b"),
        ("swap used", "free -b"),
        ("swap used", "swapon"),
        ("child footprint + swap", "allocated"),
        ("child footprint", "smaps_rollup"),
        ("child footprint", "ps -o rss"),
        ("child swap", "/proc/PID/status"),
        ("child swap", "smaps_rollup"),
    ] {
        let r = row(&v, figure, tool);
        assert_eq!(r["status"], "ok", "{r:#}");
    }
    // The child's footprint is what it touched, within the stated slack.
    let fp = row(&v, "child footprint", "smaps_rollup")["swapsight"]
        .as_f64()
        .unwrap();
    assert!(
        (96.0 * 1048576.0..=104.0 * 1048576.0).contains(&fp),
        "child footprint {fp}"
    );
    assert!(
        v["rows"].as_array().unwrap().iter().any(|r| r["figure"]
            .as_str()
            .unwrap()
            .starts_with("largest process: ")),
        "{v:#}"
    );

    // The table a person reads: the same verdicts, exit 0 under --strict.
    let out = swapsight()
        .args(["doctor", "--strict", "--child-size", "32M"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr_of(&out));
    assert!(text.starts_with("swapsight doctor on "), "{text}");
    assert!(text.contains("figure "), "{text}");
    assert!(text.contains(" 0 off, "), "{text}");
    assert!(
        !text.contains(|c: char| c.is_control() && c != '\n'),
        "{text:?}"
    );
}

/// The doctor inside a 96 MiB memory cgroup with real swap: its 192 MiB
/// child goes half to swap, so the child's `VmSwap` rows compare real
/// figures, the allocation row holds only with swap counted, and system
/// swap moves while the tools read it. `--strict` still passes.
#[cfg(target_os = "linux")]
#[test]
fn doctor_on_real_swap_agrees_on_the_childs_swap() {
    let Some(swap) = RealSwap::new(512, 96) else {
        return;
    };
    let exe = env!("CARGO_BIN_EXE_swapsight");
    let out = swap
        .command(&[exe, "doctor", "--json", "--strict", "--child-size", "192M"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr_of(&out)));
    assert_eq!(out.status.code(), Some(0), "{}\n{v:#}", stderr_of(&out));
    let vm_swap = row(&v, "child swap", "/proc/PID/status");
    assert_eq!(vm_swap["status"], "ok", "{vm_swap:#}");
    let swapped = vm_swap["tool"].as_f64().unwrap();
    assert!(
        swapped > 32.0 * 1048576.0,
        "the child barely swapped: {v:#}"
    );
    assert_eq!(row(&v, "child swap", "smaps_rollup")["status"], "ok");
    let owned = row(&v, "child footprint + swap", "allocated");
    assert_eq!(owned["status"], "ok", "{owned:#}");
    for tool in ["free -b", "swapon"] {
        let r = row(&v, "swap used", tool);
        assert_eq!(r["status"], "ok", "{r:#}");
        // The child may still be going out to swap while the tools run: its
        // VmSwap is read after the first system reading, before the second.
        assert!(r["swapsight_after"].as_f64().unwrap() >= swapped, "{r:#}");
    }
}

/// As another user (`nobody`), the largest process is root's: its row is
/// unreadable and says why, the largest one `nobody` may read is compared
/// instead, and `--strict` still passes (unreadable is not off).
#[cfg(target_os = "linux")]
#[test]
fn doctor_as_another_user_names_the_process_it_cannot_read() {
    let why_not = if !is_root() {
        Some("running as nobody needs root".to_string())
    } else if which("setpriv").is_none() {
        Some("setpriv (util-linux) is not installed".to_string())
    } else {
        None
    };
    if skip_unless_ci("doctor as nobody", why_not).is_none() {
        return;
    }
    let _still = hold_swap_pool();
    // A copy nobody may run, in a folder nobody may enter.
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("doctor-nobody");
    let exe = dir.join("swapsight");
    std::fs::copy(env!("CARGO_BIN_EXE_swapsight"), &exe).unwrap();
    for (p, mode) in [(dir.path(), 0o755), (exe.as_path(), 0o755)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    // A child forked by another test while the copy was open for writing
    // holds that descriptor until it execs: the exec then fails with "Text
    // file busy" for a moment.
    let run = || {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&exe)
            .args(["doctor", "--json", "--strict", "--child-size", "32M"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let mut out = run();
    for _ in 0..50 {
        if !stderr_of(&out).contains("Text file busy") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        out = run();
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let named = |prefix: &str| {
        rows.iter()
            .find(|r| r["figure"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} row in {v:#}"))
    };
    let largest = named("largest process: ");
    assert_eq!(largest["status"], "unreadable", "{largest:#}");
    let note = largest["note"].as_str().unwrap();
    assert!(
        note.contains("is another user's process") && note.contains("needs root"),
        "{note}"
    );
    assert_eq!(named("largest readable process: ")["status"], "ok", "{v:#}");
    assert_eq!(row(&v, "child footprint", "smaps_rollup")["status"], "ok");
}

/// Regression: with `PATH=/tmp/u2bin:/usr/bin`, a `ps` planted there (as
/// root: owned by another user, in a folder they own) ran as the doctor's
/// user, and its row read "ok". The doctor now runs each tool from the path
/// its OS installs it at and says which binary answered.
#[cfg(target_os = "linux")]
#[test]
fn doctor_never_runs_a_tool_found_on_path() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("doctor-planted");
    let marker = dir.join("ran");
    for tool in ["free", "ps", "swapon", "uname"] {
        let p = dir.join(tool);
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho {tool} >> {}\necho 1\n", marker.display()),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        if is_root() {
            std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        }
    }
    if is_root() {
        std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let out = swapsight()
        .args(["doctor", "--json", "--child-size", "32M"])
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", dir.path().display()),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        !marker.exists(),
        "a planted tool ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = v["tools"].as_array().unwrap();
    for name in ["free", "ps", "swapon"] {
        let t = tools
            .iter()
            .find(|t| t["tool"] == name)
            .unwrap_or_else(|| panic!("{name} not among the tools: {v:#}"));
        let path = t["path"].as_str().unwrap();
        assert!(
            ["/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"]
                .iter()
                .any(|d| path.starts_with(d)),
            "{t}"
        );
    }
    assert_eq!(row(&v, "swap used", "swapon")["status"], "ok", "{v:#}");
}

#[test]
fn doctor_refuses_a_child_that_would_not_fit() {
    for (size, says) in [
        ("4P", "more than half of this machine's"),
        ("-1G", "must be positive"),
        ("1K", "at least 4K"),
    ] {
        let out = swapsight()
            .args(["doctor", "--child-size", size])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{size}: {err}");
        assert!(err.contains(says), "{size}: {err}");
        assert!(stdout_of(&out).is_empty());
    }
}

#[test]
fn doctor_help_teaches_with_examples() {
    let out = swapsight().args(["doctor", "--help"]).output().unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success());
    for needle in [
        "--child-size",
        "--strict",
        "--json",
        "Examples:",
        "swapsight doctor --json > doctor.json",
        "docs/doctor.md",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let top = stdout_of(&swapsight().arg("--help").output().unwrap());
    assert!(top.contains("doctor"), "{top}");
}

/// On a Mac, by itself: the child's footprint against `footprint` within
/// ±5 %, used memory against `vm_stat` (Activity Monitor's formula) within
/// ±5 %, swap used equal to `sysctl vm.swapusage` (to its two decimals),
/// free memory equal to `vm_stat`'s free + speculative pages (the kernel's
/// `free_count`) and the kernel's level equal to `memory_pressure`'s; swap
/// written against `vm_stat`'s "Swapouts", and where the Mac gives them the
/// GPU's in-use memory against `ioreg -c IOAccelerator` and its wired limit
/// against `sysctl iogpu.wired_limit_mb`. Rows are named through the
/// doctor's own constants: a rename breaks `scripts/check-macos` on Linux.
#[cfg(target_os = "macos")]
#[test]
fn doctor_on_macos_agrees_with_footprint_vm_stat_and_swapusage() {
    use swapsight::doctor::names as n;
    let (code, v, err) = doctor_json(&[]);
    assert_eq!(code, Some(0), "{err}\n{v:#}");
    assert_eq!(v["os"], "macos");
    let within = |r: &serde_json::Value, pct: f64| {
        let (s, t) = (r["swapsight"].as_f64(), r["tool"].as_f64());
        let (s, t) = (
            s.expect("swapsight's figure"),
            t.expect("the tool's figure"),
        );
        assert!((s - t).abs() <= t.abs() * pct / 100.0, "{r:#}");
    };
    within(row(&v, n::CHILD_FOOTPRINT, n::FOOTPRINT), 5.0);
    within(row(&v, n::USED_MEMORY, n::VM_STAT_USED), 5.0);
    let swap = row(&v, n::SWAP_USED, n::SWAPUSAGE_USED);
    let d = swap["difference"].as_f64().unwrap().abs();
    // vm.swapusage prints two decimals of M or G: equal up to that.
    assert!(d <= swap["tolerance"]["abs"].as_f64().unwrap(), "{swap:#}");
    assert_eq!(swap["status"], "ok", "{swap:#}");
    for (figure, tool) in [
        (n::FREE_MEMORY, n::VM_STAT_FREE),
        (n::AVAILABLE, n::MEMORY_PRESSURE),
        (n::SWAP_WRITTEN, n::VM_STAT_SWAPOUTS),
    ] {
        let r = row(&v, figure, tool);
        assert_eq!(r["status"], "ok", "{r:#}");
    }
    // The GPU's rows: a runner without an Apple GPU (or before macOS 14,
    // for the limit) has neither side; where the tool has a figure,
    // swapsight must have it too, and agree.
    for (figure, tool) in [
        (n::GPU_IN_USE, n::IOREG_IN_USE),
        (n::GPU_ALLOC, n::IOREG_ALLOC),
        (n::GPU_WIRED_LIMIT, n::SYSCTL_WIRED_LIMIT),
    ] {
        let r = row(&v, figure, tool);
        if r["tool"].is_number() {
            assert_eq!(r["status"], "ok", "{r:#}");
        } else {
            assert_eq!(r["status"], "unreadable", "{r:#}");
        }
    }
    // Every tool that answered is the system's own, by absolute path.
    for t in v["tools"].as_array().unwrap() {
        let path = t["path"].as_str().unwrap();
        assert!(
            path.starts_with("/usr/bin/") || path.starts_with("/usr/sbin/"),
            "{t}"
        );
    }
}
