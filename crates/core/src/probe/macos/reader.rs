//! macOS backend: `libproc` and `sysctl` for processes and swap,
//! `task_info(TASK_VM_INFO)` for each readable process's swap evidence,
//! `host_statistics64` at most once a second for the compressor.
//!
//! | figure | source |
//! |---|---|
//! | footprint, file page-ins | `proc_pid_rusage(RUSAGE_INFO_V4)`: `ri_phys_footprint`, `ri_pageins` (EPERM for other users' processes: listed with `readable: false`) |
//! | swap-ins, decompressions, compressed, GPU memory, outside the footprint, footprint peak | `task_name_for_pid` + `task_info(TASK_VM_INFO)`, by the revision the kernel answers (same user, or root) |
//! | ppid, short name, owner | `proc_pidinfo(PROC_PIDT_SHORTBSDINFO)` (answers for every user; owner from `pbsi_ruid`, `pbsi_uid`, `pbsi_svuid`) |
//! | name, command line | `sysctl KERN_PROCARGS2` (exec path and argv; the kernel answers for the caller's own user's processes, or to root) through `naming`, read once per process and again after an `exec`; other users' processes keep `pbsi_comm`, completed from `proc_pidpath` when cut short |
//! | identity | `p_uniqueid` of `proc_pidinfo(PROC_PIDUNIQIDENTIFIERINFO)` (every user): a reused pid has a new one |
//! | start time | `p_starttime` of `sysctl kern.proc.pid.<pid>` (`kinfo_proc`), µs since the epoch — read once per new process: that sysctl walks every process in the kernel |
//! | swap | `sysctl vm.swapusage` |
//! | room for swap to grow | the nearest of: `statfs` of `/System/Volumes/VM` (else `/private/var/vm`), `f_bavail × f_bsize`, plus `xsu_avail` of `vm.swapusage`; 100 swap files of 1 GiB less swap used; the compressor pool's cap (16×–2× `hw.memsize_usable`, ≤ 192 GiB) less compressed and swapped bytes |
//! | free % | `free_count` of `host_statistics64(HOST_VM_INFO64)` (it already holds the speculative pages: XNU `osfmk/kern/host.c`), % of `hw.memsize_usable` |
//! | used (Activity Monitor's "Memory Used") | app (`internal_page_count − purgeable_count`) + `wire_count` + `compressor_page_count`, same answer |
//! | cached files | `external_page_count + purgeable_count`, same answer |
//! | tag storage (macOS 26, memory tagging) | `total_tag_storage_pages` of the same answer when the kernel fills revision 3; kept apart from used memory (its tag-holding pages are in `wire_count`) |
//! | available % (the guard's gate) | `sysctl kern.memorystatus_level`: pages neither wired nor compressed, % of `hw.memsize_usable` |
//! | compressor, wired | `host_statistics64(HOST_VM_INFO64)`, `compressor_page_count` and `wire_count × vm.pagesize` |
//! | physical memory, page size | `sysctl hw.memsize`, `hw.memsize_usable`, `vm.pagesize`, read once |
//! | swap written | `swapouts × vm.pagesize` of the same `host_statistics64` answer |
//! | GPU in use, allocated, the driver's part | "In use system memory", "Alloc system memory", "In use system memory (driver)" of each `IOAccelerator` service's `PerformanceStatistics` (`IOServiceGetMatchingServices` once, then `IORegistryEntryCreateCFProperty` of that one key), summed, at most once a second |
//! | GPU wired limit | `sysctl iogpu.wired_limit_mb` (0: the default; absent before macOS 14), with each registry read |
//! | Metal's recommended working set | `recommendedMaxWorkingSetSize` of `MTLCreateSystemDefaultDevice()`, Apple Silicon only, read at the first sample and again when `iogpu.wired_limit_mb` changes |
//!
//! Raw calls are in [`ffi`]; every conversion is in
//! [`super::parse`] and [`super::parse_process`], tested on Linux.
//!
//! Tiered ticks, by the rule the Linux probe follows ([`crate::probe::tiers`],
//! bookkept by [`LastReads`]): every tick scans every pid (short BSD info
//! and unique id: the guard relies on the scan, and it is what tells a new
//! or reused pid). A process whose read — footprint and page-ins from
//! `proc_pid_rusage`, and compressed, swap-ins, decompressions, GPU and
//! outside-the-footprint memory from `TASK_VM_INFO` — gave the same figures
//! for [`IDLE_AFTER`](crate::probe::tiers::IDLE_AFTER) reads in a row is
//! idle: a tick that is not full reads neither for it and repeats its last
//! sample, with the scan's parent, owner and name; so is one listed at the
//! first scan, from that first read
//! ([`Unmoved::first_read`](crate::probe::tiers::Unmoved::first_read)). A
//! process that moved lately is read every tick; a new pid, a reused one
//! (another unique id) and one whose unique id could not be read are always
//! read. A pid the
//! scan no longer lists is forgotten.
//!
//! A tick is full every [`FULL_EVERY`](crate::probe::tiers::FULL_EVERY)
//! ticks, and when used memory (app + wired + compressor) or swap used
//! moved past a step since the last full tick, or the kernel's pressure
//! level (`kern.memorystatus_vm_pressure_level`) changed — macOS has no
//! PSI. These machine-wide figures are what cover an idle process on
//! macOS: `phys_footprint` counts compressed memory, so a process being
//! compressed or swapped out does not move its footprint, but compressing
//! moves used memory (the pages leave app memory, fewer pages join the
//! compressor) and swapping out moves swap used, which makes the tick full
//! and reads it; its `compressed` figure then moved, so it is read every
//! tick after. Used memory comes from `host_statistics64`, asked at most
//! once a second, so that trigger can lag a tick at 2 Hz; swap used and
//! the level are read every tick.

