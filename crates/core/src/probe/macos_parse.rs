//! Pure conversions of macOS kernel answers.
//!
//! The macOS probe (`macos/mod.rs`, with its raw calls in `macos/ffi.rs`)
//! hands the bytes and integers it gets from the kernel to the functions
//! here. Nothing in this module calls the OS, so it is compiled and tested on
//! every platform — that is how the macOS arithmetic is covered by the Linux
//! test runs.
//!
//! Byte layouts are those of the two Apple targets, `aarch64-apple-darwin` and
//! `x86_64-apple-darwin`: 64-bit, **little-endian**. Integers are therefore
//! read with `from_le_bytes`, and the tests build their buffers the same way.

/// `MAXCOMLEN` of `<sys/param.h>`: size of `pbsi_comm`/`p_comm` as exported by
/// `proc_pidinfo` (the kernel keeps at most `MAXCOMLEN - 1` characters there,
/// plus the terminating NUL).
pub const MAXCOMLEN: usize = 16;

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
/// `osfmk/kern/host.c`). A count above the kernel's `HOST_VM_INFO64_COUNT`
/// makes it log "host_statistics64() count is larger than expected" on every
/// call.
pub const HOST_VM_INFO64_COUNT: usize = 38;

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

/// Extra pid slots on top of the kernel's estimate, so processes started
/// between the sizing call and the listing call still fit.
pub const PID_SLACK: usize = 64;

/// Size of the buffer `proc_pidpath` wants (`PROC_PIDPATHINFO_MAXSIZE`).
pub const PID_PATH_MAX: usize = 4096;

