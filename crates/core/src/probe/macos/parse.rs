//! Pure conversions of the macOS kernel's system-wide answers (`sysctl`,
//! `host_statistics64`), and the byte reading that those about one process
//! ([`super::parse_process`]) share.
//!
//! The macOS probe (`macos/reader.rs`, with its raw calls in `macos/ffi.rs`)
//! hands the bytes and integers it gets from the kernel to the functions
//! here. Nothing in this module calls the OS, so it is compiled and tested on
//! every platform — that is how the macOS arithmetic is covered by the Linux
//! test runs.
//!
//! Byte layouts are those of the two Apple targets, `aarch64-apple-darwin` and
//! `x86_64-apple-darwin`: 64-bit, **little-endian**. Integers are therefore
//! read with `from_le_bytes`, and the tests build their buffers the same way.

use crate::probe::pressure::Level;
use crate::probe::{GpuMemory, SwapRoom};
use crate::util::units::MAX_BYTES;

/// Size of `struct xsw_usage` (`<sys/sysctl.h>`), the answer to
/// `sysctl vm.swapusage`:
///
/// | offset | field | type |
/// |---|---|---|
/// | 0 | `xsu_total` | `u64` |
/// | 8 | `xsu_avail` | `u64` |
/// | 16 | `xsu_used` | `u64` |
/// | 24 | `xsu_pagesize` | `u32` |
/// | 28 | `xsu_encrypted` | `boolean_t` (`u32`) |
pub const XSW_USAGE_SIZE: usize = 32;

/// Index, in 4-byte `integer_t` units, of `compressor_page_count` in
/// `struct vm_statistics64` (`<mach/vm_statistics.h>`), the answer to
/// `host_statistics64(HOST_VM_INFO64)`. The head of the struct is:
///
/// | units | fields |
/// |---|---|
/// | 4 × `natural_t` = 4 | `free_count`, `active_count`, `inactive_count`, `wire_count` |
/// | 9 × `u64` = 18 | `zero_fill_count`, `reactivations`, `pageins`, `pageouts`, `faults`, `cow_faults`, `lookups`, `hits`, `purges` |
/// | 2 × `natural_t` = 2 | `purgeable_count`, `speculative_count` |
/// | 4 × `u64` = 8 | `decompressions`, `compressions`, `swapins`, `swapouts` |
/// | `natural_t` | **`compressor_page_count`** ← byte offset 128 |
///
/// No padding: every `u64` already falls on an 8-byte boundary. The field has
/// kept this place since `HOST_VM_INFO64_COUNT` was 38 (macOS 10.9) through
/// the larger struct of macOS 26.
pub const COMPRESSOR_PAGE_COUNT_INDEX: usize = 4 + 9 * 2 + 2 + 4 * 2;

/// Index, in `integer_t` units, of `wire_count` in `struct vm_statistics64`
/// (the fourth `natural_t` of the head shown above).
pub const WIRE_COUNT_INDEX: usize = 3;

/// The count the probe passes to `host_statistics64(HOST_VM_INFO64)`: 38,
/// `HOST_VM_INFO64_COUNT` of macOS 10.9 to 15 (`sizeof(vm_statistics64) /
/// sizeof(integer_t)`, xnu-11417 `<mach/host_info.h>`). Newer kernels grew the
/// struct and kept 38 as `HOST_VM_INFO64_REV1_COUNT` (`offsetof(…,
/// swapped_count) / sizeof(integer_t)`): asked for 38 they fill revision 1,
/// which holds `compressor_page_count` and `wire_count` (`vm_stats`,
/// `osfmk/kern/host.c`). Only macOS 26's `vm_stats` logs a count above its
/// own `HOST_VM_INFO64_COUNT` (62: "host_statistics64() count is larger
/// than expected"); xnu-11417's (macOS 15) has no such check, and a kernel
/// whose struct ends at revision 2 (40) makes it in DEVELOPMENT and DEBUG
/// builds only. So neither 62 nor 38 is ever logged by a released kernel.
pub const HOST_VM_INFO64_COUNT: usize = 38;

