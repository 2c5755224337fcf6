//! The figures a probe returns, as a trace keeps them: the system's, each
//! process's, the scope's and the host's.

use serde::{Deserialize, Serialize};

use crate::probe::pressure::Pressure;

mod scope;
pub use scope::{Scope, ScopeEvents};

/// System-wide figures of one tick. Fields may be added in later versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    /// Physical memory (macOS `hw.memsize`, Linux `MemTotal`).
    pub phys_bytes: u64,
    /// Free memory in percent of [`SystemSample::usable_bytes`]: macOS
    /// `free_count` pages of `host_statistics64`, which already hold the
    /// speculative ones (`vm_stat`'s "Pages free" plus "Pages speculative",
    /// `top`'s "unused"; older macOS traces held
    /// `kern.memorystatus_level` here, now [`SystemSample::available_pct`]);
    /// Linux `MemAvailable / MemTotal × 100`.
    pub free_pct: f64,
    /// Swap in use (macOS `vm.swapusage` used, Linux `SwapTotal − SwapFree`).
    pub swap_used_bytes: u64,
    /// Swap configured or currently allocated.
    pub swap_total_bytes: u64,
    /// Physical memory the compressor occupies (macOS
    /// `compressor_page_count × page size`); 0 on Linux.
    #[serde(default)]
    pub compressed_bytes: u64,
    /// Kernel page size.
    #[serde(default)]
    pub page_size: u64,
    /// The memory `free_pct` is a percentage of, when it is not
    /// `phys_bytes`: macOS `hw.memsize_usable` (what
    /// `kern.memorystatus_level` is computed over). 0 means `phys_bytes`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usable_bytes: u64,
    /// Wired memory (macOS `wire_count × page size` of
    /// `host_statistics64`): held by the kernel and drivers, in no
    /// process's footprint. Absent on Linux.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wired_bytes: Option<u64>,
    /// macOS: memory in use as Activity Monitor's "Memory Used" counts it —
    /// app memory + wired + compressed (`(internal_page_count −
    /// purgeable_count + wire_count + compressor_page_count) × page size` of
    /// `host_statistics64(HOST_VM_INFO64)`, `<mach/vm_statistics.h>`).
    /// Absent on Linux and in older traces, where used memory is the base
    /// less free memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_bytes: Option<u64>,
    /// macOS 26 on a Mac with memory tagging (MTE): the pages set aside
    /// to store memory tags, `total_tag_storage_pages × page size` of
    /// `host_statistics64(HOST_VM_INFO64)` revision 3
    /// (`<mach/vm_statistics.h>`). Kept apart, not in
    /// [`SystemSample::memory_used_bytes`]: XNU's `vm_stats`
    /// (`osfmk/kern/host.c`, under `HAS_MTE`) takes only the tag-storage
    /// pages holding no tags out of `wire_count`, so those storing tags are
    /// in wired memory already and adding the total would likely count them
    /// twice (up to 1/32 of memory). Absent on older kernels, on Linux and
    /// in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_storage_bytes: Option<u64>,
    /// macOS: app memory, anonymous pages less purgeable ones
    /// (`internal_page_count − purgeable_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_bytes: Option<u64>,
    /// macOS: cached files, file-backed and purgeable pages the kernel drops
    /// first when memory is needed (`external_page_count + purgeable_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_bytes: Option<u64>,
    /// macOS: the kernel's `kern.memorystatus_level` — pages neither wired
    /// nor in the compressor (active, inactive, free and speculative, so
    /// anonymous memory in use counts), in % of `hw.memsize_usable`
    /// (`vm_pressure_response`, `osfmk/vm/vm_pageout.c`); what
    /// `memory_pressure` prints as "System-wide memory free percentage".
    /// `guard --wait-free` waits on it. Absent on Linux, where `free_pct` is
    /// already `MemAvailable`, and in older macOS traces, where `free_pct`
    /// held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_pct: Option<f64>,
    /// Linux: memory processes hold that the kernel cannot drop like file
    /// cache — `AnonPages + Shmem` of `/proc/meminfo` (a scope's: `anon +
    /// shmem` of its `memory.stat`). The hidden-memory rule asks it where
    /// memory that left a footprint went. Absent on macOS and in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anon_bytes: Option<u64>,
    /// macOS: free space of the volume holding the swap files (`statfs` of
    /// `/System/Volumes/VM`, `/private/var/vm` before macOS 11: XNU's
    /// `SWAP_FILE_NAME`, `osfmk/vm/vm_compressor_backing_store.h`), what
    /// the kernel can still grow swap into: its swap files are made on
    /// demand, so `swap_total_bytes` is no wall there. Absent on Linux
    /// (swap has a fixed size) and in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_volume_free_bytes: Option<u64>,
    /// macOS: how far swap can still grow before each wall the kernel has,
    /// the nearest of which is where swap is full. Absent on Linux (swap
    /// has a fixed size) and in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_room: Option<SwapRoom>,
    /// Memory pressure (Linux PSI, the macOS kernel's level) and the level
    /// in force; absent where the OS gives none — never zeros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
    /// Bytes written to swap since boot, a counter (SSD wear): macOS
    /// `swapouts` of `host_statistics64(HOST_VM_INFO64)` × page size
    /// (`<mach/vm_statistics.h>`, `vm_stat`'s "Swapouts"), Linux `pswpout`
    /// of `/proc/vmstat` × page size. Absent in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_out_bytes: Option<u64>,
    /// macOS: what the GPU holds of the shared memory and the limits on it.
    /// Absent on Linux, on Macs without an IOAccelerator and in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuMemory>,
}

