//! The doctor on macOS: what `footprint`, `top`, `vm_stat`, `sysctl`,
//! `memory_pressure` and `ioreg` say, read between the two probe samples,
//! and the rows comparing them with swapsight's figures.

use super::*;
use crate::probe::macos::parse as probe_parse;
use crate::probe::GpuMemory;
use crate::show::doctor::names as n;

pub(super) struct MacRead {
    pub(super) memsize: Reading<u64>,
    pub(super) vm_stat: Reading<macos::VmStat>,
    pub(super) swapusage: Reading<macos::SwapUsage>,
    pub(super) pressure: Reading<f64>,
    pub(super) child_footprint: Reading<macos::Printed>,
    pub(super) child_top: Reading<macos::Printed>,
    /// The accelerators' `PerformanceStatistics` in `ioreg`, summed as the
    /// probe sums IOKit's.
    pub(super) gpu: Reading<GpuMemory>,
    /// `sysctl -n iogpu.wired_limit_mb`.
    pub(super) wired_limit_mb: Reading<u64>,
    /// The largest readable process, with `footprint`'s figure.
    pub(super) procs: Vec<(Pick, Reading<macos::Printed>)>,
    /// How many processes belong to other users (unreadable without root).
    pub(super) others: usize,
}

/// `footprint`'s figure of `pid`: its JSON, written to a file in a fresh
/// private folder, else its text (`-f bytes`).
pub(super) fn footprint_of(ctx: &mut Ctx, pid: u32) -> Reading<macos::Printed> {
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

pub(super) fn read_macos(ctx: &mut Ctx, child: u32, procs: &[ProcessSample]) -> MacRead {
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
        gpu: ctx.parsed(
            "ioreg",
            &["-r", "-d", "1", "-w", "0", "-c", "IOAccelerator"],
            |t| probe_parse::gpu_memory(macos::parse_ioreg_accelerators(t)),
        ),
        wired_limit_mb: ctx.parsed(
            "sysctl",
            &["-n", "iogpu.wired_limit_mb"],
            macos::parse_sysctl_u64,
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
                name: p.name.to_string(),
                what: "largest readable process",
            },
            got,
        ));
    }
    read
}

/// A printed figure, and the tolerance widened by its rounding (half a
/// unit of the last printed digit).
pub(super) fn printed_value(p: &macos::Printed, base: Tolerance) -> (f64, Tolerance) {
    (
        p.bytes as f64,
        Tolerance::new(base.abs + p.resolution as f64 / 2.0, base.pct),
    )
}

pub(super) fn printed(r: &Reading<macos::Printed>, base: Tolerance) -> (Reading<f64>, Tolerance) {
    match r {
        Reading::Value(p) => {
            let (v, t) = printed_value(p, base);
            (Reading::Value(v), t)
        }
        Reading::Unreadable(w) => (Reading::Unreadable(w.clone()), base),
    }
}

/// A system figure the probe may not give, in both samples (the first alone
/// if the second lacks it); unreadable, saying `missing`, when the first
/// sample lacks it.
fn sys_opt(
    a: &Snap,
    b: &Snap,
    f: impl Fn(&SystemSample) -> Option<u64>,
    missing: &str,
) -> Reading<Bracket> {
    match (f(&a.0), f(&b.0)) {
        (Some(x), y) => Reading::Value(Bracket::new(x as f64, y.unwrap_or(x) as f64)),
        (None, _) => Reading::Unreadable(missing.into()),
    }
}

/// A figure of `ioreg`'s accelerators; unreadable when it printed none.
fn ioreg_figure(read: &MacRead, f: fn(&GpuMemory) -> Option<u64>, key: &str) -> Reading<f64> {
    read.gpu.clone().and_then(|g| match f(&g) {
        Some(v) => Reading::Value(v as f64),
        None => Reading::Unreadable(format!("ioreg printed no usable \"{key}\"")),
    })
}