use super::ffi;

use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::cache::{repeated, GpuCache, LastReads, VmStats, VmStatsCache};
use super::parse;
use super::parse_process;
use super::table::{io_err, is_gone, Listed, ProcessTable};
use crate::probe::pressure::{Level, Pressure};
use crate::probe::tiers::{FullTicks, Movers};
use crate::probe::{GpuMemory, HostInfo, Probe, ProbeError, ProcessSample, SystemSample};

// The pure parsers assume these layouts; check them against `libc`'s Apple
// declarations at compile time (this is evaluated by `scripts/check-macos`).
const _: () = assert!(std::mem::size_of::<libc::xsw_usage>() == parse::XSW_USAGE_SIZE);
const _: () = assert!(
    std::mem::offset_of!(libc::vm_statistics64, compressor_page_count)
        == parse::COMPRESSOR_PAGE_COUNT_INDEX * 4
);
const _: () =
    assert!(std::mem::offset_of!(libc::vm_statistics64, wire_count) == parse::WIRE_COUNT_INDEX * 4);
// `libc` declares the grown struct of macOS 26; revision 1, the part the
// probe asks for, ends where `swapped_count` starts.
const _: () = assert!(
    std::mem::offset_of!(libc::vm_statistics64, swapped_count) == parse::HOST_VM_INFO64_COUNT * 4
);
const _: () = assert!(
    std::mem::offset_of!(libc::vm_statistics64, total_tag_storage_pages)
        == parse::TOTAL_TAG_STORAGE_PAGES_INDEX * 4
);
const _: () = assert!(
    std::mem::offset_of!(libc::vm_statistics64, speculative_pages_created)
        == parse::HOST_VM_INFO64_REV3_COUNT * 4
);
const _: () = assert!(std::mem::size_of::<libc::integer_t>() == 4);
const _: () = assert!(libc::MAXCOMLEN == parse_process::MAXCOMLEN);
const _: () = assert!(libc::PROC_PIDPATHINFO_MAXSIZE as usize == parse_process::PID_PATH_MAX);

/// `task_info` answer buffer, in `integer_t`: beyond any count asked.
const TASK_VM_INFO_BUFFER: usize = 128;

/// One cache for the whole process (the app, serve and record may run
/// several probes): the kernel's rate limit is one window shared by every
/// third-party process, so each call we save is one left for the others.
static VM_STATS: Mutex<VmStatsCache> = Mutex::new(VmStatsCache::new());

/// The count asked of `host_statistics64`: revision 3 until the kernel
/// answers fewer, then revision 1 (see `parse::HOST_VM_INFO64_REV3_COUNT`).
static VM_INFO64_COUNT: AtomicUsize = AtomicUsize::new(parse::HOST_VM_INFO64_REV3_COUNT);

