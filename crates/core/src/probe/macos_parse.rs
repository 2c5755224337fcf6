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

/// How many `integer_t` the probe offers `host_statistics64`. Larger than any
/// `vm_statistics64` so far: macOS 26 grew the struct, and a caller passing
/// the old count of 38 gets `MIG_ARRAY_TOO_LARGE` (-307).
pub const HOST_VM_INFO64_BUFFER: usize = 256;

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
}