/// The count of revision 3 of `vm_statistics64` (macOS 26): revision 2
/// added `swapped_count` at 38, revision 3 the memory-tagging (MTE) pages
/// from `total_tag_storage_pages` at 40 through `compressed_tag_storage_bytes`,
/// 62 `integer_t` in all (`HOST_VM_INFO64_REV3_COUNT`, `<mach/host_info.h>`).
/// The probe asks for it first; a kernel that answers fewer (macOS 15 and
/// earlier, which log nothing for it) is asked for
/// [`HOST_VM_INFO64_COUNT`] from then on, to read no more than it fills.
pub const HOST_VM_INFO64_REV3_COUNT: usize = 62;

/// Index, in `integer_t` units, of `total_tag_storage_pages` (a `u64`,
/// byte offset 160) in revision 3.
pub const TOTAL_TAG_STORAGE_PAGES_INDEX: usize = 40;

/// How many `integer_t` the probe's answer buffer holds: room for a grown
/// struct, so that a kernel which answers more than the count asked (seen on
/// the macOS 27 beta, as `MIG_ARRAY_TOO_LARGE`) never writes past it.
pub const HOST_VM_INFO64_BUFFER: usize = 256;

/// `MIG_ARRAY_TOO_LARGE` of `<mach/mig_errors.h>`: the reply held a larger
/// array than the caller's count; the MIG stub copied the first `count`
/// entries. For `host_statistics64` those entries are the struct's head,
/// which is all the probe reads, so it is a success.
pub const MIG_ARRAY_TOO_LARGE: i32 = -307;

/// Whether a `host_statistics64` (or `task_info`) return code left usable
/// figures: `KERN_SUCCESS` (0), or [`MIG_ARRAY_TOO_LARGE`] with the first
/// `count` entries copied.
pub fn mach_answer_usable(kr: i32) -> bool {
    kr == 0 || kr == MIG_ARRAY_TOO_LARGE
}

/// Wired memory in bytes (`wire_count × vm.pagesize`) from a
/// `host_statistics64(HOST_VM_INFO64)` answer; `None` when the count does not
/// cover the field. Wired pages are held by the kernel and drivers and are
/// in no process's footprint.
pub fn wired_bytes(counts: &[i32], returned_count: usize, page_size: u64) -> Option<u64> {
    let valid = &counts[..returned_count.min(counts.len())];
    let pages = *valid.get(WIRE_COUNT_INDEX)? as u32;
    Some(u64::from(pages).saturating_mul(page_size))
}

/// Index, in `integer_t` units, of `swapouts` (a `u64`, the last of the
/// four after `speculative_count` in the head shown above
/// [`COMPRESSOR_PAGE_COUNT_INDEX`]).
pub const SWAPOUTS_INDEX: usize = COMPRESSOR_PAGE_COUNT_INDEX - 2;

/// Bytes written to the swap files since boot: `swapouts × vm.pagesize`
/// from a `host_statistics64(HOST_VM_INFO64)` answer. The kernel counts
/// the size of each compressed segment it wrote, in pages
/// (`VM_STAT_INCR_BY(swapouts, size >> PAGE_SHIFT)` once the write is done,
/// `vm_swapout_finish` in `osfmk/vm/vm_compressor_backing_store.c`), so
/// this is what reached the SSD; `vm_stat` prints the page count as
/// "Swapouts". `None` when the count does not cover the field or the
/// product overflows.
pub fn swap_out_bytes(counts: &[i32], returned_count: usize, page_size: u64) -> Option<u64> {
    let valid = &counts[..returned_count.min(counts.len())];
    u64_of(valid, SWAPOUTS_INDEX)?.checked_mul(page_size)
}

/// Indexes, in `integer_t` units, of the page counts of `struct
/// vm_statistics64` (revision 1, `<mach/vm_statistics.h>`) that
/// [`vm_memory`] reads; the head is laid out above
/// [`COMPRESSOR_PAGE_COUNT_INDEX`], and after `compressor_page_count` come
/// `throttled_count`, `external_page_count` and `internal_page_count`
/// (`natural_t` each), then `total_uncompressed_pages_in_compressor`.
pub const FREE_COUNT_INDEX: usize = 0;
pub(crate) const PURGEABLE_COUNT_INDEX: usize = 4 + 9 * 2;
/// `speculative_count`: read-ahead pages, already counted in `free_count`.
pub const SPECULATIVE_COUNT_INDEX: usize = PURGEABLE_COUNT_INDEX + 1;
pub(crate) const EXTERNAL_PAGE_COUNT_INDEX: usize = COMPRESSOR_PAGE_COUNT_INDEX + 2;
pub(crate) const INTERNAL_PAGE_COUNT_INDEX: usize = COMPRESSOR_PAGE_COUNT_INDEX + 3;