/// Reads a little-endian `u64` at `offset`, if the buffer holds it.
fn u64_at(buf: &[u8], offset: usize) -> Option<u64> {
    let bytes = buf.get(offset..offset.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// Reads a little-endian `u32` at `offset`, if the buffer holds it.
fn u32_at(buf: &[u8], offset: usize) -> Option<u32> {
    let bytes = buf.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
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

/// Free memory in percent from `kern.memorystatus_level` (already a
/// percentage), clamped to `0..=100`.
pub fn free_pct_from_level(level: i32) -> f64 {
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

/// The executable's name from a `proc_pidpath` answer: the last path
/// component. Stops at a NUL, ignores a trailing `/`; empty for an empty path.
pub fn name_from_path(path: &[u8]) -> String {
    let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
    let mut path = &path[..end];
    while let [rest @ .., b'/'] = path {
        path = rest;
    }
    let start = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    String::from_utf8_lossy(&path[start..]).into_owned()
}

/// Whether `comm` is as long as the kernel keeps (`MAXCOMLEN - 1` bytes), so
/// the real name may be longer: only then is `proc_pidpath` worth a call.
pub fn comm_may_be_cut(comm: &str) -> bool {
    comm.len() >= MAXCOMLEN - 1
}

/// The name to show for a process, from its `comm` (short BSD name) and the
/// last component of its executable path (either may be empty).
///
/// `comm` is preferred, except when it is empty, or when it is cut short at
/// `MAXCOMLEN - 1` characters and the path's name continues it (e.g. comm
/// `com.apple.WebKi`, path name `com.apple.WebKit.WebContent`): then the path
/// name is the full one.
pub fn choose_name(comm: &str, path_name: &str) -> String {
    if comm.is_empty()
        || (comm_may_be_cut(comm) && path_name.len() > comm.len() && path_name.starts_with(comm))
    {
        path_name.to_owned()
    } else {
        comm.to_owned()
    }
}

/// Start time of a process in µs since the epoch, from the `struct
/// kinfo_proc` answered by `sysctl {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid}`
/// (readable for every user's processes, unlike `PROC_PIDTBSDINFO`).
///
/// `kinfo_proc` starts with `struct extern_proc`, which starts with the union
/// `p_un` whose `__p_starttime` is a `struct timeval`: `tv_sec` (`i64`) at
/// offset 0, `tv_usec` (`i32`, then 4 bytes of padding) at offset 8.
///
/// `None` when the kernel answered fewer than 16 bytes (it answers 0 bytes,
/// not an error, for a pid that no longer exists) or a negative time.
pub fn start_time_from_kinfo_proc(buf: &[u8]) -> Option<u64> {
    if buf.len() < 16 {
        return None;
    }
    let sec = u64_at(buf, 0)? as i64;
    let usec = u32_at(buf, 8)? as i32;
    timeval_to_us(sec, usec)
}

/// A `struct timeval` as µs since the epoch; `None` if negative.
pub fn timeval_to_us(sec: i64, usec: i32) -> Option<u64> {
    let sec = u64::try_from(sec).ok()?;
    let usec = u64::try_from(usec).ok()?;
    sec.checked_mul(1_000_000)?.checked_add(usec)
}

/// How many pid slots to offer `proc_listallpids`, from the kernel's estimate
/// (the answer to a call with a null buffer; negative on error).
pub fn pid_capacity(estimate: i32) -> usize {
    usize::try_from(estimate).unwrap_or(0) + PID_SLACK
}

/// Whether a `proc_listallpids` answer of `returned` pids into `capacity`
/// slots may have been cut short (the buffer was full): then list again with
/// a larger buffer.
pub fn pid_list_full(returned: usize, capacity: usize) -> bool {
    returned >= capacity
}

/// `TASK_VM_INFO`, the `task_info` flavor of `<mach/task_info.h>`.
pub const TASK_VM_INFO: u32 = 22;

/// The count the probe passes to `task_info(TASK_VM_INFO)` first:
/// `TASK_VM_INFO_REV7_COUNT` = `TASK_VM_INFO_COUNT` of xnu-11215 and later,
/// `sizeof(struct task_vm_info) / sizeof(natural_t)` = 376 / 4. A kernel with
/// a smaller struct answers its own count, which the probe then passes from
/// the next call on (a count above the kernel's `TASK_VM_INFO_COUNT` makes
/// it log "possibly invalid task_info_count", `osfmk/kern/task.c`).
pub const TASK_VM_INFO_REV7_COUNT: usize = 94;

/// Byte offsets in `struct task_vm_info` (`osfmk/mach/task_info.h`,
/// xnu-11417), on both Apple targets (`mach_vm_size_t` and `int64_t` are 8
/// bytes, aligned to 8; `integer_t` is 4):
///
/// | offset | field | revision |
/// |---|---|---|
/// | 0 | `virtual_size` | 0 |
/// | 8, 12 | `region_count`, `page_size` (`integer_t`) | 0 |
/// | 16 … 112 | `resident_size` … `purgeable_volatile_virtual` (13 × 8) | 0 |
/// | 120 | `compressed` | 0 |
/// | 128, 136 | `compressed_peak`, `compressed_lifetime` | 0 |
/// | 144 | `phys_footprint` | 1 |
/// | 152, 160 | `min_address`, `max_address` | 2 |
/// | 168 | `ledger_phys_footprint_peak` | 3 |
/// | 176 … 232 | purgeable and `network` tag ledgers (8 × 8) | 3 |
/// | 240 … 264 | `ledger_tag_media_{footprint, footprint_compressed, nofootprint, nofootprint_compressed}` | 3 |
/// | 272 … 296 | `ledger_tag_graphics_…`, same four | 3 |
/// | 304 … 328 | `ledger_tag_neural_…`, same four | 3 |
/// | 336 | `limit_bytes_remaining` | 4 |
/// | 344 | `decompressions` (`integer_t`), then 4 bytes of padding | 5 |
/// | 352 | `ledger_swapins` | 6 |
/// | 360, 368 | `ledger_tag_neural_nofootprint_{total, peak}` | 7 |
pub mod task_vm_info_offsets {
    pub const COMPRESSED: usize = 120;
    pub const PHYS_FOOTPRINT: usize = 144;
    pub const LEDGER_PHYS_FOOTPRINT_PEAK: usize = 168;
    pub const TAG_MEDIA: usize = 240;
    pub const TAG_GRAPHICS: usize = 272;
    pub const TAG_NEURAL: usize = 304;
    pub const DECOMPRESSIONS: usize = 344;
    pub const LEDGER_SWAPINS: usize = 352;
}

/// The revision of a `task_info(TASK_VM_INFO)` answer, from the count the
/// kernel wrote back; `None` below revision 0 (the kernel then fails the
/// call anyway).
///
/// The kernel answers its `TASK_VM_INFO_REVn_COUNT` for the newest revision
/// that fits the caller's count (`osfmk/kern/task.c`, `task_info`). Those
/// counts are derived from `sizeof` and shifted by one when revision 5 added
/// a 4-byte `decompressions` before 8-byte-aligned fields:
///
/// | revision | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 |
/// |---|---|---|---|---|---|---|---|---|
/// | count, xnu before 6153 (no rev 5) | 36 | 38 | 42 | 84 | 86 | – | – | – |
/// | count, xnu 6153 and later | 37 | 39 | 43 | 85 | 87 | 88 | 90 | 94 |
///
/// Both columns map to the same revision here; every field of revision n
/// ends at or before 4 × (its smaller count), so a field is read only when
/// the kernel filled it.
pub fn task_vm_info_revision(count: usize) -> Option<u8> {
    Some(match count {
        94.. => 7,
        90.. => 6,
        88.. => 5,
        86.. => 4,
        84.. => 3,
        42.. => 2,
        38.. => 1,
        36.. => 0,
        _ => return None,
    })
}

/// One ledger tag's four balances (bytes) in `struct task_vm_info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagLedgers {
    /// Resident memory of this tag charged to the task's footprint.
    pub footprint: u64,
    /// The same, held by the compressor (in RAM or swapped out).
    pub footprint_compressed: u64,
    /// Resident memory of this tag the task owns but that is **not** in its
    /// footprint (`vo_no_footprint`, `osfmk/vm/vm_object.c`
    /// `vm_object_ledger_tag_ledgers`).
    pub nofootprint: u64,
    /// The same, held by the compressor.
    pub nofootprint_compressed: u64,
}

impl TagLedgers {
    /// Everything of this tag the task owns, in or out of its footprint.
    pub fn total(&self) -> u64 {
        self.footprint
            .saturating_add(self.footprint_compressed)
            .saturating_add(self.nofootprint)
            .saturating_add(self.nofootprint_compressed)
    }

    /// What of this tag the task owns outside its footprint.
    pub fn outside_footprint(&self) -> u64 {
        self.nofootprint.saturating_add(self.nofootprint_compressed)
    }
}

/// What swapsight keeps of one `task_info(TASK_VM_INFO)` answer. Fields of a
/// revision the kernel did not fill are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskVmInfo {
    pub revision: u8,
    /// `compressed`: bytes of this task's memory held by the compressor, in
    /// RAM or paged out to the swap files (revision 0).
    pub compressed: u64,
    /// `phys_footprint` (revision 1); the same figure as `ri_phys_footprint`.
    pub phys_footprint: Option<u64>,
    /// `ledger_phys_footprint_peak`: the footprint's lifetime maximum
    /// (revision 3).
    pub phys_footprint_peak: Option<u64>,
    /// Ledger tags (revision 3). "graphics" is memory a driver tagged as
    /// graphics memory for this task (IOKit `kIOMemoryLedgerTagGraphics`);
    /// that Metal buffers are tagged so is likely but not established from
    /// the sources.
    pub graphics: Option<TagLedgers>,
    pub neural: Option<TagLedgers>,
    pub media: Option<TagLedgers>,
    /// `decompressions` of the task and its threads, capped at `i32::MAX`
    /// by the kernel (revision 5): pages taken back from the compressor,
    /// from RAM or from swap.
    pub decompressions: Option<u64>,
    /// `ledger_swapins`: bytes this task brought back from the swap files
    /// (`PAGE_SIZE` per page, credited in `c_decompress_page`,
    /// `osfmk/vm/vm_compressor.c`; revision 6). Cumulative.
    pub swapins: Option<u64>,
}

/// Reads the `int64_t`/`mach_vm_size_t` at byte `offset` from the
/// `integer_t` array `task_info` filled (two little-endian halves);
/// negative ledger balances read as 0.
fn word_u64(words: &[i32], offset: usize) -> Option<u64> {
    let i = offset / 4;
    let lo = *words.get(i)? as u32;
    let hi = *words.get(i.checked_add(1)?)? as u32;
    let v = u64::from(lo) | (u64::from(hi) << 32);
    Some(if (v as i64) < 0 { 0 } else { v })
}

fn tag_ledgers(words: &[i32], offset: usize) -> Option<TagLedgers> {
    Some(TagLedgers {
        footprint: word_u64(words, offset)?,
        footprint_compressed: word_u64(words, offset + 8)?,
        nofootprint: word_u64(words, offset + 16)?,
        nofootprint_compressed: word_u64(words, offset + 24)?,
    })
}

/// Parses a `task_info(TASK_VM_INFO)` answer: `words` is the `integer_t`
/// buffer, `count` the count the kernel wrote back (clamped to the buffer).
/// Each field is read only when the revision that `count` tells
/// ([`task_vm_info_revision`]) has it. `None` below revision 0.
pub fn parse_task_vm_info(words: &[i32], count: usize) -> Option<TaskVmInfo> {
    use task_vm_info_offsets as off;
    let words = &words[..count.min(words.len())];
    let revision = task_vm_info_revision(words.len())?;
    let at_least = |rev: u8, offset: usize| {
        if revision >= rev {
            word_u64(words, offset)
        } else {
            None
        }
    };
    let tags = |offset: usize| {
        if revision >= 3 {
            tag_ledgers(words, offset)
        } else {
            None
        }
    };
    Some(TaskVmInfo {
        revision,
        compressed: word_u64(words, off::COMPRESSED)?,
        phys_footprint: at_least(1, off::PHYS_FOOTPRINT),
        phys_footprint_peak: at_least(3, off::LEDGER_PHYS_FOOTPRINT_PEAK),
        graphics: tags(off::TAG_GRAPHICS),
        neural: tags(off::TAG_NEURAL),
        media: tags(off::TAG_MEDIA),
        decompressions: if revision >= 5 {
            words
                .get(off::DECOMPRESSIONS / 4)
                .map(|&d| u64::try_from(d).unwrap_or(0))
        } else {
            None
        },
        swapins: at_least(6, off::LEDGER_SWAPINS),
    })
}

impl TaskVmInfo {
    /// GPU memory: everything the task owns under the "graphics" ledger tag,
    /// in or out of its footprint, resident or compressed.
    pub fn gpu_bytes(&self) -> Option<u64> {
        self.graphics.map(|g| g.total())
    }

    /// Memory the task owns that its footprint does not count: the
    /// `*_nofootprint` balances (and their `_compressed`) of the graphics,
    /// neural and media tags. The "network" tag, never in the footprint, is
    /// left out: it holds network buffers, not what swapsight looks for.
    pub fn outside_footprint_bytes(&self) -> Option<u64> {
        let (g, n, m) = (self.graphics?, self.neural?, self.media?);
        Some(
            g.outside_footprint()
                .saturating_add(n.outside_footprint())
                .saturating_add(m.outside_footprint()),
        )
    }
}

/// `PROC_PIDUNIQIDENTIFIERINFO` (`bsd/sys/proc_info_private.h`), a
/// `proc_pidinfo` flavor every user may ask for any process
/// (`bsd/kern/proc_info.c`, "Certain operations don't require privileges").
pub const PROC_PIDUNIQIDENTIFIERINFO: i32 = 17;

/// `sizeof(struct proc_uniqidentifierinfo)`, asserted to be 56 by XNU:
/// `p_uuid[16]`, `p_uniqueid` (`u64`, offset 16), `p_puniqueid`,
/// `p_idversion`, `p_orig_ppidversion`, two reserved `u64`.
pub const PROC_UNIQIDENTIFIERINFO_SIZE: usize = 56;

/// `p_uniqueid` from a `proc_uniqidentifierinfo` answer: an id the kernel
/// never gives to two processes until reboot, unlike a pid. `None` for a
/// short answer.
pub fn parse_uniqueid(buf: &[u8]) -> Option<u64> {
    if buf.len() < PROC_UNIQIDENTIFIERINFO_SIZE {
        return None;
    }
    u64_at(buf, 16)
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

/// `kern.argmax` on macOS (`ARG_MAX`, `bsd/sys/syslimits.h`): the kernel
/// refuses a `KERN_PROCARGS2` buffer larger than this (plus the `argc`
/// word) with EINVAL.
pub const ARG_MAX: usize = 1024 * 1024;

/// A process's arguments from a `KERN_PROCARGS2` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcArgs<'a> {
    /// The path the process was executed by (`executable_path=` stripped
    /// by the kernel).
    pub exec_path: &'a [u8],
    pub argv: Vec<&'a [u8]>,
}

/// Parses `sysctl {CTL_KERN, KERN_PROCARGS2, pid}` as `sysctl_procargsx`
/// lays it out (XNU `bsd/kern/kern_sysctl.c`): `int argc` (native endian),
/// then the top of the process's stack — the executable path, NUL, NUL
/// padding to the next word, then `argc` NUL-terminated arguments, then the
/// environment (read no further: it may hold secrets). A process with the
/// no-read-procargs entitlement gets a synthetic answer of the same shape
/// (`sysctl_procargs_no_read`: argc 1, path, one NUL, the path again).
///
/// Arguments are taken until `argc` of them or [`super::naming::ARGS_READ_MAX`]
/// bytes; an argument cut by the end of the buffer is kept as far as it
/// goes. `None` for a buffer shorter than the `argc` word, a negative
/// `argc` or an empty path.
pub fn parse_procargs2(buf: &[u8]) -> Option<ProcArgs<'_>> {
    let argc = i32::from_ne_bytes(buf.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let rest = &buf[4..];
    let path_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let exec_path = &rest[..path_end];
    if exec_path.is_empty() {
        return None;
    }
    let mut at = path_end;
    while rest.get(at) == Some(&0) {
        at += 1;
    }
    let mut argv = Vec::new();
    let mut taken = 0usize;
    while argv.len() < argc && at < rest.len() && taken < super::naming::ARGS_READ_MAX {
        let tail = &rest[at..];
        let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        argv.push(&tail[..len]);
        taken = taken.saturating_add(len + 1);
        at = at.saturating_add(len + 1);
    }
    Some(ProcArgs { exec_path, argv })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds the bytes of a `struct xsw_usage` as the kernel lays it out.
    fn xsw(total: u64, avail: u64, used: u64, pagesize: u32, encrypted: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&avail.to_le_bytes());
        b.extend_from_slice(&used.to_le_bytes());
        b.extend_from_slice(&pagesize.to_le_bytes());
        b.extend_from_slice(&encrypted.to_le_bytes());
        b
    }

    #[test]
    fn xsw_usage_reads_total_avail_used() {
        const GIB: u64 = 1 << 30;
        let b = xsw(4 * GIB, 3 * GIB, GIB, 16384, 1);
        assert_eq!(b.len(), XSW_USAGE_SIZE);
        assert_eq!(parse_xsw_usage(&b), Some((4 * GIB, 3 * GIB, GIB)));
    }

    #[test]
    fn xsw_usage_with_no_swap_is_zeros() {
        assert_eq!(parse_xsw_usage(&xsw(0, 0, 0, 16384, 1)), Some((0, 0, 0)));
    }

    #[test]
    fn xsw_usage_short_answer_is_none() {
        let b = xsw(1, 2, 3, 4, 5);
        assert_eq!(parse_xsw_usage(&b[..31]), None);
        assert_eq!(parse_xsw_usage(&[]), None);
    }

    #[test]
    fn sysctl_uint_takes_int_and_quad() {
        assert_eq!(parse_sysctl_uint(&16384u32.to_le_bytes()), Some(16384));
        let mem = 48u64 << 30;
        assert_eq!(parse_sysctl_uint(&mem.to_le_bytes()), Some(mem));
        assert_eq!(parse_sysctl_uint(&[1, 2]), None);
        assert_eq!(parse_sysctl_uint(&[0; 16]), None);
    }

    #[test]
    fn sysctl_i32_needs_four_bytes() {
        assert_eq!(parse_sysctl_i32(&37i32.to_le_bytes()), Some(37));
        assert_eq!(parse_sysctl_i32(&(-1i32).to_le_bytes()), Some(-1));
        assert_eq!(parse_sysctl_i32(&[0; 8]), None);
    }

    #[test]
    fn free_pct_is_clamped() {
        assert_eq!(free_pct_from_level(37), 37.0);
        assert_eq!(free_pct_from_level(0), 0.0);
        assert_eq!(free_pct_from_level(100), 100.0);
        assert_eq!(free_pct_from_level(-5), 0.0);
        assert_eq!(free_pct_from_level(250), 100.0);
    }

    /// Mirror of the head of `struct vm_statistics64` as declared in
    /// `<mach/vm_statistics.h>`, to check the documented index against what
    /// a C compiler would lay out.
    #[allow(dead_code)]
    #[repr(C)]
    struct VmStatistics64Head {
        free_count: u32,
        active_count: u32,
        inactive_count: u32,
        wire_count: u32,
        zero_fill_count: u64,
        reactivations: u64,
        pageins: u64,
        pageouts: u64,
        faults: u64,
        cow_faults: u64,
        lookups: u64,
        hits: u64,
        purges: u64,
        purgeable_count: u32,
        speculative_count: u32,
        decompressions: u64,
        compressions: u64,
        swapins: u64,
        swapouts: u64,
        compressor_page_count: u32,
        throttled_count: u32,
        external_page_count: u32,
        internal_page_count: u32,
        total_uncompressed_pages_in_compressor: u64,
    }

    #[test]
    fn compressor_index_matches_struct_layout() {
        let offset = std::mem::offset_of!(VmStatistics64Head, compressor_page_count);
        assert_eq!(offset, 128);
        assert_eq!(COMPRESSOR_PAGE_COUNT_INDEX * 4, offset);
        // The struct of macOS 10.9 .. 15: HOST_VM_INFO64_COUNT = 38.
        assert_eq!(std::mem::size_of::<VmStatistics64Head>() / 4, 38);
    }

    /// Builds a `host_statistics64` answer: a 256-entry buffer whose first
    /// `count` entries hold a `vm_statistics64` with the given compressor
    /// page count, the rest left as the caller's zeros.
    fn vm_stats(count: usize, compressor_pages: u32) -> Vec<i32> {
        let mut bytes = vec![0u8; count * 4];
        let off = COMPRESSOR_PAGE_COUNT_INDEX * 4;
        if off + 4 <= bytes.len() {
            bytes[off..off + 4].copy_from_slice(&compressor_pages.to_le_bytes());
            // A neighbour that must not be read: swapouts (u64 just before).
            bytes[off - 8..off].copy_from_slice(&u64::MAX.to_le_bytes());
        }
        let mut out: Vec<i32> = bytes
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        out.resize(HOST_VM_INFO64_BUFFER, 0);
        out
    }

    #[test]
    fn compressed_bytes_multiplies_pages_by_page_size() {
        let buf = vm_stats(38, 100_000);
        assert_eq!(compressed_bytes(&buf, 38, 16384), Some(100_000 * 16384));
        assert_eq!(compressed_bytes(&buf, 38, 4096), Some(100_000 * 4096));
    }

    #[test]
    fn compressed_bytes_reads_larger_structs_of_newer_macos() {
        // macOS 26 answers more than 38 entries; the field has not moved.
        let buf = vm_stats(48, 7);
        assert_eq!(compressed_bytes(&buf, 48, 16384), Some(7 * 16384));
    }

    #[test]
    fn compressed_bytes_needs_the_count_to_cover_the_field() {
        let buf = vm_stats(38, 5);
        assert_eq!(
            compressed_bytes(&buf, COMPRESSOR_PAGE_COUNT_INDEX, 16384),
            None
        );
        assert_eq!(
            compressed_bytes(&buf, COMPRESSOR_PAGE_COUNT_INDEX + 1, 16384),
            Some(5 * 16384)
        );
        assert_eq!(compressed_bytes(&buf, 0, 16384), None);
        // A count larger than the buffer is clamped, not trusted.
        assert_eq!(compressed_bytes(&buf[..20], 38, 16384), None);
    }

    #[test]
    fn compressed_bytes_treats_count_as_unsigned() {
        let buf = vm_stats(38, 0x8000_0000);
        assert_eq!(
            compressed_bytes(&buf, 38, 4096),
            Some(0x8000_0000u64 * 4096)
        );
    }

    #[test]
    fn comm_stops_at_nul() {
        let mut comm = [0u8; MAXCOMLEN];
        comm[..6].copy_from_slice(b"python");
        assert_eq!(comm_to_string(&comm), "python");
        assert_eq!(comm_to_string(&[0u8; MAXCOMLEN]), "");
    }

    #[test]
    fn comm_without_nul_takes_all_and_replaces_bad_utf8() {
        assert_eq!(comm_to_string(b"0123456789abcdef"), "0123456789abcdef");
        assert_eq!(comm_to_string(&[b'a', 0xff, b'b', 0]), "a\u{fffd}b");
    }

    #[test]
    fn name_from_path_takes_last_component() {
        assert_eq!(
            name_from_path(b"/Applications/Safari.app/Contents/MacOS/Safari"),
            "Safari"
        );
        assert_eq!(name_from_path(b"/usr/bin/python3\0garbage"), "python3");
        assert_eq!(name_from_path(b"launchd"), "launchd");
        assert_eq!(name_from_path(b"/opt/tool/"), "tool");
        assert_eq!(name_from_path(b""), "");
        assert_eq!(name_from_path(b"/"), "");
    }

    #[test]
    fn comm_may_be_cut_at_fifteen_bytes() {
        assert!(!comm_may_be_cut("launchd"));
        assert!(!comm_may_be_cut("12345678901234"));
        assert!(comm_may_be_cut("123456789012345"));
    }

    #[test]
    fn choose_name_prefers_comm_unless_cut_short() {
        assert_eq!(choose_name("python3.12", "python3.12"), "python3.12");
        assert_eq!(choose_name("Safari", "Safari"), "Safari");
        // 15 characters: cut at MAXCOMLEN - 1; the path says more.
        assert_eq!(
            choose_name("com.apple.WebKi", "com.apple.WebKit.WebContent"),
            "com.apple.WebKit.WebContent"
        );
        // Cut short but the path is another program: keep comm.
        assert_eq!(choose_name("com.apple.WebKi", "other"), "com.apple.WebKi");
        // No comm: the path's name; neither: empty.
        assert_eq!(choose_name("", "kernel_task"), "kernel_task");
        assert_eq!(choose_name("", ""), "");
        assert_eq!(choose_name("launchd", ""), "launchd");
    }

    /// Builds the start of a `struct kinfo_proc` (648 bytes on 64-bit macOS)
    /// with `p_starttime` set.
    fn kinfo(sec: i64, usec: i32) -> Vec<u8> {
        let mut b = vec![0u8; 648];
        b[0..8].copy_from_slice(&sec.to_le_bytes());
        b[8..12].copy_from_slice(&usec.to_le_bytes());
        b[12..16].copy_from_slice(&0xdead_beefu32.to_le_bytes()); // padding
        b
    }

    #[test]
    fn start_time_from_kinfo_proc_is_microseconds() {
        let b = kinfo(1_700_000_000, 123_456);
        assert_eq!(start_time_from_kinfo_proc(&b), Some(1_700_000_000_123_456));
    }

    #[test]
    fn start_time_of_vanished_process_is_none() {
        // The kernel answers 0 bytes for a pid that no longer exists.
        assert_eq!(start_time_from_kinfo_proc(&[]), None);
        assert_eq!(start_time_from_kinfo_proc(&kinfo(1, 2)[..12]), None);
        assert_eq!(start_time_from_kinfo_proc(&kinfo(-1, 0)), None);
    }

    #[test]
    fn timeval_conversion() {
        assert_eq!(timeval_to_us(0, 0), Some(0));
        assert_eq!(timeval_to_us(2, 500_000), Some(2_500_000));
        assert_eq!(timeval_to_us(1, -1), None);
        assert_eq!(timeval_to_us(i64::MAX, 0), None);
    }

    #[test]
    fn pid_capacity_adds_slack() {
        assert_eq!(pid_capacity(500), 500 + PID_SLACK);
        assert_eq!(pid_capacity(0), PID_SLACK);
        assert_eq!(pid_capacity(-1), PID_SLACK);
    }

    #[test]
    fn pid_list_is_full_when_every_slot_was_used() {
        assert!(!pid_list_full(10, 64));
        assert!(pid_list_full(64, 64));
        assert!(pid_list_full(65, 64));
    }
    /// Mirror of `struct task_vm_info` as declared in `osfmk/mach/task_info.h`
    /// (xnu-11417, revision 7), so the offsets a C compiler gives each field
    /// check the documented table and lay out the test answers.
    #[allow(dead_code)]
    #[repr(C)]
    struct TaskVmInfoC {
        virtual_size: u64,
        region_count: i32,
        page_size: i32,
        resident_size: u64,
        resident_size_peak: u64,
        device: u64,
        device_peak: u64,
        internal: u64,
        internal_peak: u64,
        external: u64,
        external_peak: u64,
        reusable: u64,
        reusable_peak: u64,
        purgeable_volatile_pmap: u64,
        purgeable_volatile_resident: u64,
        purgeable_volatile_virtual: u64,
        compressed: u64,
        compressed_peak: u64,
        compressed_lifetime: u64,
        // rev1
        phys_footprint: u64,
        // rev2
        min_address: u64,
        max_address: u64,
        // rev3
        ledger_phys_footprint_peak: i64,
        ledger_purgeable_nonvolatile: i64,
        ledger_purgeable_novolatile_compressed: i64,
        ledger_purgeable_volatile: i64,
        ledger_purgeable_volatile_compressed: i64,
        ledger_tag_network_nonvolatile: i64,
        ledger_tag_network_nonvolatile_compressed: i64,
        ledger_tag_network_volatile: i64,
        ledger_tag_network_volatile_compressed: i64,
        ledger_tag_media_footprint: i64,
        ledger_tag_media_footprint_compressed: i64,
        ledger_tag_media_nofootprint: i64,
        ledger_tag_media_nofootprint_compressed: i64,
        ledger_tag_graphics_footprint: i64,
        ledger_tag_graphics_footprint_compressed: i64,
        ledger_tag_graphics_nofootprint: i64,
        ledger_tag_graphics_nofootprint_compressed: i64,
        ledger_tag_neural_footprint: i64,
        ledger_tag_neural_footprint_compressed: i64,
        ledger_tag_neural_nofootprint: i64,
        ledger_tag_neural_nofootprint_compressed: i64,
        // rev4
        limit_bytes_remaining: u64,
        // rev5
        decompressions: i32,
        // rev6
        ledger_swapins: i64,
        // rev7
        ledger_tag_neural_nofootprint_total: i64,
        ledger_tag_neural_nofootprint_peak: i64,
    }

    #[test]
    fn task_vm_info_offsets_match_the_c_layout() {
        use std::mem::{offset_of, size_of};
        use task_vm_info_offsets as off;
        assert_eq!(offset_of!(TaskVmInfoC, compressed), off::COMPRESSED);
        assert_eq!(offset_of!(TaskVmInfoC, phys_footprint), off::PHYS_FOOTPRINT);
        assert_eq!(
            offset_of!(TaskVmInfoC, ledger_phys_footprint_peak),
            off::LEDGER_PHYS_FOOTPRINT_PEAK
        );
        assert_eq!(
            offset_of!(TaskVmInfoC, ledger_tag_media_footprint),
            off::TAG_MEDIA
        );
        assert_eq!(
            offset_of!(TaskVmInfoC, ledger_tag_graphics_footprint),
            off::TAG_GRAPHICS
        );
        assert_eq!(
            offset_of!(TaskVmInfoC, ledger_tag_neural_footprint),
            off::TAG_NEURAL
        );
        assert_eq!(offset_of!(TaskVmInfoC, decompressions), off::DECOMPRESSIONS);
        // 4 bytes of padding after `decompressions`.
        assert_eq!(offset_of!(TaskVmInfoC, ledger_swapins), off::LEDGER_SWAPINS);
        // TASK_VM_INFO_COUNT (= REV7) and the counts derived from it by the
        // header's subtractions.
        let rev7 = size_of::<TaskVmInfoC>() / 4;
        assert_eq!(rev7, TASK_VM_INFO_REV7_COUNT);
        let rev6 = rev7 - 4;
        let rev5 = rev6 - 2;
        let rev4 = rev5 - 1;
        let rev3 = rev4 - 2;
        let rev2 = rev3 - 42;
        let rev1 = rev2 - 4;
        let rev0 = rev1 - 2;
        assert_eq!(
            [rev0, rev1, rev2, rev3, rev4, rev5, rev6, rev7],
            [37, 39, 43, 85, 87, 88, 90, 94]
        );
        for (rev, count) in [rev0, rev1, rev2, rev3, rev4, rev5, rev6, rev7]
            .into_iter()
            .enumerate()
        {
            assert_eq!(task_vm_info_revision(count), Some(rev as u8), "{count}");
        }
        // Kernels before revision 5 (xnu-4903): struct ends at 344 bytes.
        for (rev, count) in [36, 38, 42, 84, 86].into_iter().enumerate() {
            assert_eq!(task_vm_info_revision(count), Some(rev as u8), "{count}");
        }
        assert_eq!(task_vm_info_revision(35), None);
        assert_eq!(task_vm_info_revision(200), Some(7));
        // Every revision's last field ends within its smaller count.
        let ends = [
            (offset_of!(TaskVmInfoC, phys_footprint) + 8, 38),
            (offset_of!(TaskVmInfoC, max_address) + 8, 42),
            (
                offset_of!(TaskVmInfoC, ledger_tag_neural_nofootprint_compressed) + 8,
                84,
            ),
            (offset_of!(TaskVmInfoC, limit_bytes_remaining) + 8, 86),
            (offset_of!(TaskVmInfoC, decompressions) + 4, 88),
            (offset_of!(TaskVmInfoC, ledger_swapins) + 8, 90),
        ];
        for (end, count) in ends {
            assert!(end <= count * 4, "field ends at {end}, count {count}");
        }
    }

    /// Writes `value` at `offset` of a little-endian byte image.
    fn put(b: &mut [u8], offset: usize, value: &[u8]) {
        b[offset..offset + value.len()].copy_from_slice(value);
    }

    /// A `task_info(TASK_VM_INFO)` answer as the kernel leaves it in the
    /// caller's `integer_t` buffer: the struct's bytes, every field set to a
    /// distinct value, then cut to `count` entries (the rest of the buffer
    /// keeps what the caller put there: garbage here, to prove it is not
    /// read).
    fn task_vm_answer(count: usize) -> Vec<i32> {
        use std::mem::offset_of;
        const MIB: u64 = 1 << 20;
        let mut b = vec![0xa5u8; std::mem::size_of::<TaskVmInfoC>()];
        put(
            &mut b,
            offset_of!(TaskVmInfoC, resident_size),
            &(300 * MIB).to_le_bytes(),
        );
        put(
            &mut b,
            offset_of!(TaskVmInfoC, compressed),
            &(700 * MIB).to_le_bytes(),
        );
        put(
            &mut b,
            offset_of!(TaskVmInfoC, phys_footprint),
            &(1000 * MIB).to_le_bytes(),
        );
        put(
            &mut b,
            offset_of!(TaskVmInfoC, ledger_phys_footprint_peak),
            &(1200 * MIB).to_le_bytes(),
        );
        put(
            &mut b,
            offset_of!(TaskVmInfoC, ledger_tag_network_nonvolatile),
            &(5 * MIB).to_le_bytes(),
        );
        let tags = [
            (offset_of!(TaskVmInfoC, ledger_tag_media_footprint), 1u64),
            (offset_of!(TaskVmInfoC, ledger_tag_graphics_footprint), 100),
            (offset_of!(TaskVmInfoC, ledger_tag_neural_footprint), 10_000),
        ];
        for (base, unit) in tags {
            for (i, v) in [1u64, 2, 3, 4].into_iter().enumerate() {
                put(&mut b, base + 8 * i, &(v * unit * MIB).to_le_bytes());
            }
        }
        put(
            &mut b,
            offset_of!(TaskVmInfoC, limit_bytes_remaining),
            &u64::MAX.to_le_bytes(),
        );
        put(
            &mut b,
            offset_of!(TaskVmInfoC, decompressions),
            &123_456i32.to_le_bytes(),
        );
        put(
            &mut b,
            offset_of!(TaskVmInfoC, ledger_swapins),
            &(64 * MIB).to_le_bytes(),
        );
        let mut words: Vec<i32> = b
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for w in &mut words[count..] {
            *w = 0x5a5a_5a5a;
        }
        words.resize(128, 0x5a5a_5a5a);
        words
    }

    #[test]
    fn task_vm_info_rev7_reads_every_field() {
        const MIB: u64 = 1 << 20;
        let info = parse_task_vm_info(&task_vm_answer(94), 94).unwrap();
        assert_eq!(info.revision, 7);
        assert_eq!(info.compressed, 700 * MIB);
        assert_eq!(info.phys_footprint, Some(1000 * MIB));
        assert_eq!(info.phys_footprint_peak, Some(1200 * MIB));
        assert_eq!(
            info.graphics,
            Some(TagLedgers {
                footprint: 100 * MIB,
                footprint_compressed: 200 * MIB,
                nofootprint: 300 * MIB,
                nofootprint_compressed: 400 * MIB,
            })
        );
        assert_eq!(info.media.unwrap().nofootprint, 3 * MIB);
        assert_eq!(info.neural.unwrap().footprint_compressed, 20_000 * MIB);
        assert_eq!(info.decompressions, Some(123_456));
        assert_eq!(info.swapins, Some(64 * MIB));
        assert_eq!(info.gpu_bytes(), Some(1000 * MIB));
        // graphics 300+400, neural 30000+40000, media 3+4; network left out.
        assert_eq!(
            info.outside_footprint_bytes(),
            Some((700 + 70_000 + 7) * MIB)
        );
    }

    #[test]
    fn task_vm_info_reads_only_what_each_revision_has() {
        const MIB: u64 = 1 << 20;
        // macOS 12 (xnu-8019): revision 5, count 88; no ledger_swapins.
        let r5 = parse_task_vm_info(&task_vm_answer(88), 88).unwrap();
        assert_eq!(
            (r5.revision, r5.decompressions, r5.swapins),
            (5, Some(123_456), None)
        );
        // macOS 13..15: revision 6, count 90.
        let r6 = parse_task_vm_info(&task_vm_answer(90), 90).unwrap();
        assert_eq!((r6.revision, r6.swapins), (6, Some(64 * MIB)));
        // Revision 4 of a newer kernel (87) and of an older one (86): no
        // decompressions, though 87 entries cover its bytes.
        for count in [86, 87] {
            let r4 = parse_task_vm_info(&task_vm_answer(count), count).unwrap();
            assert_eq!((r4.revision, r4.decompressions), (4, None));
            assert!(r4.graphics.is_some());
        }
        // Revision 2: footprint, no ledgers.
        let r2 = parse_task_vm_info(&task_vm_answer(43), 43).unwrap();
        assert_eq!(r2.phys_footprint, Some(1000 * MIB));
        assert_eq!((r2.graphics, r2.phys_footprint_peak), (None, None));
        assert_eq!((r2.gpu_bytes(), r2.outside_footprint_bytes()), (None, None));
        // Revision 0: compressed only.
        let r0 = parse_task_vm_info(&task_vm_answer(36), 36).unwrap();
        assert_eq!((r0.compressed, r0.phys_footprint), (700 * MIB, None));
        assert_eq!(parse_task_vm_info(&task_vm_answer(94), 35), None);
        // A count larger than the buffer is clamped, not trusted.
        assert_eq!(
            parse_task_vm_info(&task_vm_answer(94)[..40], 94)
                .unwrap()
                .revision,
            1
        );
    }

    #[test]
    fn task_vm_info_negative_ledgers_and_decompressions_read_as_zero() {
        use std::mem::offset_of;
        let mut w = task_vm_answer(94);
        let g = offset_of!(TaskVmInfoC, ledger_tag_graphics_nofootprint) / 4;
        w[g] = -1;
        w[g + 1] = -1;
        w[offset_of!(TaskVmInfoC, decompressions) / 4] = -5;
        let info = parse_task_vm_info(&w, 94).unwrap();
        assert_eq!(info.graphics.unwrap().nofootprint, 0);
        assert_eq!(info.decompressions, Some(0));
    }

    #[test]
    fn mach_answers_and_wired() {
        assert!(mach_answer_usable(0));
        assert!(mach_answer_usable(MIG_ARRAY_TOO_LARGE));
        assert!(!mach_answer_usable(5)); // KERN_FAILURE
        let mut buf = vm_stats(38, 1);
        buf[WIRE_COUNT_INDEX] = 1000;
        assert_eq!(wired_bytes(&buf, 38, 16384), Some(1000 * 16384));
        assert_eq!(wired_bytes(&buf, 3, 16384), None);
        assert_eq!(
            HOST_VM_INFO64_COUNT,
            std::mem::size_of::<VmStatistics64Head>() / 4
        );
    }

    #[test]
    fn uniqueid_at_offset_16() {
        let mut b = vec![0xeeu8; PROC_UNIQIDENTIFIERINFO_SIZE];
        b[16..24].copy_from_slice(&0x1234_5678_9abcu64.to_le_bytes());
        assert_eq!(parse_uniqueid(&b), Some(0x1234_5678_9abc));
        assert_eq!(parse_uniqueid(&b[..55]), None);
    }

    #[test]
    fn level_base_prefers_usable_memory() {
        let gib = 1u64 << 30;
        assert_eq!(level_base_bytes(48 * gib, Some(47 * gib)), 47 * gib);
        assert_eq!(level_base_bytes(48 * gib, None), 48 * gib);
        assert_eq!(level_base_bytes(48 * gib, Some(0)), 48 * gib);
        assert_eq!(level_base_bytes(48 * gib, Some(64 * gib)), 48 * gib);
    }

    /// A `KERN_PROCARGS2` answer as `sysctl_procargsx` copies it out: argc,
    /// then the stack's string area — exec path, NUL padding to a word,
    /// argv, envp.
    fn procargs2(argc: i32, path: &str, pad: usize, argv: &[&str], env: &[&str]) -> Vec<u8> {
        let mut b = argc.to_ne_bytes().to_vec();
        b.extend_from_slice(path.as_bytes());
        b.extend(std::iter::repeat_n(0u8, 1 + pad));
        for a in argv.iter().chain(env) {
            b.extend_from_slice(a.as_bytes());
            b.push(0);
        }
        b
    }

    #[test]
    fn procargs2_gives_the_exec_path_and_argv_never_the_environment() {
        let b = procargs2(
            3,
            "/opt/homebrew/bin/python3.12",
            3,
            &["python3", "-u", "generate.py"],
            &["HF_TOKEN=secret", "PATH=/usr/bin"],
        );
        let a = parse_procargs2(&b).unwrap();
        assert_eq!(a.exec_path, b"/opt/homebrew/bin/python3.12");
        assert_eq!(a.argv, [b"python3".as_slice(), b"-u", b"generate.py"]);
        // The synthetic answer for a process that opts out.
        let b = procargs2(1, "/System/x", 0, &["/System/x"], &[]);
        let a = parse_procargs2(&b).unwrap();
        assert_eq!(
            (a.exec_path, a.argv),
            (b"/System/x".as_slice(), vec![b"/System/x".as_slice()])
        );
        // Empty arguments keep their place.
        let b = procargs2(3, "/bin/sh", 0, &["sh", "", "x"], &[]);
        assert_eq!(
            parse_procargs2(&b).unwrap().argv,
            [b"sh".as_slice(), b"", b"x"]
        );
    }

    #[test]
    fn procargs2_survives_short_and_lying_answers() {
        assert_eq!(parse_procargs2(b""), None);
        assert_eq!(parse_procargs2(&[1, 0, 0]), None);
        assert_eq!(
            parse_procargs2(&procargs2(-1, "/bin/x", 0, &["x"], &[])),
            None
        );
        assert_eq!(parse_procargs2(&procargs2(1, "", 0, &["x"], &[])), None);
        // argc larger than the strings there: as many as there are.
        let b = procargs2(i32::MAX, "/bin/x", 2, &["x", "y"], &[]);
        assert_eq!(parse_procargs2(&b).unwrap().argv, [b"x".as_slice(), b"y"]);
        // Cut mid-argument (no final NUL).
        let mut b = procargs2(2, "/bin/x", 0, &["x"], &[]);
        b.extend_from_slice(b"trunc");
        assert_eq!(
            parse_procargs2(&b).unwrap().argv,
            [b"x".as_slice(), b"trunc"]
        );
        // Only the path.
        let mut b = 5i32.to_ne_bytes().to_vec();
        b.extend_from_slice(b"/bin/x");
        let a = parse_procargs2(&b).unwrap();
        assert_eq!((a.exec_path, a.argv.len()), (b"/bin/x".as_slice(), 0));
        // A huge argv stops at the read cap.
        let many = vec!["-u"; 100_000];
        let b = procargs2(100_000, "/bin/x", 0, &many, &[]);
        let n = parse_procargs2(&b).unwrap().argv.len();
        assert!(
            n < 100_000 && n * 3 >= super::super::naming::ARGS_READ_MAX,
            "{n}"
        );
    }
}