/// The GPU's share of unified memory on a Mac, as the OS gives it. Each
/// figure is absent where the OS did not give it — never a zero that would
/// read as "the GPU holds nothing". Fields may be added in later versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuMemory {
    /// "In use system memory" of the IOAccelerator service's
    /// `PerformanceStatistics` (summed over accelerators): system memory the
    /// GPU's allocations hold now, most of it in no process's footprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_use_bytes: Option<u64>,
    /// "Alloc system memory" of the same dictionary: what the driver has
    /// allocated for the GPU, in use or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_bytes: Option<u64>,
    /// "In use system memory (driver)": the driver's own part of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_in_use_bytes: Option<u64>,
    /// `sysctl iogpu.wired_limit_mb` as set: 0 is the default (Metal's
    /// recommended working set); absent where the sysctl does not exist
    /// (before macOS 14, Intel Macs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wired_limit_mb: Option<u64>,
    /// Metal's `recommendedMaxWorkingSetSize` of the default device: the
    /// memory the GPU may hold before Metal starts paging, what MPS and MLX
    /// size their limits from. Read at start and again when
    /// `iogpu.wired_limit_mb` changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended_working_set_bytes: Option<u64>,
}

impl GpuMemory {
    /// The most the GPU may wire: the sysctl's limit where one is set,
    /// else Metal's recommended working set (what the default is).
    pub fn wired_limit_bytes(&self) -> Option<u64> {
        match self.wired_limit_mb {
            Some(mb) if mb > 0 => mb.checked_mul(1 << 20),
            _ => self.recommended_working_set_bytes,
        }
    }