/// The compressor and wired figures: from the shared cache, refreshed by at
/// most one `host_statistics64` call a second when `refresh` is set. With
/// `refresh` off (the guard's gate) no call is made.
fn vm_stats(host: &ffi::HostPort, page_size: u64, refresh: bool) -> VmStats {
    let mut cache = VM_STATS.lock().unwrap_or_else(|e| e.into_inner());
    cache.get(Instant::now(), refresh, || {
        let mut buf = vec![0; parse::HOST_VM_INFO64_BUFFER];
        let asked = VM_INFO64_COUNT.load(Ordering::Relaxed);
        let (kr, count) = host.vm_info64(&mut buf, asked);
        if count < asked {
            VM_INFO64_COUNT.store(parse::HOST_VM_INFO64_COUNT, Ordering::Relaxed);
        }
        if !parse::mach_answer_usable(kr) {
            return None;
        }
        Some(VmStats {
            compressed_bytes: parse::compressed_bytes(&buf, count, page_size)?,
            wired_bytes: parse::wired_bytes(&buf, count, page_size),
            memory: parse::vm_memory(&buf, count, page_size),
            swap_out_bytes: parse::swap_out_bytes(&buf, count, page_size),
        })
    })
}

/// The macOS probe. Keeps its buffers, the host port, the process table
/// and what the last read of each process gave between ticks.
pub struct NativeProbe {
    host: ffi::HostPort,
    phys_bytes: u64,
    /// `hw.memsize_usable`, the base of `kern.memorystatus_level`.
    usable_bytes: u64,
    page_size: u64,
    table: ProcessTable,
    /// The count passed to `task_info(TASK_VM_INFO)`: the newest this build
    /// knows, lowered to the kernel's own after its first answer.
    task_vm_count: usize,
    task_vm_buf: Vec<libc::integer_t>,
    /// The GPU's figures between ticks.
    gpu: GpuCache,
    /// The IOAccelerator services, kept between reads.
    accelerators: ffi::gpu::Accelerators,
    /// `hw.optional.arm64` is 1 (Apple Silicon, also under Rosetta): only
    /// there is Metal asked for its working set (see
    /// [`ffi::gpu::recommended_working_set`]).
    apple_silicon: bool,
    /// Ticks taken by [`Probe::sample`].
    tick: u64,
    /// When a tick reads every process.
    full: FullTicks,
    /// The clock full ticks are due by (`tiers::FULL_AT_MOST_MS`).
    born: std::time::Instant,
    /// What the last read of each listed process gave.
    reads: LastReads,
    /// The watched tree ([`Probe::watch_closely`]), sorted: never repeated.
    closely: Vec<u32>,
}

fn parse_err(what: &str, detail: impl Into<String>) -> ProbeError {
    ProbeError::Parse {
        what: what.to_owned(),
        detail: detail.into(),
    }
}

/// `sysctlbyname(name)` into `buf`; the bytes the kernel wrote.
fn sysctl<'b>(name: &CStr, buf: &'b mut [u8]) -> Result<&'b [u8], ProbeError> {
    let what = || format!("sysctl {}", name.to_string_lossy());
    let n = ffi::sysctl_by_name(name, buf).map_err(|e| io_err(&what(), e))?;
    Ok(&buf[..n])
}

/// An unsigned integer sysctl (4 or 8 bytes).
fn sysctl_uint(name: &CStr) -> Result<u64, ProbeError> {
    let mut buf = [0u8; 8];
    let bytes = sysctl(name, &mut buf)?;
    parse::parse_sysctl_uint(bytes).ok_or_else(|| {
        parse_err(
            &format!("sysctl {}", name.to_string_lossy()),
            format!("{} bytes, expected 4 or 8", bytes.len()),
        )
    })
}

/// Where the kernel makes its swap files: `SWAP_FILE_NAME` of
/// `osfmk/vm/vm_compressor_backing_store.h` (`/System/Volumes/VM/swapfile`
/// on macOS; `/private/var/vm/swapfile` before the VM volume, macOS 11).
const SWAP_DIRS: [&CStr; 2] = [c"/System/Volumes/VM", c"/private/var/vm"];

/// Free space of the volume the swap files grow on; `None` when neither
/// folder answers.
fn swap_volume_free() -> Option<u64> {
    SWAP_DIRS.iter().find_map(|dir| {
        let (bavail, bsize) = ffi::statfs_free(dir)?;
        parse::volume_free_bytes(bavail, bsize)
    })
}

/// The kernel's pressure level (`kern.memorystatus_vm_pressure_level`:
/// readable by any user on macOS — the privilege check is for other Apple
/// OSes only, XNU `sysctl_memorystatus_vm_pressure_level`); the error says
/// why not, for [`Probe::pressure_absent`].
pub(crate) fn pressure_level() -> Result<Level, String> {
    let mut buf = [0u8; 8];
    let bytes =
        sysctl(c"kern.memorystatus_vm_pressure_level", &mut buf).map_err(|e| e.to_string())?;
    parse::parse_pressure_level(bytes).ok_or_else(|| {
        format!(
            "sysctl kern.memorystatus_vm_pressure_level: {:02x?} is not a level this build knows (1, 2 or 4)",
            bytes
        )
    })
}