/// Physical memory by kind, in bytes, the way Activity Monitor and `vm_stat`
/// count it, from one `host_statistics64(HOST_VM_INFO64)` answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmMemory {
    /// `free_count`, which already holds the speculative pages (free pages
    /// holding read-ahead data nobody has used yet): XNU's
    /// `host_statistics64` fills it as `vm_page_free_count +
    /// speculative_count` (`osfmk/kern/host.c`), and `<mach/vm_statistics.h>`
    /// says "speculative pages are already accounted for in free_count".
    /// `vm_stat` prints it in two lines, "Pages free" (`free_count −
    /// speculative_count`) and "Pages speculative"; `top`'s "unused".
    pub free_bytes: u64,
    /// App memory: `internal_page_count − purgeable_count` (anonymous pages
    /// less those an app marked purgeable).
    pub app_bytes: u64,
    /// `wire_count`: the kernel's and drivers' pages.
    pub wired_bytes: u64,
    /// `compressor_page_count`: the physical pages the compressor occupies
    /// (not the larger uncompressed size of what it holds).
    pub compressed_bytes: u64,
    /// Cached files: `external_page_count + purgeable_count`.
    pub cached_bytes: u64,
    /// `total_tag_storage_pages` (revision 3, macOS 26): the pages that
    /// hold memory tags on a Mac with memory tagging (MTE); `None` where the
    /// kernel answered an older revision.
    pub tag_storage_bytes: Option<u64>,
}

impl VmMemory {
    /// Activity Monitor's "Memory Used": app memory + wired + compressed.
    /// Not the tag storage pages of macOS 26, which public monitors add:
    /// XNU's `host.c` (under `HAS_MTE`) takes only the tag-storage
    /// pages that hold no tags out of `wire_count`; those storing tags stay
    /// counted as wired, so adding the total likely counts them twice (up
    /// to 1/32 of memory on M5 Macs). Until a Mac shows what Activity
    /// Monitor counts, the figure is its own ([`VmMemory::tag_storage_bytes`],
    /// a `doctor` row).
    pub fn used_bytes(&self) -> u64 {
        self.app_bytes
            .saturating_add(self.wired_bytes)
            .saturating_add(self.compressed_bytes)
    }
}

/// [`VmMemory`] from a `host_statistics64(HOST_VM_INFO64)` answer; `None`
/// when the count does not reach `internal_page_count`.
pub fn vm_memory(counts: &[i32], returned_count: usize, page_size: u64) -> Option<VmMemory> {
    let valid = &counts[..returned_count.min(counts.len())];
    // natural_t: the bits are unsigned page counts.
    let pages = |i: usize| valid.get(i).map(|&v| u64::from(v as u32));
    let bytes = |p: u64| p.saturating_mul(page_size);
    let purgeable = pages(PURGEABLE_COUNT_INDEX)?;
    Some(VmMemory {
        free_bytes: bytes(pages(FREE_COUNT_INDEX)?),
        app_bytes: bytes(pages(INTERNAL_PAGE_COUNT_INDEX)?.saturating_sub(purgeable)),
        wired_bytes: bytes(pages(WIRE_COUNT_INDEX)?),
        compressed_bytes: bytes(pages(COMPRESSOR_PAGE_COUNT_INDEX)?),
        cached_bytes: bytes(pages(EXTERNAL_PAGE_COUNT_INDEX)?.saturating_add(purgeable)),
        tag_storage_bytes: (returned_count >= HOST_VM_INFO64_REV3_COUNT)
            .then(|| u64_of(valid, TOTAL_TAG_STORAGE_PAGES_INDEX))
            .flatten()
            .map(bytes),
    })
}

/// The `u64` at `integer_t` index `i` (two units, little-endian).
fn u64_of(units: &[i32], i: usize) -> Option<u64> {
    let (lo, hi) = (*units.get(i)? as u32, *units.get(i + 1)? as u32);
    Some(u64::from(lo) | u64::from(hi) << 32)
}