    /// Whether the OS gave any figure at all.
    pub fn is_empty(&self) -> bool {
        *self == GpuMemory::default()
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl SystemSample {
    /// The memory `free_pct` is measured over.
    pub fn base_bytes(&self) -> u64 {
        if self.usable_bytes > 0 {
            self.usable_bytes
        } else {
            self.phys_bytes
        }
    }

    /// Free memory in bytes, derived from the percentage.
    pub fn free_bytes(&self) -> u64 {
        let pct = if self.free_pct.is_finite() {
            self.free_pct.clamp(0.0, 100.0)
        } else {
            0.0
        };
        (self.base_bytes() as f64 * pct / 100.0) as u64
    }

    /// Memory in use: macOS's "Memory Used" where the probe read it, else
    /// the base of `free_pct` less free memory (Linux: `MemTotal −
    /// MemAvailable`).
    pub fn used_bytes(&self) -> u64 {
        self.memory_used_bytes
            .unwrap_or_else(|| self.base_bytes().saturating_sub(self.free_bytes()))
    }

    /// The figures a run is judged on: its scope's where a memory cgroup
    /// limits it ([`Scope::as_system`]), else these, the host's. The one
    /// home of "scope or host": the detector's gap, the report, the plots
    /// and the forecast all ask here.
    pub fn judged_in(&self, scope: Option<&Scope>) -> SystemSample {
        scope.map_or(*self, |s| s.as_system(self))
    }

    /// Memory the OS could hand a new job without swapping, in %: macOS
    /// `kern.memorystatus_level`, Linux `MemAvailable` (`free_pct`). What
    /// `guard --wait-free` waits for.
    pub fn available_pct(&self) -> f64 {
        self.available_pct.unwrap_or(self.free_pct)
    }
}

/// How far swap can still grow on a Mac, before each of the kernel's
/// walls. The volume is rarely the first: the kernel makes at most 100
/// swap files of at most 1 GiB each, and the compressor, whose segments
/// hold what is swapped out as well as what is compressed in RAM, has a
/// pool capped by the memory size. At the nearest wall the Mac says "Your
/// system has run out of application memory" (XNU
/// `bsd/kern/kern_memorystatus.c`). Fields may be added in later versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapRoom {
    /// Free space of the swap volume plus the free space inside the swap
    /// files already made (`xsu_avail` of `vm.swapusage`); absent when
    /// the volume could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_bytes: Option<u64>,
    /// The swap files' cap less swap in use: `VM_MAX_SWAP_FILE_NUM` (100)
    /// × `MAX_SWAP_FILE_SIZE` (1 GiB) on macOS
    /// (`osfmk/vm/vm_compressor_backing_store.c`).
    pub files_bytes: u64,
    /// The compressor pool's cap less what the compressor holds (its pages
    /// in RAM and swap in use): 16×, 8×, 4× or 2× `max_mem` for up to 4, 8,
    /// 32 GiB or more, at most 192 GiB (`vm_compressor_set_size`,
    /// `osfmk/vm/vm_compressor.c`). Partly filled segments make the real
    /// wall somewhat nearer.
    pub compressor_bytes: u64,
}

/// Which of the kernel's walls swap runs into first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapWall {
    /// The volume holding the swap files is full.
    Volume,
    /// 100 swap files, the kernel's cap.
    Files,
    /// The compressor pool's cap.
    Compressor,
}

impl SwapWall {
    /// For people: what is full.
    pub fn label(self) -> &'static str {
        match self {
            SwapWall::Volume => "the swap volume's free space",
            SwapWall::Files => "100 swap files, the kernel's cap",
            SwapWall::Compressor => "the compressor pool's cap",
        }
    }
}

impl SwapRoom {
    /// The nearest wall and the room before it.
    pub fn nearest(&self) -> (SwapWall, u64) {
        let volume = self.volume_bytes.map(|v| (SwapWall::Volume, v));
        [
            (SwapWall::Files, self.files_bytes),
            (SwapWall::Compressor, self.compressor_bytes),
        ]
        .into_iter()
        .chain(volume)
        .min_by_key(|&(_, room)| room)
        .unwrap_or((SwapWall::Files, self.files_bytes))
    }
}

/// One process at one tick. Fields may be added in later versions.
/// `Default` is a readable process with every figure 0 or absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    /// The process id.
    pub pid: u32,
    /// The parent's process id (0 in traces that lack it).
    #[serde(default)]
    pub ppid: u32,
    /// The name a person knows the process by (see [`naming`](super::naming)): the
    /// executable's full base name, or for an interpreter or a `run` wrapper
    /// the script or module it runs — `generate.py (python3.12)`. Shared,
    /// not copied: an idle process's sample is repeated every tick.
    pub name: std::sync::Arc<str>,
    /// The command line, capped at [`naming::CMDLINE_MAX_BYTES`](super::naming::CMDLINE_MAX_BYTES); absent
    /// where the OS does not show it to this user (another user's process
    /// on macOS) or in traces of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<std::sync::Arc<str>>,
    /// The user the process belongs to ([`owner`](super::owner)): whose command line
    /// `cmdline` is, so that a server other users reach can keep to its own
    /// user's. A trace writes it only beside a `cmdline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// macOS `phys_footprint`; Linux `RssAnon + RssShmem`. On macOS it
    /// **includes** the process's compressed memory, whether that is still in
    /// RAM or paged out to swap (`internal_compressed`, XNU
    /// `osfmk/kern/task.c`, "Task ledgers"); on Linux swapped pages are not
    /// in it (they are in `VmSwap`). Neither counts memory the process owns
    /// outside its footprint (see `outside_footprint_bytes`).
    pub footprint_bytes: u64,
    /// Cumulative page-ins. macOS `ri_pageins`: **file** page-ins only (a
    /// page coming back from swap goes through the compressor and is not
    /// counted, `osfmk/vm/vm_fault.c`). Linux `majflt`: major faults, file
    /// and swap alike.
    #[serde(default)]
    pub pageins: u64,
    /// Measured swap of this process (Linux `VmSwap`); `None` where the OS
    /// does not say (macOS: see `compressed_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_bytes: Option<u64>,
    /// Start time in the OS's own unit (Linux: clock ticks since boot; macOS:
    /// µs since the epoch); tells a reused pid apart.
    #[serde(default)]
    pub start_time: u64,
    /// `false` when the OS listed the process but denied its figures
    /// (another user's process on macOS): footprint and page-ins are then 0.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub readable: bool,
    /// Cumulative bytes brought back from swap (macOS `TASK_VM_INFO`
    /// `ledger_swapins`, revision 6, macOS 13+). Absent on Linux and for
    /// other users' processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swapin_bytes: Option<u64>,
    /// Cumulative pages taken back from the compressor, from RAM or swap
    /// (macOS `TASK_VM_INFO` `decompressions`, revision 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decompressions: Option<u64>,
    /// The process's memory held by the compressor, in RAM or swapped out
    /// (macOS `TASK_VM_INFO` `compressed`); part of its footprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressed_bytes: Option<u64>,
    /// GPU memory: what the process owns under the "graphics" ledger tag,
    /// in or out of its footprint (macOS `TASK_VM_INFO` revision 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_bytes: Option<u64>,
    /// Memory the process owns that its footprint does not count (macOS
    /// `ledger_tag_{graphics,neural,media}_nofootprint` and their
    /// `_compressed`). Direct evidence of hidden memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_footprint_bytes: Option<u64>,
    /// Lifetime peak of the footprint (macOS `ledger_phys_footprint_peak`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_peak_bytes: Option<u64>,
}