impl NativeProbe {
    /// Opens the probe: reads the page size and memory sizes once.
    pub(crate) fn new() -> Result<Self, ProbeError> {
        let page_size = sysctl_uint(c"vm.pagesize")?;
        let phys_bytes = sysctl_uint(c"hw.memsize")?;
        // Older kernels lack it; then the level is over hw.memsize.
        let usable = sysctl_uint(c"hw.memsize_usable").ok();
        // Absent on Intel Macs.
        let apple_silicon = sysctl_uint(c"hw.optional.arm64").ok() == Some(1);
        Ok(NativeProbe {
            host: ffi::HostPort::acquire(),
            phys_bytes,
            usable_bytes: parse::level_base_bytes(phys_bytes, usable),
            page_size,
            table: ProcessTable::new(),
            task_vm_count: parse_process::TASK_VM_INFO_REV7_COUNT,
            task_vm_buf: vec![0; TASK_VM_INFO_BUFFER],
            gpu: GpuCache::new(),
            accelerators: ffi::gpu::Accelerators::default(),
            apple_silicon,
            tick: 0,
            full: FullTicks::default(),
            born: std::time::Instant::now(),
            reads: LastReads::default(),
            closely: Vec::new(),
        })
    }

    /// The GPU's figures: the IOAccelerator services at most once a second
    /// and only when `refresh` is set, Metal's working set when
    /// `iogpu.wired_limit_mb` changes (see [`GpuCache`]).
    fn gpu_figures(&mut self, refresh: bool) -> Option<GpuMemory> {
        let apple_silicon = self.apple_silicon;
        let accelerators = &mut self.accelerators;
        self.gpu.get(
            Instant::now(),
            refresh,
            || parse::gpu_memory(accelerators.statistics(&parse::GPU_KEYS)),
            || {
                let mut buf = [0u8; 8];
                // Absent before macOS 14 and on Intel Macs: ENOENT.
                let n = ffi::sysctl_by_name(c"iogpu.wired_limit_mb", &mut buf).ok()?;
                parse::wired_limit_mb(&buf[..n])
            },
            || {
                apple_silicon
                    .then(ffi::gpu::recommended_working_set)
                    .flatten()
                    .and_then(parse::working_set_bytes)
            },
        )
    }

    /// System figures; `refresh_vm` allows a `host_statistics64` call and
    /// the GPU's registry walk.
    fn system_figures(&mut self, refresh_vm: bool) -> Result<SystemSample, ProbeError> {
        // Room beyond the 32-byte struct, so a larger future struct does not
        // fail with ENOMEM; only its documented head is read.
        let mut buf = [0u8; 64];
        let bytes = sysctl(c"vm.swapusage", &mut buf)?;
        let (swap_total_bytes, swap_avail_bytes, swap_used_bytes) = parse::parse_xsw_usage(bytes)
            .ok_or_else(|| {
            parse_err(
                "sysctl vm.swapusage",
                format!("{} bytes, expected {}", bytes.len(), parse::XSW_USAGE_SIZE),
            )
        })?;

        let mut buf = [0u8; 8];
        let bytes = sysctl(c"kern.memorystatus_level", &mut buf)?;
        let level = parse::parse_sysctl_i32(bytes).ok_or_else(|| {
            parse_err(
                "sysctl kern.memorystatus_level",
                format!("{} bytes, expected 4", bytes.len()),
            )
        })?;

        let vm = vm_stats(&self.host, self.page_size, refresh_vm);
        let gpu = self.gpu_figures(refresh_vm);
        let available_pct = parse::pct_from_level(level);
        let base = if self.usable_bytes > 0 {
            self.usable_bytes
        } else {
            self.phys_bytes
        };
        let memory = vm.memory;
        let volume_free = swap_volume_free();
        Ok(SystemSample {
            phys_bytes: self.phys_bytes,
            // Without the kernel's page counts (no answer yet), the level is
            // the only figure there is, as older versions recorded it.
            free_pct: memory
                .and_then(|m| parse::free_pct_of(&m, base))
                .unwrap_or(available_pct),
            swap_used_bytes,
            swap_total_bytes,
            compressed_bytes: vm.compressed_bytes,
            page_size: self.page_size,
            usable_bytes: self.usable_bytes,
            wired_bytes: vm.wired_bytes,
            memory_used_bytes: memory.map(|m| m.used_bytes()),
            tag_storage_bytes: memory.and_then(|m| m.tag_storage_bytes),
            app_bytes: memory.map(|m| m.app_bytes),
            cached_bytes: memory.map(|m| m.cached_bytes),
            available_pct: Some(available_pct),
            // macOS's pages do not say what processes hold apart from the
            // compressor: the hidden-memory rule keeps to free memory there.
            anon_bytes: None,
            swap_volume_free_bytes: volume_free,
            swap_room: Some(parse::swap_room(
                volume_free,
                swap_avail_bytes,
                swap_used_bytes,
                vm.compressed_bytes,
                base,
            )),
            pressure: pressure_level().ok().map(|level| Pressure {
                kernel_level: Some(level),
                ..Pressure::default()
            }),
            swap_out_bytes: vm.swap_out_bytes,
            gpu,
        })
    }