/// The rows of the GPU's figures and of swap written (issue 29).
fn gpu_and_swap_rows(read: &MacRead, a: &Snap, b: &Snap) -> Vec<Row> {
    let row = |figure, tool_name, swapsight, tool, tolerance| {
        judge(figure, tool_name, Unit::Bytes, swapsight, tool, tolerance)
    };
    let gpu = |f: fn(&GpuMemory) -> Option<u64>, what: &str| {
        sys_opt(
            a,
            b,
            |s| s.gpu.as_ref().and_then(f),
            &format!("the probe gave no {what} figure"),
        )
    };
    // The GPU's allocations move with every frame drawn: wider than the
    // pages' rows.
    let gpu_moving = Tolerance::new(32.0 * MIB, 5.0);
    let limit = read
        .wired_limit_mb
        .clone()
        .and_then(|mb| opt(probe_parse::mib_to_bytes(mb), "the wired limit"));
    let swapouts = read.vm_stat.clone().and_then(|v| match v.swap_out_bytes() {
        Some(b) => Reading::Value(b as f64),
        None => Reading::Unreadable("vm_stat printed no usable Swapouts line".into()),
    });
    #[rustfmt::skip]
    let rows = vec![
        row(n::GPU_IN_USE, n::IOREG_IN_USE, gpu(|g| g.in_use_bytes, "GPU in-use"),
            ioreg_figure(read, |g| g.in_use_bytes, probe_parse::GPU_IN_USE_KEY), gpu_moving),
        row(n::GPU_ALLOC, n::IOREG_ALLOC, gpu(|g| g.alloc_bytes, "GPU alloc"),
            ioreg_figure(read, |g| g.alloc_bytes, probe_parse::GPU_ALLOC_KEY), gpu_moving),
        row(n::GPU_WIRED_LIMIT, n::SYSCTL_WIRED_LIMIT,
            gpu(|g| g.wired_limit_mb.and_then(probe_parse::mib_to_bytes), "GPU wired limit"),
            limit, Tolerance::new(0.0, 0.0)),
        // A counter the kernel bumps as each swap write finishes; the probe
        // reads it at most once a second.
        row(n::SWAP_WRITTEN, n::VM_STAT_SWAPOUTS,
            sys_opt(a, b, |s| s.swap_out_bytes, "the probe gave no swap written figure"),
            swapouts, Tolerance::new(16.0 * MIB, 1.0)),
    ];
    rows
}

/// Metal's recommended working set as the probe read it: a row of its own,
/// so a Mac shows whether it was read (`fit`'s working-set bound, MLX's
/// limit and `advise` size from it). No tool prints it to compare.
pub(super) fn working_set_row(b: &Snap) -> Row {
    let ws = b.0.gpu.and_then(|g| g.recommended_working_set_bytes);
    let phys = b.0.phys_bytes.max(1);
    info(
        n::GPU_WORKING_SET,
        n::METAL_WORKING_SET,
        Unit::Bytes,
        ws.map(|w| w as f64),
        match ws {
            Some(w) => Reading::Value(w as f64),
            None => Reading::Unreadable(WORKING_SET_UNREAD.into()),
        },
        &format!(
            "read from Metal, {:.0} % of memory: what fit's working-set bound, MLX's memory limit and advise start from",
            ws.unwrap_or(0) as f64 / phys as f64 * 100.0
        ),
    )
}

/// Why the working set row has no figure.
pub(super) const WORKING_SET_UNREAD: &str = "Metal gave no default device (an Intel Mac, \
    or no GPU): fit has no working-set bound, advise estimates 78 % of memory";

/// Why the tag storage row stands apart from used memory.
pub(super) const TAG_STORAGE_APART: &str = "not in used memory: the pages storing tags are \
    counted as wired (XNU host.c, HAS_MTE), so adding the total would likely count them twice; \
    what Activity Monitor counts is not yet confirmed on a Mac";