impl Default for ProcessSample {
    fn default() -> Self {
        ProcessSample {
            pid: 0,
            ppid: 0,
            name: "".into(),
            cmdline: None,
            uid: None,
            footprint_bytes: 0,
            pageins: 0,
            swap_bytes: None,
            start_time: 0,
            readable: true,
            swapin_bytes: None,
            decompressions: None,
            compressed_bytes: None,
            gpu_bytes: None,
            outside_footprint_bytes: None,
            footprint_peak_bytes: None,
        }
    }
}

impl ProcessSample {
    /// Memory of this process known to be swapped or compressed: Linux
    /// `VmSwap`, else macOS `compressed`. The detector's per-process swap
    /// evidence grows with it.
    pub fn swapped_bytes(&self) -> Option<u64> {
        self.swap_bytes.or(self.compressed_bytes)
    }

    /// Everything this process owns that the OS shows: the footprint plus
    /// what is swapped outside it (Linux `VmSwap`; on macOS the footprint
    /// already holds the compressed part).
    pub fn owned_bytes(&self) -> u64 {
        self.footprint_bytes
            .saturating_add(self.swap_bytes.unwrap_or(0))
    }

    /// Drops the command line unless the process is `uid`'s own: another
    /// user's arguments may hold what only they should read
    /// (`--password=…`), and a process between users (a setuid program,
    /// no [`owner`](super::owner)) is nobody's own.
    pub fn keep_command_of(&mut self, uid: u32) {
        if self.uid != Some(uid) {
            self.cmdline = None;
        }
    }

    /// Drops every per-process swap figure: what a Mac that cannot read a
    /// process's `TASK_VM_INFO` (another user's process, or an old macOS)
    /// leaves the detector with.
    pub fn withhold_process_swap(&mut self) {
        self.swap_bytes = None;
        self.swapin_bytes = None;
        self.decompressions = None;
        self.compressed_bytes = None;
    }
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// One tick: system figures and the processes seen. `t_ms` counts from the
/// sampler's (or trace's) start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Milliseconds since the start.
    pub t_ms: u64,
    /// The machine's figures (`sys` in a trace).
    #[serde(rename = "sys")]
    pub system: SystemSample,
    /// The processes seen; a trace keeps some, largest footprint first
    /// (`procs`).
    #[serde(rename = "procs")]
    pub processes: Vec<ProcessSample>,
    /// The run's scope when a memory cgroup limits it; absent: the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

/// Facts about the host that do not change between ticks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// `"macos"` or `"linux"`.
    pub os: String,
    /// Physical memory (macOS `hw.memsize`, Linux `MemTotal`).
    pub phys_bytes: u64,
    /// The kernel's page size in bytes.
    pub page_size: u64,
    /// The host's name (Linux `/proc/sys/kernel/hostname`, macOS
    /// `gethostname`); empty when unreadable.
    #[serde(default)]
    pub hostname: String,
}
