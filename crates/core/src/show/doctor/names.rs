//! The names of the doctor's rows on a Mac: the figure each row checks and
//! the tool it is checked with. The rows are built from these and the
//! macOS tests look rows up through them, so renaming a row is a compile
//! error in `scripts/check-macos` on Linux, not a test that fails only on a
//! Mac runner nobody watches.

pub(crate) const MEMORY_TOTAL: &str = "memory total";
/// swapsight's used memory: app + wired + compressed pages.
pub const USED_MEMORY: &str = "used memory";
/// The kernel's `free_count`, speculative pages included.
pub const FREE_MEMORY: &str = "free memory";
/// `kern.memorystatus_level`, in %.
pub const AVAILABLE: &str = "available (kernel level)";
pub(crate) const CACHED_FILES: &str = "cached files";
pub(crate) const COMPRESSED: &str = "compressed";
pub(crate) const WIRED: &str = "wired";
/// `vm.swapusage` used.
pub const SWAP_USED: &str = "swap used";
pub(crate) const SWAP_TOTAL: &str = "swap total";
/// The `phys_footprint` of the doctor's child, which writes every page of
/// `--child-size`.
pub const CHILD_FOOTPRINT: &str = "child footprint";
/// macOS 26 with memory tagging (MTE): `total_tag_storage_pages`.
pub const TAG_STORAGE: &str = "tag storage (memory tagging)";
/// The accelerators' "In use system memory", summed.
pub const GPU_IN_USE: &str = "GPU in use";
/// The accelerators' "Alloc system memory", summed.
pub const GPU_ALLOC: &str = "GPU allocated";
/// `iogpu.wired_limit_mb` as set (0: the default), in bytes.
pub const GPU_WIRED_LIMIT: &str = "GPU wired limit (as set)";
/// Bytes written to swap since boot.
pub const SWAP_WRITTEN: &str = "swap written";
/// Metal's `recommendedMaxWorkingSetSize` of the default device.
pub const GPU_WORKING_SET: &str = "GPU recommended working set";

pub(crate) const SYSCTL_MEMSIZE: &str = "sysctl hw.memsize";
/// `vm_stat` by Activity Monitor's formula: app memory + wired + compressed.
pub const VM_STAT_USED: &str = "vm_stat (app + wired + compressed)";
/// `vm_stat` prints the kernel's `free_count` as two lines.
pub const VM_STAT_FREE: &str = "vm_stat (free + speculative)";
/// `memory_pressure`'s "System-wide memory free percentage".
pub const MEMORY_PRESSURE: &str = "memory_pressure (free percentage)";
pub(crate) const VM_STAT_CACHED: &str = "vm_stat (file-backed + purgeable)";
pub(crate) const VM_STAT_COMPRESSED: &str = "vm_stat (occupied by compressor)";
pub(crate) const VM_STAT_WIRED: &str = "vm_stat (wired down)";
/// `sysctl vm.swapusage`, used.
pub const SWAPUSAGE_USED: &str = "sysctl vm.swapusage (used)";
pub(crate) const SWAPUSAGE_TOTAL: &str = "sysctl vm.swapusage (total)";
/// `footprint -f bytes -j FILE PID`: the process's `phys_footprint`.
pub const FOOTPRINT: &str = "footprint (phys_footprint)";
pub(crate) const VM_STAT_TAG_STORAGE: &str = "vm_stat (Pages tag-storage)";
pub(crate) const TOP_MEM: &str = "top -l 1 -stats pid,mem (MEM)";
/// `ioreg -c IOAccelerator`: "In use system memory", summed.
pub const IOREG_IN_USE: &str = "ioreg -c IOAccelerator (In use system memory)";
/// `ioreg -c IOAccelerator`: "Alloc system memory", summed.
pub const IOREG_ALLOC: &str = "ioreg -c IOAccelerator (Alloc system memory)";
/// `sysctl -n iogpu.wired_limit_mb`, in bytes.
pub const SYSCTL_WIRED_LIMIT: &str = "sysctl -n iogpu.wired_limit_mb";
/// Metal itself: no command-line tool prints the working set.
pub const METAL_WORKING_SET: &str = "Metal (MTLDevice recommendedMaxWorkingSetSize)";
/// `vm_stat`: Swapouts × its page size.
pub const VM_STAT_SWAPOUTS: &str = "vm_stat (Swapouts × page size)";
