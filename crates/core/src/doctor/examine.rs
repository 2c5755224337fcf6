//! The doctor's run: the child, a probe sample, the tools, a second probe
//! sample, then the rows. The tools run between the two samples, so a
//! figure that moved while they read it is judged against both of
//! swapsight's readings (see [`super::Bracket`]).
//!
//! Both platforms' readers are plain Rust over files and tools, compiled
//! everywhere; which one runs is chosen at run time by the OS.

use std::time::{Duration, Instant};

use super::child::Held;
use super::linux::{self, Rollup};
use super::macos;
use super::tools::{self, Outcome};
use super::{info, judge, Bracket, ChildInfo, MissingTool, Reading, Report, Row, Tolerance, Unit};
use crate::probe::linux::parse::{self as linux_parse, StatusFigures};
use crate::probe::{Probe, ProbeError, ProcessSample, SystemSample};

const MIB: f64 = 1048576.0;

/// Longest the child may take to touch its memory: on a machine already
/// swapping, writing 256 MiB can take a while, and it is not a tool.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// What the doctor is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Memory the child maps and touches.
    pub child_size: u64,
    /// Longest a tool may take.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            child_size: 256 << 20,
            timeout: tools::TIMEOUT,
        }
    }
}

/// Why the doctor could not run at all (a tool that fails is a row, not
/// this).
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error("cannot start the child that holds {}", super::format_bytes(*size as f64))]
    Child {
        size: u64,
        #[source]
        source: std::io::Error,
    },
}

/// One probe sample: the system and the processes.
type Snap = (SystemSample, Vec<ProcessSample>);

/// Runs the doctor with `probe` (the native one, or a scripted one in
/// tests) against this machine's own tools.
pub fn examine(probe: &mut dyn Probe, opts: &Options) -> Result<Report, DoctorError> {
    let held =
        Held::spawn(opts.child_size, CHILD_TIMEOUT).map_err(|source| DoctorError::Child {
            size: opts.child_size,
            source,
        })?;
    let child = ChildInfo {
        pid: held.pid(),
        size_bytes: held.size(),
    };
    let mut ctx = Ctx {
        timeout: opts.timeout,
        missing: Vec::new(),
    };
    let a = probe.sample()?;
    let start = Instant::now();
    let since = |start: Instant| start.elapsed().as_millis().try_into().unwrap_or(u64::MAX);
    let (rows, span_ms, (os_version, kernel)) = if cfg!(target_os = "macos") {
        let read = read_macos(&mut ctx, child.pid, &a.1);
        let b = probe.sample()?;
        let span = since(start);
        (
            rows_macos(&read, child, &a, &b),
            span,
            macos_version(&mut ctx),
        )
    } else {
        let read = read_linux(&mut ctx, child.pid, &a.1);
        let b = probe.sample()?;
        let span = since(start);
        (rows_linux(&read, child, &a, &b), span, linux_version())
    };
    drop(held);
    Ok(Report {
        os: std::env::consts::OS.into(),
        os_version,
        kernel,
        child: Some(child),
        rows,
        missing_tools: ctx.missing,
        span_ms,
    })
}

/// Runs tools, noting each missing one once.
struct Ctx {
    timeout: Duration,
    missing: Vec<MissingTool>,
}

impl Ctx {
    fn run(&mut self, name: &str, args: &[&str]) -> Reading<String> {
        match tools::run(name, args, self.timeout) {
            Outcome::Output(s) => Reading::Value(s),
            Outcome::Missing => {
                if !self.missing.iter().any(|m| m.tool == name) {
                    self.missing.push(MissingTool {
                        tool: name.into(),
                        why: "not found in $PATH, /usr/bin, /bin, /usr/sbin or /sbin".into(),
                    });
                }
                Reading::Unreadable(format!("{name} is not installed"))
            }
            Outcome::Failed(why) => Reading::Unreadable(why),
        }
    }

