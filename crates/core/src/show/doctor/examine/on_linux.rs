//! The doctor on Linux: what `free`, `smaps_rollup`, `/proc/PID/status`
//! and `swapon` say, read between the two probe samples, and the rows
//! comparing them with swapsight's figures.

use super::*;

pub(super) struct LinuxRead {
    pub(super) free: Reading<linux::Free>,
    pub(super) meminfo: Reading<linux_parse::MemInfo>,
    pub(super) swapon: Reading<linux::Swapon>,
    pub(super) child_rollup: Reading<Rollup>,
    pub(super) child_status: Reading<StatusFigures>,
    pub(super) child_rss: Reading<u64>,
    /// The largest process, then (if that one is unreadable) the largest
    /// readable one: `smaps_rollup` and `status` of each.
    pub(super) procs: Vec<(Pick, Reading<(Rollup, StatusFigures)>)>,
}

/// `/proc/PID/smaps_rollup`, with the reason a person can act on when the
/// kernel says no.
pub(super) fn read_rollup(pid: u32) -> Reading<Rollup> {
    let path = format!("/proc/{pid}/smaps_rollup");
    match std::fs::read(&path) {
        Ok(b) => match linux::parse_smaps_rollup(&String::from_utf8_lossy(&b)) {
            Some(r) => Reading::Value(r),
            None => Reading::Unreadable(format!("cannot read {path}: unexpected content")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Reading::Unreadable(format!(
            "pid {pid} is another user's process: {path} needs root"
        )),
        Err(e) => Reading::Unreadable(format!("cannot read {path}: {e}")),
    }
}

pub(super) fn read_status(pid: u32) -> Reading<StatusFigures> {
    read_file(&format!("/proc/{pid}/status")).map(|t| linux_parse::parse_status(t.as_bytes()))
}

pub(super) fn read_linux(ctx: &mut Ctx, child: u32, procs: &[ProcessSample]) -> LinuxRead {
    let pid = child.to_string();
    let mut read = LinuxRead {
        free: ctx.parsed("free", &["-b"], linux::parse_free),
        meminfo: read_file("/proc/meminfo").and_then(|t| {
            match linux_parse::parse_meminfo(t.as_bytes()) {
                Some(m) => Reading::Value(m),
                None => Reading::Unreadable("cannot read /proc/meminfo".into()),
            }
        }),
        swapon: ctx.parsed(
            "swapon",
            &["--show=SIZE,USED", "--bytes", "--noheadings"],
            linux::parse_swapon,
        ),
        child_rollup: read_rollup(child),
        child_status: read_status(child),
        child_rss: ctx.parsed("ps", &["-o", "rss=", "-p", &pid], linux::parse_ps_rss),
        procs: Vec::new(),
    };
    // The largest process; when the kernel will not show it, also the
    // largest one it will (at most 50 looked at).
    for p in by_footprint(procs, child).into_iter().take(50) {
        let pick = Pick {
            pid: p.pid,
            name: p.name.to_string(),
            what: if read.procs.is_empty() {
                "largest process"
            } else {
                "largest readable process"
            },
        };
        let got = read_rollup(p.pid).and_then(|r| read_status(p.pid).map(|s| (r, s)));
        let readable = matches!(got, Reading::Value(_));
        read.procs.push((pick, got));
        if readable {
            break;
        }
        if read.procs.len() > 1 {
            read.procs.pop();
        }
    }
    read
}

const ANON_SHMEM: &str = "smaps_rollup (Anonymous + RssShmem)";

pub(super) fn rows_linux(read: &LinuxRead, child: ChildInfo, a: &Snap, b: &Snap) -> Vec<Row> {
    let row = |figure, tool_name, swapsight, tool, tolerance| {
        judge(figure, tool_name, Unit::Bytes, swapsight, tool, tolerance)
    };
    let f = read.free.clone();
    // (total, available) of free -b: procps before 3.3.10 has no available.
    let available = f.clone().and_then(|f| match f.mem_available {
        Some(v) => Reading::Value((f.mem_total, v)),
        None => Reading::Unreadable("free -b has no available column".into()),
    });
    let total = Reading::Value(Bracket::once(a.0.phys_bytes as f64));
    let free = sys_bracket(a, b, |s| s.free_bytes() as f64);
    let used = sys_bracket(a, b, |s| s.used_bytes() as f64);
    let swap_used = sys_bracket(a, b, |s| s.swap_used_bytes as f64);
    let swap_total = sys_bracket(a, b, |s| s.swap_total_bytes as f64);
    let footprint = proc_bracket(a, b, child.pid, |p| Some(p.footprint_bytes));
    let swapped = proc_bracket(a, b, child.pid, |p| p.swap_bytes);
    // smaps_rollup's Anonymous walks the page tables; the probe's RssAnon
    // is the kernel's running count of the same pages. Shared memory is
    // in swapsight's footprint but not in Anonymous: it is taken from
    // status's RssShmem.
    let anon_shmem =
        |r: &Rollup, s: &StatusFigures| r.anonymous.saturating_add(s.rss_shmem_bytes) as f64;
    let child_anon = read
        .child_rollup
        .clone()
        .and_then(|r| read.child_status.clone().map(|s| anon_shmem(&r, &s)));
    let child_vm_swap = read
        .child_status
        .clone()
        .and_then(|s| match s.vm_swap_bytes {
            Some(v) => Reading::Value(v as f64),
            None => Reading::Unreadable("no VmSwap line".into()),
        });
    // Free memory moves with every allocation on the machine: a few MB
    // and a little share of it between two reads are noise.
    let moving = Tolerance::new(16.0 * MIB, 0.5);
    let swap = Tolerance::new(4.0 * MIB, 0.5);
    let exact = Tolerance::new(0.0, 0.0);
    // RSS also counts the binary and libraries mapped from files.
    let rss_slack = Tolerance::new(16.0 * MIB, 2.0);
    let free_total = f.clone().map(|f| f.mem_total as f64);
    let free_available = available.clone().map(|(_, v)| v as f64);
    let meminfo_available = read.meminfo.clone().map(|m| m.mem_available_bytes as f64);
    // procps-ng 4 prints used as total − available, 3.3 as total − free −
    // buffers − cache: the row takes total − available from free's own
    // columns, the meaning swapsight's used memory has.
    let free_used = available.map(|(t, v)| t.saturating_sub(v) as f64);
    let free_swap = f.map(|f| f.swap_used as f64);
    let swapon_used = read.swapon.clone().map(|s| s.used as f64);
    let swapon_size = read.swapon.clone().map(|s| s.size as f64);
    let ps_rss = bytes(read.child_rss.clone());
    let rollup_swap = read.child_rollup.clone().map(|r| r.swap as f64);
    let (one_mib, page_slack) = (Tolerance::new(MIB, 0.0), Tolerance::new(64.0 * 1024.0, 0.0));
    // One row a line: a table reads better than rustfmt's columns.
    #[rustfmt::skip]
    let mut rows = vec![
        row("memory total", "free -b (total)", total, free_total, exact),
        row("free memory (available)", "free -b (available)", free.clone(), free_available, moving),
        row("free memory (available)", "/proc/meminfo (MemAvailable)", free, meminfo_available, moving),
        row("used memory", "free -b (total − available)", used, free_used, moving),
        row("swap used", "free -b (swap used)", swap_used.clone(), free_swap, swap),
        row("swap used", "swapon --show (USED, summed)", swap_used, swapon_used, swap),
        row("swap total", "swapon --show (SIZE, summed)", swap_total, swapon_size, page_slack),
        allocated_row(a, b, child, "child footprint + swap"),
        row("child footprint", ANON_SHMEM, footprint.clone(), child_anon, Tolerance::new(MIB, 1.0)),
        row("child footprint", "ps -o rss (also counts mapped files)", footprint, ps_rss, rss_slack),
        row("child swap", "/proc/PID/status (VmSwap)", swapped.clone(), child_vm_swap, one_mib),
        row("child swap", "smaps_rollup (Swap)", swapped, rollup_swap, one_mib),
    ];
    rows.extend(largest_rows(&read.procs, a, b, ANON_SHMEM, |(r, s)| {
        (anon_shmem(r, s), Tolerance::new(4.0 * MIB, 2.0))
    }));
    rows
}

pub(super) fn linux_version() -> (String, String) {
    let os = read_file("/etc/os-release")
        .ok()
        .and_then(|t| linux::parse_os_release(&t))
        .unwrap_or_else(|| "Linux".into());
    let kernel = read_file("/proc/sys/kernel/osrelease")
        .ok()
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    (os, kernel)
}