/// Free memory in % of `base_bytes` (`hw.memsize_usable`), from
/// [`VmMemory::free_bytes`]; `None` without a base.
pub fn free_pct_of(memory: &VmMemory, base_bytes: u64) -> Option<f64> {
    (base_bytes > 0).then(|| (memory.free_bytes as f64 * 100.0 / base_bytes as f64).min(100.0))
}

/// Reads a little-endian `u64` at `offset`, if the buffer holds it.
pub(super) fn u64_at(buf: &[u8], offset: usize) -> Option<u64> {
    let bytes = buf.get(offset..offset.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// Reads a little-endian `u32` at `offset`, if the buffer holds it.
pub(super) fn u32_at(buf: &[u8], offset: usize) -> Option<u32> {
    let bytes = buf.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// Free space of a volume for an unprivileged writer from `statfs`:
/// `f_bavail` blocks of `f_bsize` bytes (`struct statfs`,
/// `<sys/mount.h>`). `None` when the product overflows (no volume is that
/// large: a garbled answer).
pub fn volume_free_bytes(f_bavail: u64, f_bsize: u32) -> Option<u64> {
    f_bavail.checked_mul(u64::from(f_bsize))
}

/// Most swap files the macOS kernel makes: `VM_MAX_SWAP_FILE_NUM`
/// (`osfmk/vm/vm_compressor_backing_store.c`, macOS branch).
pub const MAX_SWAP_FILES: u64 = 100;
/// Largest swap file: `MAX_SWAP_FILE_SIZE` on macOS (same file).
pub const MAX_SWAP_FILE_BYTES: u64 = 1 << 30;
/// The compressor pool's ceiling on macOS: `VM_COMPRESSOR_MAX_POOL_SIZE`
/// (`osfmk/vm/vm_compressor.c`).
pub const COMPRESSOR_POOL_CEILING_BYTES: u64 = 192 << 30;

/// The compressor pool's size for `max_mem` bytes of memory, as
/// `vm_compressor_set_size` sets it on macOS (no `vm_compression_limit`
/// boot-arg): 16× up to 4 GiB, 8× up to 8, 4× up to 32, else 2×, capped at
/// [`COMPRESSOR_POOL_CEILING_BYTES`].
pub fn compressor_pool_bytes(max_mem: u64) -> u64 {
    const GIB: u64 = 1 << 30;
    let times = match max_mem {
        m if m <= 4 * GIB => 16,
        m if m <= 8 * GIB => 8,
        m if m <= 32 * GIB => 4,
        _ => 2,
    };
    max_mem
        .saturating_mul(times)
        .min(COMPRESSOR_POOL_CEILING_BYTES)
}

/// Room for swap before each wall (see [`SwapRoom`]): `volume_free` of the
/// swap volume (`None`: not read, then only the kernel's caps bind),
/// `xsu_avail` and `xsu_used` of `vm.swapusage`, the compressor's pages in
/// RAM in bytes, and `max_mem` (`hw.memsize_usable`).
pub fn swap_room(
    volume_free: Option<u64>,
    swap_avail: u64,
    swap_used: u64,
    compressed_bytes: u64,
    max_mem: u64,
) -> SwapRoom {
    let files_cap = MAX_SWAP_FILES * MAX_SWAP_FILE_BYTES;
    SwapRoom {
        volume_bytes: volume_free.map(|v| v.saturating_add(swap_avail)),
        files_bytes: files_cap.saturating_sub(swap_used),
        compressor_bytes: compressor_pool_bytes(max_mem)
            .saturating_sub(swap_used.saturating_add(compressed_bytes)),
    }
}

/// Swap figures of `sysctl vm.swapusage`: `(total, avail, used)` in bytes.
/// `None` when the kernel answered fewer than [`XSW_USAGE_SIZE`] bytes.
pub fn parse_xsw_usage(buf: &[u8]) -> Option<(u64, u64, u64)> {
    if buf.len() < XSW_USAGE_SIZE {
        return None;
    }
    Some((u64_at(buf, 0)?, u64_at(buf, 8)?, u64_at(buf, 16)?))
}

/// An unsigned integer answered by `sysctl`: 4 bytes (`CTLTYPE_INT`, e.g.
/// `vm.pagesize`) or 8 bytes (`CTLTYPE_QUAD`, e.g. `hw.memsize`). `None` for
/// any other length.
pub fn parse_sysctl_uint(buf: &[u8]) -> Option<u64> {
    match buf.len() {
        4 => u32_at(buf, 0).map(u64::from),
        8 => u64_at(buf, 0),
        _ => None,
    }
}

/// A signed 32-bit integer answered by `sysctl` (e.g.
/// `kern.memorystatus_level`). `None` unless exactly 4 bytes came back.
pub fn parse_sysctl_i32(buf: &[u8]) -> Option<i32> {
    let bytes: [u8; 4] = buf.try_into().ok()?;
    Some(i32::from_le_bytes(bytes))
}

/// `kern.memorystatus_vm_pressure_level`: a `uint32_t` the kernel converts
/// from its internal level to the dispatch flags
/// (`convert_internal_pressure_level_to_dispatch_level` in XNU
/// `bsd/kern/kern_memorystatus_notify.c`): `NOTE_MEMORYSTATUS_PRESSURE_NORMAL`
/// 0x1, `_WARN` 0x2 (internal Warning and Urgent), `_CRITICAL` 0x4. `None`
/// for anything else — an unknown value is not "normal".
pub fn parse_pressure_level(buf: &[u8]) -> Option<Level> {
    Level::from_dispatch(u32::from_le_bytes(buf.try_into().ok()?))
}

/// `kern.memorystatus_level` (already a percentage: pages neither wired
/// nor compressed, of `hw.memsize_usable`), clamped to `0..=100`.
pub fn pct_from_level(level: i32) -> f64 {
    f64::from(level.clamp(0, 100))
}

/// Bytes held by the compressor, from the `integer_t` array that
/// `host_statistics64(HOST_VM_INFO64)` filled. `returned_count` is the count
/// the kernel wrote back: only that many entries are valid (it is clamped to
/// the buffer). `None` when the answer is too short to hold
/// `compressor_page_count` (index [`COMPRESSOR_PAGE_COUNT_INDEX`]). The count
/// is in kernel pages, hence `page_size` (`vm.pagesize`).
pub fn compressed_bytes(counts: &[i32], returned_count: usize, page_size: u64) -> Option<u64> {
    let valid = &counts[..returned_count.min(counts.len())];
    // natural_t: the bits are an unsigned page count.
    let pages = *valid.get(COMPRESSOR_PAGE_COUNT_INDEX)? as u32;
    Some(u64::from(pages).saturating_mul(page_size))
}

/// A NUL-terminated C string in a fixed buffer (e.g. `pbsi_comm`, the
/// `gethostname` answer) as a `String`; without a NUL the whole buffer is
/// taken. Invalid UTF-8 is replaced, never an error.
pub fn comm_to_string(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The memory `kern.memorystatus_level` is a percentage of: usable memory,
/// `hw.memsize_usable` (XNU's `max_mem`; `vm_pressure_response` in
/// `osfmk/vm/vm_pageout.c` divides available pages by `atop(max_mem)`),
/// where the kernel has that sysctl; `hw.memsize` (`max_mem_actual`, the
/// physical size, `bsd/kern/kern_mib.c`) otherwise.
pub fn level_base_bytes(memsize: u64, memsize_usable: Option<u64>) -> u64 {
    memsize_usable
        .filter(|&u| u > 0 && u <= memsize)
        .unwrap_or(memsize)
}

/// "In use system memory" of an IOAccelerator service's
/// `PerformanceStatistics` dictionary (IOKit registry, class
/// `IOAccelerator`): system memory the GPU's allocations hold now. The keys
/// are the driver's, not a documented API; public code that reads them:
/// cemlyn007/apple-gpu (`apple_gpu/_src.py`:
/// `IORegistryEntryCreateCFProperties` of the `IOAccelerator` service, then
/// its `PerformanceStatistics`), and `ioreg -r -c IOAccelerator` prints them
/// on Apple Silicon as `"PerformanceStatistics" = {"In use system memory
/// (driver)"=0,"Alloc system memory"=4272832512,…,"In use system
/// memory"=1200357376}`. Intel and AMD drivers use other keys (`vramUsedBytes`,
/// …), which are not read.
pub const GPU_IN_USE_KEY: &str = "In use system memory";
/// "Alloc system memory": what the driver has allocated for the GPU.
pub const GPU_ALLOC_KEY: &str = "Alloc system memory";
/// "In use system memory (driver)": the driver's own part.
pub const GPU_DRIVER_IN_USE_KEY: &str = "In use system memory (driver)";
/// The keys [`gpu_memory`] reads; any other key is left out.
pub const GPU_KEYS: [&str; 3] = [GPU_IN_USE_KEY, GPU_ALLOC_KEY, GPU_DRIVER_IN_USE_KEY];

/// One figure summed over the accelerators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Summed {
    /// No accelerator gave the key.
    Absent,
    Bytes(u64),
    /// A value was negative, beyond [`MAX_BYTES`], or the sum overflowed:
    /// the figure is dropped, never a wrong number.
    Garbled,
}

impl Summed {
    fn add(self, value: Option<u64>) -> Summed {
        match (self, value) {
            (Summed::Garbled, _) | (_, None) => Summed::Garbled,
            (Summed::Absent, Some(v)) => Summed::Bytes(v),
            (Summed::Bytes(sum), Some(v)) => sum
                .checked_add(v)
                .filter(|&s| s <= MAX_BYTES)
                .map_or(Summed::Garbled, Summed::Bytes),
        }
    }

    fn bytes(self) -> Option<u64> {
        match self {
            Summed::Bytes(b) => Some(b),
            Summed::Absent | Summed::Garbled => None,
        }
    }
}

/// The GPU's memory figures ([`GPU_KEYS`]) summed over the accelerators,
/// each given as the `(key, value)` pairs of its `PerformanceStatistics`:
/// the probe passes IOKit's `CFNumber`s as `i64`, the doctor `ioreg`'s
/// printed numbers as `u64`. A key no accelerator gives stays `None`; a
/// negative or overflowing value drops its figure (checked arithmetic);
/// unknown keys are ignored. `None` when no figure is left, as on a Mac
/// whose accelerators use other keys.
pub fn gpu_memory<A, K, V>(accelerators: impl IntoIterator<Item = A>) -> Option<GpuMemory>
where
    A: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: TryInto<u64>,
{
    let mut sums = [Summed::Absent; GPU_KEYS.len()];
    for (key, value) in accelerators.into_iter().flatten() {
        if let Some(i) = GPU_KEYS.iter().position(|k| *k == key.as_ref()) {
            let bytes = value.try_into().ok().filter(|&v| v <= MAX_BYTES);
            sums[i] = sums[i].add(bytes);
        }
    }
    let gpu = GpuMemory {
        in_use_bytes: sums[0].bytes(),
        alloc_bytes: sums[1].bytes(),
        driver_in_use_bytes: sums[2].bytes(),
        ..GpuMemory::default()
    };
    (!gpu.is_empty()).then_some(gpu)
}

/// `sysctl iogpu.wired_limit_mb` (an `int`, 4 bytes; 8 accepted): the
/// GPU's wired limit in MiB as set, 0 for the default. `None` for a
/// negative value or another length.
pub fn wired_limit_mb(buf: &[u8]) -> Option<u64> {
    match buf.len() {
        4 => u64::try_from(i32::from_le_bytes(buf.try_into().ok()?)).ok(),
        8 => u64::try_from(i64::from_le_bytes(buf.try_into().ok()?)).ok(),
        _ => None,
    }
}

/// MiB (`iogpu.wired_limit_mb`) in bytes; `None` past [`MAX_BYTES`].
pub fn mib_to_bytes(mib: u64) -> Option<u64> {
    mib.checked_mul(1 << 20).filter(|&b| b <= MAX_BYTES)
}

/// Metal's `recommendedMaxWorkingSetSize` as a figure: `None` for 0 (no
/// device gives that; it would read as "the GPU may hold nothing") or past
/// [`MAX_BYTES`].
pub fn working_set_bytes(bytes: u64) -> Option<u64> {
    (bytes > 0 && bytes <= MAX_BYTES).then_some(bytes)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