pub(super) fn rows_macos(read: &MacRead, child: ChildInfo, a: &Snap, b: &Snap) -> Vec<Row> {
    let row = |figure, tool_name, swapsight, tool, tolerance| {
        judge(figure, tool_name, Unit::Bytes, swapsight, tool, tolerance)
    };
    let total = Reading::Value(Bracket::once(a.0.phys_bytes as f64));
    let used = sys_bracket(a, b, |s| s.used_bytes() as f64);
    // free_count pages (speculative ones included), % of hw.memsize_usable,
    // back in bytes.
    let free = sys_bracket(a, b, |s| s.free_bytes() as f64);
    let cached = sys_opt(
        a,
        b,
        |s| s.cached_bytes,
        "the probe gave no cached-files figure",
    );
    let compressed = sys_bracket(a, b, |s| s.compressed_bytes as f64);
    let wired = sys_opt(a, b, |s| s.wired_bytes, "the probe gave no wired figure");
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
        row(n::MEMORY_TOTAL, n::SYSCTL_MEMSIZE, total, memsize, exact),
        row(n::USED_MEMORY, n::VM_STAT_USED, used, am_used, Tolerance::new(0.0, 5.0)),
        row(n::FREE_MEMORY, n::VM_STAT_FREE, free, vm(macos::VmStat::free_bytes, "free pages"), moving),
        judge(n::AVAILABLE, n::MEMORY_PRESSURE, Unit::Percent,
              sys_bracket(a, b, |s| s.available_pct()), read.pressure.clone(), Tolerance::new(1.0, 0.0)),
        row(n::CACHED_FILES, n::VM_STAT_CACHED, cached, vm(macos::VmStat::cached_bytes, "cached files"), moving),
        row(n::COMPRESSED, n::VM_STAT_COMPRESSED, compressed, vm_compressed, moving),
        row(n::WIRED, n::VM_STAT_WIRED, wired, vm_wired, moving),
        row(n::SWAP_USED, n::SWAPUSAGE_USED, swap_used, sysctl_used, used_tol),
        row(n::SWAP_TOTAL, n::SWAPUSAGE_TOTAL, swap_total, sysctl_total, total_tol),
        allocated_row(a, b, child, n::CHILD_FOOTPRINT),
        row(n::CHILD_FOOTPRINT, n::FOOTPRINT, footprint.clone(), tool_fp, fp_tol),
        row(n::CHILD_FOOTPRINT, n::TOP_MEM, footprint, top_fp, top_tol),
    ];
    // macOS 26 on a Mac with memory tagging: the tag storage pages, a row
    // of their own and not in used memory (docs/doctor.md): the pages that
    // store tags are wired already.
    if let Reading::Value(Some(Some(tags))) = read.vm_stat.clone().map(|v| v.tag_storage_bytes()) {
        let mut row = row(
            n::TAG_STORAGE,
            n::VM_STAT_TAG_STORAGE,
            sys_opt(
                a,
                b,
                |s| s.tag_storage_bytes,
                "the probe gave no tag storage figure",
            ),
            Reading::Value(tags as f64),
            exact,
        );
        row.note.get_or_insert_with(|| TAG_STORAGE_APART.into());
        rows.push(row);
    }
    rows.extend(gpu_and_swap_rows(read, a, b));
    rows.push(working_set_row(b));
    rows.extend(largest_rows(&read.procs, a, b, n::FOOTPRINT, |p| {
        printed_value(p, Tolerance::new(4.0 * MIB, 2.0))
    }));
    if read.others > 0 {
        rows.push(info(
            &format!("other users' processes ({})", read.others),
            n::FOOTPRINT,
            Unit::Bytes,
            None,
            Reading::Unreadable(format!(
                "{} belong{} to other users: macOS shows their footprint only to \
                 root, to swapsight and footprint alike (run as root to compare them)",
                match read.others {
                    1 => "1 process".to_string(),
                    n => format!("{n} processes"),
                },
                if read.others == 1 { "s" } else { "" }
            )),
            "",
        ));
    }
    rows
}

pub(super) fn macos_version(ctx: &mut Ctx) -> (String, String) {
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