    /// A tool's output through `parse`; output it cannot read is named.
    fn parsed<T>(
        &mut self,
        name: &str,
        args: &[&str],
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Reading<T> {
        self.run(name, args).and_then(|text| match parse(&text) {
            Some(v) => Reading::Value(v),
            None => Reading::Unreadable(format!("cannot read {name}'s output")),
        })
    }
}

/// A process picked for a per-process row.
#[derive(Debug, Clone)]
struct Pick {
    pid: u32,
    name: String,
    /// `largest process`, `largest readable process`.
    what: &'static str,
}

impl Pick {
    fn label(&self) -> String {
        format!("{}: {} (pid {})", self.what, self.name, self.pid)
    }
}

/// Processes by footprint, largest first, without the child.
fn by_footprint(procs: &[ProcessSample], child: u32) -> Vec<&ProcessSample> {
    let mut v: Vec<&ProcessSample> = procs.iter().filter(|p| p.pid != child).collect();
    v.sort_by_key(|p| std::cmp::Reverse(p.footprint_bytes));
    v
}

fn sys_bracket(a: &Snap, b: &Snap, f: impl Fn(&SystemSample) -> f64) -> Reading<Bracket> {
    Reading::Value(Bracket::new(f(&a.0), f(&b.0)))
}

/// A process's figure in both samples (the first alone if it is gone from
/// the second).
fn proc_bracket(
    a: &Snap,
    b: &Snap,
    pid: u32,
    f: impl Fn(&ProcessSample) -> Option<u64>,
) -> Reading<Bracket> {
    fn find(s: &Snap, pid: u32) -> Option<&ProcessSample> {
        s.1.iter().find(|p| p.pid == pid)
    }
    let Some(pa) = find(a, pid) else {
        return Reading::Unreadable(format!("pid {pid} is not in swapsight's sample"));
    };
    if !pa.readable {
        return Reading::Unreadable(format!(
            "pid {pid} is another user's process: macOS shows its figures only to root"
        ));
    }
    let Some(va) = f(pa) else {
        return Reading::Unreadable("swapsight has no such figure for this process".into());
    };
    let vb = find(b, pid)
        .filter(|p| p.readable)
        .and_then(&f)
        .unwrap_or(va);
    Reading::Value(Bracket::new(va as f64, vb as f64))
}

fn bytes(r: Reading<u64>) -> Reading<f64> {
    r.map(|v| v as f64)
}

fn opt(v: Option<u64>, what: &str) -> Reading<f64> {
    match v {
        Some(v) => Reading::Value(v as f64),
        None => Reading::Unreadable(format!("{what} is out of range")),
    }
}

/// The allocation row: what the child owns against what it mapped. On
/// Linux that is its footprint plus `VmSwap` (swapped pages leave a Linux
/// footprint); on macOS the footprint alone, which keeps compressed and
/// swapped pages. The child also holds its share of the parent's pages and
/// its stack: the slack.
fn allocated_row(a: &Snap, b: &Snap, child: ChildInfo, figure: &str) -> Row {
    judge(
        figure,
        "allocated by the doctor",
        Unit::Bytes,
        proc_bracket(a, b, child.pid, |p| Some(p.owned_bytes())),
        Reading::Value(child.size_bytes as f64),
        Tolerance::new(8.0 * MIB, 2.0),
    )
}

/// The rows of the largest (readable) processes: their footprint against
/// the tool's figure.
fn largest_rows<T>(
    procs: &[(Pick, Reading<T>)],
    a: &Snap,
    b: &Snap,
    tool_name: &str,
    value: impl Fn(&T) -> (f64, Tolerance),
) -> Vec<Row> {
    let base = Tolerance::new(4.0 * MIB, 2.0);
    procs
        .iter()
        .map(|(pick, got)| {
            let (tool, tolerance) = match got {
                Reading::Value(v) => {
                    let (v, t) = value(v);
                    (Reading::Value(v), t)
                }
                Reading::Unreadable(w) => (Reading::Unreadable(w.clone()), base),
            };
            judge(
                &pick.label(),
                tool_name,
                Unit::Bytes,
                proc_bracket(a, b, pick.pid, |p| Some(p.footprint_bytes)),
                tool,
                tolerance,
            )
        })
        .collect()
}

// ---- Linux ----

struct LinuxRead {
    free: Reading<linux::Free>,
    meminfo: Reading<linux_parse::MemInfo>,
    swapon: Reading<linux::Swapon>,
    child_rollup: Reading<Rollup>,
    child_status: Reading<StatusFigures>,
    child_rss: Reading<u64>,
    /// The largest process, then (if that one is unreadable) the largest
    /// readable one: `smaps_rollup` and `status` of each.
    procs: Vec<(Pick, Reading<(Rollup, StatusFigures)>)>,
}

fn read_file(path: &str) -> Reading<String> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Reading::Unreadable(format!("cannot read {path}: {e}")),
    };
    let mut text = String::new();
    match file.take(tools::MAX_OUTPUT).read_to_string(&mut text) {
        Ok(_) => Reading::Value(text),
        Err(e) => Reading::Unreadable(format!("cannot read {path}: {e}")),
    }
}