    /// `TASK_VM_INFO` of a process of the same user; `None` for another
    /// user's, one that is gone, or an answer too short to parse.
    fn task_vm_info(&mut self, pid: libc::pid_t) -> Option<parse_process::TaskVmInfo> {
        let task = ffi::TaskName::for_pid(pid).ok()?;
        self.task_vm_buf.fill(0);
        let (kr, count) = task.vm_info(&mut self.task_vm_buf, self.task_vm_count);
        if !parse::mach_answer_usable(kr) {
            return None;
        }
        let info = parse_process::parse_task_vm_info(&self.task_vm_buf, count)?;
        // The kernel answered its own newest count: ask that from now on.
        if count < self.task_vm_count {
            self.task_vm_count = count;
        }
        Some(info)
    }

    /// One listed process with its memory figures.
    fn process(&mut self, l: Listed) -> Option<ProcessSample> {
        let (footprint_bytes, pageins, readable) = match ffi::pid_rusage(l.pid) {
            Ok(r) => (r.phys_footprint, r.pageins, true),
            Err(e) if is_gone(&e) => return None,
            // EPERM: another user's process.
            Err(_) => (0, 0, false),
        };
        let vm = if readable {
            self.task_vm_info(l.pid)
        } else {
            None
        };
        Some(ProcessSample {
            pid: u32::try_from(l.pid).ok()?,
            ppid: l.ppid,
            name: l.naming.name,
            cmdline: l.naming.cmdline,
            uid: l.uid,
            footprint_bytes,
            pageins,
            swap_bytes: None,
            start_time: l.start_time,
            readable,
            swapin_bytes: vm.and_then(|v| v.swapins),
            decompressions: vm.and_then(|v| v.decompressions),
            compressed_bytes: vm.map(|v| v.compressed),
            gpu_bytes: vm.and_then(|v| v.gpu_bytes()),
            outside_footprint_bytes: vm.and_then(|v| v.outside_footprint_bytes()),
            footprint_peak_bytes: vm.and_then(|v| v.phys_footprint_peak),
        })
    }
}

impl Probe for NativeProbe {
    /// Swap and free memory only, with the compressor and GPU figures of
    /// the caches: no `host_statistics64` call and no registry walk, so the
    /// guard's gate may poll it.
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        self.system_figures(false)
    }

    /// The machine's figures and every listed process: read, or, when the
    /// tick is not full and the process idle, its last sample repeated
    /// (see the module's doc, "Tiered ticks").
    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let system = self.system_figures(true)?;
        let listed = self.table.scan()?;
        self.tick += 1;
        let ms = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let full = self
            .full
            .due(self.tick, ms, &system, Movers::of_macos(&system));
        self.reads.begin_tick();
        let mut processes = Vec::with_capacity(listed.len());
        for l in listed {
            let Ok(pid) = u32::try_from(l.pid) else {
                continue;
            };
            let uniqueid = l.uniqueid;
            let close = self.closely.binary_search(&pid).is_ok();
            if let Some(last) = self.reads.repeat(pid, uniqueid, full || close) {
                processes.push(repeated(last, l.ppid, l.uid, l.naming));
                continue;
            }
            match self.process(l) {
                Some(p) => {
                    self.reads.read(pid, uniqueid, &p);
                    processes.push(p);
                }
                None => self.reads.forget(pid),
            }
        }
        self.reads.end_tick();
        Ok((system, processes))
    }

    fn pressure_absent(&self) -> Option<String> {
        pressure_level().err()
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        self.closely.clear();
        self.closely.extend_from_slice(pids);
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        let mut buf = [0u8; 256];
        let hostname = match ffi::hostname(&mut buf) {
            Ok(()) => parse::comm_to_string(&buf),
            Err(_) => String::new(),
        };
        Ok(HostInfo {
            os: "macos".to_owned(),
            phys_bytes: self.phys_bytes,
            page_size: self.page_size,
            hostname,
        })
    }
}