/// `/proc/PID/smaps_rollup`, with the reason a person can act on when the
/// kernel says no.
fn read_rollup(pid: u32) -> Reading<Rollup> {
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

fn read_status(pid: u32) -> Reading<StatusFigures> {
    read_file(&format!("/proc/{pid}/status")).map(|t| linux_parse::parse_status(t.as_bytes()))
}

fn read_linux(ctx: &mut Ctx, child: u32, procs: &[ProcessSample]) -> LinuxRead {
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
            name: p.name.clone(),
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

fn rows_linux(read: &LinuxRead, child: ChildInfo, a: &Snap, b: &Snap) -> Vec<Row> {
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

fn linux_version() -> (String, String) {
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

// ---- macOS ----

struct MacRead {
    memsize: Reading<u64>,
    vm_stat: Reading<macos::VmStat>,
    swapusage: Reading<macos::SwapUsage>,
    pressure: Reading<f64>,
    child_footprint: Reading<macos::Printed>,
    child_top: Reading<macos::Printed>,
    /// The largest readable process, with `footprint`'s figure.
    procs: Vec<(Pick, Reading<macos::Printed>)>,
    /// How many processes belong to other users (unreadable without root).
    others: usize,
}

/// `footprint`'s figure of `pid`: its JSON, written to a file in a fresh
/// private folder, else its text (`-f bytes`).
fn footprint_of(ctx: &mut Ctx, pid: u32) -> Reading<macos::Printed> {
    let dir = std::env::temp_dir().join(format!(
        "swapsight-doctor-{}-{pid}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    let made = {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&dir)
    };
    let json = dir.join("footprint.json");
    let json_arg = json.to_string_lossy().into_owned();
    let pid_arg = pid.to_string();
    let out = if made.is_ok() {
        ctx.run("footprint", &["-f", "bytes", "-j", &json_arg, &pid_arg])
    } else {
        ctx.run("footprint", &["-f", "bytes", &pid_arg])
    };
    let from_json = read_file(&json_arg)
        .ok()
        .and_then(|j| macos::parse_footprint_json(&j, pid));
    let _ = std::fs::remove_file(&json);
    let _ = std::fs::remove_dir(&dir);
    if let Some(bytes) = from_json {
        return Reading::Value(macos::Printed {
            bytes,
            resolution: 1,
        });
    }
    out.and_then(|text| match macos::parse_footprint_text(&text, pid) {
        Some(p) => Reading::Value(p),
        None => Reading::Unreadable("cannot read footprint's output".into()),
    })
}

fn read_macos(ctx: &mut Ctx, child: u32, procs: &[ProcessSample]) -> MacRead {
    let pid = child.to_string();
    let mut read = MacRead {
        memsize: ctx.parsed("sysctl", &["-n", "hw.memsize"], macos::parse_sysctl_u64),
        vm_stat: ctx.parsed("vm_stat", &[], macos::parse_vm_stat),
        swapusage: ctx.parsed("sysctl", &["vm.swapusage"], macos::parse_swapusage),
        pressure: ctx.parsed("memory_pressure", &[], macos::parse_memory_pressure),
        child_footprint: footprint_of(ctx, child),
        child_top: ctx.parsed(
            "top",
            &["-l", "1", "-stats", "pid,mem", "-pid", &pid],
            |t| macos::parse_top_mem(t, child),
        ),
        procs: Vec::new(),
        others: 0,
    };
    // Other users' processes: macOS shows their footprint only to root, so
    // swapsight lists them at 0 and they cannot be ranked; the largest
    // readable one is compared.
    read.others = procs.iter().filter(|p| !p.readable).count();
    if let Some(p) = by_footprint(procs, child).into_iter().find(|p| p.readable) {
        let got = footprint_of(ctx, p.pid);
        read.procs.push((
            Pick {
                pid: p.pid,
                name: p.name.clone(),
                what: "largest readable process",
            },
            got,
        ));
    }
    read
}

/// A printed figure, and the tolerance widened by its rounding (half a
/// unit of the last printed digit).
fn printed_value(p: &macos::Printed, base: Tolerance) -> (f64, Tolerance) {
    (
        p.bytes as f64,
        Tolerance::new(base.abs + p.resolution as f64 / 2.0, base.pct),
    )
}

fn printed(r: &Reading<macos::Printed>, base: Tolerance) -> (Reading<f64>, Tolerance) {
    match r {
        Reading::Value(p) => {
            let (v, t) = printed_value(p, base);
            (Reading::Value(v), t)
        }
        Reading::Unreadable(w) => (Reading::Unreadable(w.clone()), base),
    }
}

fn rows_macos(read: &MacRead, child: ChildInfo, a: &Snap, b: &Snap) -> Vec<Row> {
    let row = |figure, tool_name, swapsight, tool, tolerance| {
        judge(figure, tool_name, Unit::Bytes, swapsight, tool, tolerance)
    };
    let total = Reading::Value(Bracket::once(a.0.phys_bytes as f64));
    let used = sys_bracket(a, b, |s| s.used_bytes() as f64);
    // free + speculative pages, % of hw.memsize_usable, back in bytes.
    let free = sys_bracket(a, b, |s| s.free_bytes() as f64);
    let cached = match (a.0.cached_bytes, b.0.cached_bytes) {
        (Some(x), y) => Reading::Value(Bracket::new(x as f64, y.unwrap_or(x) as f64)),
        (None, _) => Reading::Unreadable("the probe gave no cached-files figure".into()),
    };
    let compressed = sys_bracket(a, b, |s| s.compressed_bytes as f64);
    let wired = match (a.0.wired_bytes, b.0.wired_bytes) {
        (Some(x), y) => Reading::Value(Bracket::new(x as f64, y.unwrap_or(x) as f64)),
        (None, _) => Reading::Unreadable("the probe gave no wired figure".into()),
    };
    let swap_used = sys_bracket(a, b, |s| s.swap_used_bytes as f64);
    let swap_total = sys_bracket(a, b, |s| s.swap_total_bytes as f64);
    let footprint = proc_bracket(a, b, child.pid, |p| Some(p.footprint_bytes));
    let memsize = bytes(read.memsize.clone());
    let vm = |f: fn(&macos::VmStat) -> Option<u64>, what: &str| {
        read.vm_stat.clone().and_then(|v| opt(f(&v), what))
    };
    let swapusage = |f: fn(&macos::SwapUsage) -> macos::Printed| match &read.swapusage {
        Reading::Value(s) => Reading::Value(f(s)),
        Reading::Unreadable(w) => Reading::Unreadable(w.clone()),
    };
    // vm.swapusage is what the probe reads: equal but for the print's
    // rounding (two decimals of M or G).
    let exact = Tolerance::new(0.0, 0.0);
    let (sysctl_used, used_tol) = printed(&swapusage(|s| s.used), exact);
    let (sysctl_total, total_tol) = printed(&swapusage(|s| s.total), exact);
    let (tool_fp, fp_tol) = printed(&read.child_footprint, Tolerance::new(MIB, 1.0));
    let (top_fp, top_tol) = printed(&read.child_top, Tolerance::new(MIB, 2.0));
    let moving = Tolerance::new(16.0 * MIB, 1.0);
    let am_used = vm(macos::VmStat::used_bytes, "used memory");
    let vm_compressed = vm(macos::VmStat::compressed_bytes, "compressed");
    let vm_wired = vm(macos::VmStat::wired_bytes, "wired");
    // One row a line: a table reads better than rustfmt's columns.
    #[rustfmt::skip]
    let mut rows = vec![
        row("memory total", "sysctl hw.memsize", total, memsize, exact),
        row("used memory", "vm_stat (app + wired + compressed)", used, am_used, Tolerance::new(0.0, 5.0)),
        row("free memory", "vm_stat (free + speculative)", free, vm(macos::VmStat::free_bytes, "free pages"), moving),
        judge("available (kernel level)", "memory_pressure (free percentage)", Unit::Percent,
              sys_bracket(a, b, |s| s.available_pct()), read.pressure.clone(), Tolerance::new(1.0, 0.0)),
        row("cached files", "vm_stat (file-backed + purgeable)", cached, vm(macos::VmStat::cached_bytes, "cached files"), moving),
        row("compressed", "vm_stat (occupied by compressor)", compressed, vm_compressed, moving),
        row("wired", "vm_stat (wired down)", wired, vm_wired, moving),
        row("swap used", "sysctl vm.swapusage (used)", swap_used, sysctl_used, used_tol),
        row("swap total", "sysctl vm.swapusage (total)", swap_total, sysctl_total, total_tol),
        allocated_row(a, b, child, "child footprint"),
        row("child footprint", "footprint (phys_footprint)", footprint.clone(), tool_fp, fp_tol),
        row("child footprint", "top -l 1 -stats pid,mem (MEM)", footprint, top_fp, top_tol),
    ];
    rows.extend(largest_rows(
        &read.procs,
        a,
        b,
        "footprint (phys_footprint)",
        |p| printed_value(p, Tolerance::new(4.0 * MIB, 2.0)),
    ));
    if read.others > 0 {
        rows.push(info(
            &format!("other users' processes ({})", read.others),
            "footprint (phys_footprint)",
            Unit::Bytes,
            None,
            Reading::Unreadable(format!(
                "{} processes belong to other users: macOS shows their footprint only to \
                 root, to swapsight and footprint alike (run as root to compare them)",
                read.others
            )),
            "",
        ));
    }
    rows
}

fn macos_version(ctx: &mut Ctx) -> (String, String) {
    let os = ctx
        .parsed("sw_vers", &[], macos::parse_sw_vers)
        .ok()
        .unwrap_or_else(|| "macOS".into());
    let kernel = ctx
        .run("uname", &["-r"])
        .ok()
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    (os, kernel)
}

#[cfg(test)]
#[path = "examine_tests.rs"]
mod tests;
