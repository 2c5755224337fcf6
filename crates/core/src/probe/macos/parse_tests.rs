use super::*;
use crate::probe::macos::parse_process::*;

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
    assert_eq!(pct_from_level(37), 37.0);
    assert_eq!(pct_from_level(0), 0.0);
    assert_eq!(pct_from_level(100), 100.0);
    assert_eq!(pct_from_level(-5), 0.0);
    assert_eq!(pct_from_level(250), 100.0);
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
        n < 100_000 && n * 3 >= crate::probe::naming::ARGS_READ_MAX,
        "{n}"
    );
}

/// Page counts of a `struct vm_statistics64` (revision 1), by field name,
/// as the kernel fills them: `free` is `free_count`, which already holds the
/// `speculative` pages (XNU `osfmk/kern/host.c`: `vm_page_free_count +
/// speculative_count`), so `free >= speculative`.
#[derive(Default)]
struct Vm {
    free: u32,
    active: u32,
    inactive: u32,
    wire: u32,
    purgeable: u32,
    speculative: u32,
    compressor: u32,
    throttled: u32,
    external: u32,
    internal: u32,
    uncompressed_in_compressor: u64,
}

/// The struct's bytes field by field as `<mach/vm_statistics.h>` declares
/// them (natural_t: 4 bytes, uint64_t: 8; no padding, every u64 falls on an
/// 8-byte boundary), then read as the `integer_t` array the probe gets.
fn vm_statistics64(v: &Vm) -> Vec<i32> {
    assert!(
        v.free >= v.speculative,
        "free_count holds the speculative pages"
    );
    let mut b = Vec::new();
    for n in [v.free, v.active, v.inactive, v.wire] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    // zero_fill_count … purges: lifetime counters, large and not read.
    for _ in 0..9 {
        b.extend_from_slice(&(u64::MAX / 3).to_le_bytes());
    }
    b.extend_from_slice(&v.purgeable.to_le_bytes());
    b.extend_from_slice(&v.speculative.to_le_bytes());
    // decompressions, compressions, swapins, swapouts.
    for _ in 0..4 {
        b.extend_from_slice(&(u64::MAX / 5).to_le_bytes());
    }
    for n in [v.compressor, v.throttled, v.external, v.internal] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.extend_from_slice(&v.uncompressed_in_compressor.to_le_bytes());
    assert_eq!(
        b.len(),
        HOST_VM_INFO64_COUNT * 4,
        "sizeof(vm_statistics64) rev 1"
    );
    let mut out: Vec<i32> = b
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    out.resize(HOST_VM_INFO64_BUFFER, 0);
    out
}

const PAGE: u64 = 16384;
const GIB: u64 = 1 << 30;

/// GiB in 16 KiB pages.
fn pages(gib: f64) -> u32 {
    (gib * GIB as f64 / PAGE as f64) as u32
}

/// A 48 GB Mac under load (a diffusion pipeline and a browser): little
/// free, most anonymous memory active, 6 GiB of compressor, swap in use.
fn loaded_48gb_mac() -> Vm {
    Vm {
        // vm_stat: "Pages free" 0.4 GiB, "Pages speculative" 0.2 GiB.
        free: pages(0.4) + pages(0.2),
        speculative: pages(0.2),
        active: pages(19.0),
        inactive: pages(17.5),
        wire: pages(4.2),
        purgeable: pages(0.3),
        compressor: pages(6.0),
        throttled: 0,
        external: pages(8.5),
        internal: pages(28.0),
        uncompressed_in_compressor: u64::from(pages(14.0)),
    }
}

#[test]
fn used_memory_is_app_plus_wired_plus_compressed_as_activity_monitor_counts_it() {
    let buf = vm_statistics64(&loaded_48gb_mac());
    let m = vm_memory(&buf, HOST_VM_INFO64_COUNT, PAGE).unwrap();
    let gib = |b: u64| (b as f64 / GIB as f64 * 100.0).round() / 100.0;
    assert_eq!(gib(m.app_bytes), 27.7, "internal − purgeable");
    assert_eq!(gib(m.wired_bytes), 4.2);
    assert_eq!(gib(m.compressed_bytes), 6.0);
    assert_eq!(gib(m.used_bytes()), 37.9, "Memory Used");
    assert_eq!(gib(m.free_bytes), 0.6, "free_count, speculative included");
    assert_eq!(gib(m.cached_bytes), 8.8, "external + purgeable");
    // The counts the kernel gave back decide: one short of internal_page_count.
    assert_eq!(vm_memory(&buf, INTERNAL_PAGE_COUNT_INDEX, PAGE), None);
    assert!(vm_memory(&buf, INTERNAL_PAGE_COUNT_INDEX + 1, PAGE).is_some());
    // macOS 26's larger struct: the fields have not moved.
    assert_eq!(vm_memory(&buf, 48, PAGE), Some(m));
    let usable = 48 * GIB - GIB / 2;
    let free = free_pct_of(&m, usable).unwrap();
    assert!((free - 1.26).abs() < 0.01, "{free}");
}

/// `vm_stat`'s lines for one struct, as `system_cmds`' `vm_stat.c` prints
/// them: "Pages free" is `free_count − speculative_count`.
fn vm_stat_free_and_speculative(v: &Vm) -> (u64, u64) {
    (u64::from(v.free - v.speculative), u64::from(v.speculative))
}

#[test]
fn free_memory_counts_the_speculative_pages_once_as_the_kernel_fills_free_count() {
    // Regression: free was free_count + speculative_count, counting the
    // read-ahead cache twice: right after a model's weights were read, GBs
    // of free memory that were not there.
    let vm = Vm {
        free: pages(1.5),
        speculative: pages(1.25),
        ..loaded_48gb_mac()
    };
    let m = vm_memory(&vm_statistics64(&vm), HOST_VM_INFO64_COUNT, PAGE).unwrap();
    let (free, speculative) = vm_stat_free_and_speculative(&vm);
    assert_eq!(
        m.free_bytes,
        (free + speculative) * PAGE,
        "vm_stat's two lines"
    );
    assert_eq!(m.free_bytes, u64::from(pages(1.5)) * PAGE, "top's unused");
}

#[test]
fn the_gap_on_a_loaded_mac_is_not_gigabytes_below_zero() {
    // Regression: used memory was the base less kern.memorystatus_level,
    // which counts active anonymous pages as available. On this Mac the
    // level is (active + inactive + free_count) / usable ≈ 78 % (XNU's
    // AVAILABLE_NON_COMPRESSED_MEMORY adds the kernel's free and speculative
    // counters; free_count holds both), so
    // "used" came out at ~10.5 GiB while the footprints summed to 33 GiB: a
    // gap of −22 GiB and a footprint coverage of 300 %.
    let vm = loaded_48gb_mac();
    let buf = vm_statistics64(&vm);
    let m = vm_memory(&buf, HOST_VM_INFO64_COUNT, PAGE).unwrap();
    let usable = 48 * GIB - GIB / 2;
    let level_pages = u64::from(vm.active + vm.inactive + vm.free);
    let level = (level_pages * PAGE * 100 / usable) as i32;
    assert_eq!(level, 78);
    let old = crate::probe::SystemSample {
        phys_bytes: 48 * GIB,
        usable_bytes: usable,
        free_pct: pct_from_level(level),
        ..Default::default()
    };
    let new = crate::probe::SystemSample {
        free_pct: free_pct_of(&m, usable).unwrap(),
        memory_used_bytes: Some(m.used_bytes()),
        available_pct: Some(pct_from_level(level)),
        ..old
    };
    // Footprints: app memory less what apps hold outside any footprint
    // (here 1.2 GiB), plus the compressed part at its full size, less what
    // the compressor shrank (14 GiB held in 6 GiB): 27.7 − 1.2 + 14 − 6 −
    // 1.5 (swapped out, still in footprints but not in RAM) ≈ 33 GiB.
    let process = |pid: u32, gib: f64| crate::probe::ProcessSample {
        pid,
        footprint_bytes: (gib * GIB as f64) as u64,
        ..Default::default()
    };
    let procs = [process(101, 21.0), process(102, 8.0), process(103, 4.0)];
    let old_gap = crate::step::detect::footprint_gap(&old, &procs);
    let new_gap = crate::step::detect::footprint_gap(&new, &procs);
    assert!(old_gap.unexplained_bytes < -20 * GIB as i64, "{old_gap:?}");
    assert!(old_gap.coverage > 2.9, "{old_gap:?}");
    // Within the tolerance: never more than 5 % of memory below zero.
    let tolerance = (48 * GIB / 20) as i64;
    assert!(new_gap.unexplained_bytes > -tolerance, "{new_gap:?}");
    assert!(new_gap.coverage < 1.05, "{new_gap:?}");
    // The guard's gate still reads the kernel's level.
    assert_eq!(new.available_pct(), 78.0);
    assert!(new.free_bytes() < GIB, "free is free: {}", new.free_bytes());
}

#[test]
fn procargs_are_not_asked_for_another_users_process() {
    // The size query answers for anyone; the read then fails with EINVAL
    // for another user's process unless we are root.
    assert!(procargs_readable(Some(501), 501));
    assert!(
        !procargs_readable(Some(0), 501),
        "root's process, as a user"
    );
    assert!(!procargs_readable(Some(502), 501));
    assert!(procargs_readable(Some(502), 0), "root reads anyone's");
    assert!(procargs_readable(None, 501), "owner unknown: tried");
}

/// `kern.memorystatus_vm_pressure_level` laid out as the kernel answers it:
/// `SYSCTL_OUT(req, &dispatch_level, sizeof(dispatch_level))` of a
/// `uint32_t` (XNU `bsd/kern/kern_memorystatus_notify.c`), little-endian on
/// both Apple targets. (Built from the source, not captured on a Mac.)
#[test]
fn pressure_level_is_the_dispatch_flag() {
    assert_eq!(parse_pressure_level(&[0x01, 0, 0, 0]), Some(Level::Normal));
    assert_eq!(parse_pressure_level(&[0x02, 0, 0, 0]), Some(Level::Warning));
    assert_eq!(
        parse_pressure_level(&[0x04, 0, 0, 0]),
        Some(Level::Critical)
    );
}

#[test]
fn pressure_level_unknown_or_short_is_none_not_normal() {
    // the internal enum (0 normal … 3 critical) is not this ABI; an older
    // kernel answering it, or a value this build does not know, is refused
    for bad in [[0u8, 0, 0, 0], [3, 0, 0, 0], [8, 0, 0, 0], [1, 0, 0, 1]] {
        assert_eq!(parse_pressure_level(&bad), None, "{bad:?}");
    }
    assert_eq!(parse_pressure_level(&[1, 0]), None);
    assert_eq!(parse_pressure_level(&[1, 0, 0, 0, 0, 0, 0, 0]), None);
}

#[test]
fn a_volumes_free_space_is_its_available_blocks_times_their_size() {
    // An APFS volume answers 4096-byte blocks; 50 GiB left for a writer.
    assert_eq!(volume_free_bytes(13_107_200, 4096), Some(50 << 30));
    assert_eq!(volume_free_bytes(0, 4096), Some(0));
    // A garbled answer overflows: nothing, not a wrapped figure.
    assert_eq!(volume_free_bytes(u64::MAX / 2, 4096), None);
}

#[test]
fn the_compressor_pool_is_sized_from_memory_as_xnu_sizes_it() {
    let pool = |gib: u64| compressor_pool_bytes(gib * GIB) / GIB;
    // 16× up to 4 GiB, 8× up to 8, 4× up to 32, else 2×, at most 192 GiB.
    assert_eq!(pool(4), 64);
    assert_eq!(pool(8), 64);
    assert_eq!(pool(16), 64);
    assert_eq!(pool(32), 128);
    assert_eq!(pool(48), 96);
    assert_eq!(pool(64), 128);
    assert_eq!(pool(128), 192);
    assert_eq!(pool(512), 192);
    assert_eq!(
        compressor_pool_bytes(u64::MAX),
        COMPRESSOR_POOL_CEILING_BYTES
    );
}

#[test]
fn swap_room_is_the_nearest_of_the_volume_the_files_and_the_pool() {
    use crate::probe::SwapWall;
    // 48 GB Mac, 30 GiB of swap in 31 GiB of files, 6 GiB compressed.
    let big_disk = swap_room(Some(800 * GIB), GIB, 30 * GIB, 6 * GIB, 48 * GIB);
    assert_eq!(big_disk.volume_bytes, Some(801 * GIB), "free + xsu_avail");
    assert_eq!(big_disk.files_bytes, 70 * GIB, "100 × 1 GiB − used");
    assert_eq!(big_disk.compressor_bytes, 60 * GIB, "96 − 30 − 6");
    assert_eq!(big_disk.nearest(), (SwapWall::Compressor, 60 * GIB));
    // 256 GB Mac: the pool is 192 GiB, the files' cap comes first.
    let big_mac = swap_room(Some(800 * GIB), 0, 20 * GIB, 4 * GIB, 256 * GIB);
    assert_eq!(big_mac.nearest(), (SwapWall::Files, 80 * GIB));
    // A nearly full disk is the wall; what the files hold free counts.
    let full_disk = swap_room(Some(GIB), GIB / 2, 5 * GIB, GIB, 16 * GIB);
    assert_eq!(full_disk.nearest(), (SwapWall::Volume, GIB + GIB / 2));
    // Unread volume: only the kernel's caps; past them, no room, no panic.
    let unread = swap_room(None, 0, 200 * GIB, u64::MAX, 16 * GIB);
    assert_eq!(unread.volume_bytes, None);
    assert_eq!(unread.nearest(), (SwapWall::Files, 0));
    assert_eq!(unread.compressor_bytes, 0);
    assert_eq!(SwapWall::Files.label(), "100 swap files, the kernel's cap");
}

/// macOS 26's revision 3 answer, laid out as `<mach/vm_statistics.h>`
/// declares it: revision 1, then `swapped_count` and the memory-tagging
/// `u64`s from `total_tag_storage_pages` (byte 160) on, 62 `integer_t`.
#[test]
fn tag_storage_pages_of_revision_3_stay_out_of_used_memory() {
    let mut rev1 = vm_statistics64(&loaded_48gb_mac());
    rev1.truncate(HOST_VM_INFO64_COUNT);
    let without = vm_memory(&rev1, HOST_VM_INFO64_COUNT, PAGE).unwrap();
    let mut b: Vec<u8> = rev1.iter().flat_map(|u| u.to_le_bytes()).collect();
    let tags: u64 = u64::from(pages(0.5)) | 1 << 40; // the high half is read too
    for v in [
        7u64, /* swapped_count */
        tags, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    ] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    assert_eq!(b.len(), HOST_VM_INFO64_REV3_COUNT * 4, "rev 3 is 248 bytes");
    assert_eq!(&b[160..168], &tags.to_le_bytes(), "total_tag_storage_pages");
    let mut buf: Vec<i32> = b
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    buf.resize(HOST_VM_INFO64_BUFFER, 0);
    let m = vm_memory(&buf, HOST_VM_INFO64_REV3_COUNT, PAGE).unwrap();
    assert_eq!(m.tag_storage_bytes, Some(tags * PAGE));
    assert_eq!(
        m.used_bytes(),
        without.used_bytes(),
        "Memory Used does not add the tag storage (its tag-holding pages are wired)"
    );
    // A kernel that answered only revision 2 (40): no tag figure.
    let rev2 = vm_memory(&buf, TOTAL_TAG_STORAGE_PAGES_INDEX, PAGE).unwrap();
    assert_eq!(rev2.tag_storage_bytes, None);
    assert_eq!(rev2.used_bytes(), without.used_bytes());
}

/// A `host_statistics64` answer of `count` entries with `swapouts` written
/// where a C compiler puts it in `struct vm_statistics64`, and the
/// neighbours (`swapins` before, `compressor_page_count` after) set to
/// values that must not be read.
fn vm_stats_with_swapouts(count: usize, swapouts: u64) -> Vec<i32> {
    let mut bytes = vec![0u8; HOST_VM_INFO64_BUFFER * 4];
    let at = std::mem::offset_of!(VmStatistics64Head, swapouts);
    let before = std::mem::offset_of!(VmStatistics64Head, swapins);
    let after = std::mem::offset_of!(VmStatistics64Head, compressor_page_count);
    bytes[at..at + 8].copy_from_slice(&swapouts.to_le_bytes());
    bytes[before..before + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    bytes[after..after + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut out: Vec<i32> = bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    out[count..].fill(0);
    out
}

#[test]
fn swap_written_is_swapouts_pages_times_the_page_size_at_the_c_layouts_offset() {
    assert_eq!(
        SWAPOUTS_INDEX * 4,
        std::mem::offset_of!(VmStatistics64Head, swapouts)
    );
    // 3 GiB written in 16 KiB pages, past 2^32 pages' worth of bytes: the
    // u64 is read whole, both halves.
    let pages = 3 * (1u64 << 30) / 16384 + (1 << 32);
    let buf = vm_stats_with_swapouts(38, pages);
    assert_eq!(swap_out_bytes(&buf, 38, 16384), Some(pages * 16384));
    // Revision 3's longer answer: the field has not moved.
    let buf = vm_stats_with_swapouts(HOST_VM_INFO64_REV3_COUNT, 7);
    assert_eq!(
        swap_out_bytes(&buf, HOST_VM_INFO64_REV3_COUNT, 4096),
        Some(7 * 4096)
    );
    // An answer that stops before the field says nothing, not zero.
    let buf = vm_stats_with_swapouts(30, 7);
    assert_eq!(swap_out_bytes(&buf, 30, 4096), None);
    // A corrupt count that overflows bytes is no figure, not a wrapped one.
    let buf = vm_stats_with_swapouts(38, u64::MAX / 2);
    assert_eq!(swap_out_bytes(&buf, 38, 16384), None);
}

/// The `PerformanceStatistics` of an Apple Silicon accelerator as IOKit
/// gives it (keys and values as `ioreg -r -c IOAccelerator` prints them:
/// `{"In use system memory (driver)"=0,"Alloc system memory"=4272832512,
/// …,"In use system memory"=1200357376}`), with the utilisation keys the
/// probe does not read.
fn apple_silicon_stats() -> Vec<(&'static str, i64)> {
    vec![
        ("In use system memory (driver)", 0),
        ("Alloc system memory", 4272832512),
        ("Tiler Utilization %", 12),
        ("recoveryCount", 0),
        ("Renderer Utilization %", 11),
        ("Device Utilization %", 14),
        ("In use system memory", 1200357376),
    ]
}

#[test]
fn gpu_memory_reads_the_three_keys_and_leaves_the_others_out() {
    let gpu = gpu_memory([apple_silicon_stats()]).unwrap();
    assert_eq!(
        gpu,
        GpuMemory {
            in_use_bytes: Some(1200357376),
            alloc_bytes: Some(4272832512),
            driver_in_use_bytes: Some(0),
            ..GpuMemory::default()
        }
    );
    // The limits are not the registry's: the probe adds them.
    assert_eq!(gpu.wired_limit_mb, None);
    assert_eq!(gpu.recommended_working_set_bytes, None);
}

#[test]
fn gpu_memory_sums_accelerators_and_keeps_a_key_absent_everywhere_absent() {
    let second = vec![("In use system memory", 100), ("Alloc system memory", 200)];
    let gpu = gpu_memory([apple_silicon_stats(), second]).unwrap();
    assert_eq!(gpu.in_use_bytes, Some(1200357376 + 100));
    assert_eq!(gpu.alloc_bytes, Some(4272832512 + 200));
    // Only the first gave the driver's part: its figure alone.
    assert_eq!(gpu.driver_in_use_bytes, Some(0));
    // No accelerator gives the driver's key: absent, not 0.
    let gpu = gpu_memory([vec![("In use system memory", 5)]]).unwrap();
    assert_eq!(
        (gpu.in_use_bytes, gpu.alloc_bytes, gpu.driver_in_use_bytes),
        (Some(5), None, None)
    );
}

#[test]
fn gpu_memory_is_none_without_an_accelerator_or_any_known_key() {
    let none: [Vec<(&str, i64)>; 0] = [];
    assert_eq!(gpu_memory(none), None);
    assert_eq!(gpu_memory([Vec::<(&str, i64)>::new()]), None);
    // An AMD GPU of an Intel Mac: other keys.
    let amd = vec![
        ("vramFreeBytes", 3221225472i64),
        ("vramUsedBytes", 1073741824),
        ("Device Utilization %", 17),
    ];
    assert_eq!(gpu_memory([amd]), None);
    // Keys match exactly: a near name is another key.
    assert_eq!(gpu_memory([vec![("in use system memory", 5i64)]]), None);
}

#[test]
fn gpu_memory_drops_a_negative_or_overflowing_figure_only() {
    let negative = vec![("In use system memory", -1i64), ("Alloc system memory", 7)];
    let gpu = gpu_memory([apple_silicon_stats(), negative]).unwrap();
    assert_eq!(gpu.in_use_bytes, None, "one bad value spoils the sum");
    assert_eq!(gpu.alloc_bytes, Some(4272832512 + 7));
    // Past any machine's memory (ioreg prints a negative as a huge u64).
    let huge = vec![
        ("In use system memory", u64::MAX),
        ("Alloc system memory", 1u64),
    ];
    assert_eq!(gpu_memory([huge]).unwrap().in_use_bytes, None);
    // Two values each within bounds whose sum is not.
    let half = crate::util::units::MAX_BYTES / 2 + 1;
    let gpu = gpu_memory([
        vec![("In use system memory", half), ("Alloc system memory", 1)],
        vec![("In use system memory", half)],
    ])
    .unwrap();
    assert_eq!((gpu.in_use_bytes, gpu.alloc_bytes), (None, Some(1)));
    // Nothing usable at all: no figure.
    assert_eq!(gpu_memory([vec![("In use system memory", -5i64)]]), None);
}

#[test]
fn wired_limit_sysctl_is_an_int_of_mib_never_negative() {
    assert_eq!(wired_limit_mb(&0i32.to_le_bytes()), Some(0));
    assert_eq!(wired_limit_mb(&57344i32.to_le_bytes()), Some(57344));
    assert_eq!(wired_limit_mb(&57344i64.to_le_bytes()), Some(57344));
    assert_eq!(wired_limit_mb(&(-1i32).to_le_bytes()), None);
    assert_eq!(wired_limit_mb(&[0, 1]), None);
    assert_eq!(wired_limit_mb(&[]), None);
    // 56 GiB set on a 64 GB Mac.
    assert_eq!(mib_to_bytes(57344), Some(56 << 30));
    assert_eq!(mib_to_bytes(0), Some(0));
    assert_eq!(mib_to_bytes(u64::MAX), None);
    assert_eq!(mib_to_bytes(u64::MAX >> 20), None, "past MAX_BYTES");
    let gpu = GpuMemory {
        wired_limit_mb: Some(57344),
        recommended_working_set_bytes: Some(48 << 30),
        ..GpuMemory::default()
    };
    assert_eq!(gpu.wired_limit_bytes(), mib_to_bytes(57344));
}

#[test]
fn metal_working_set_of_zero_or_past_any_machine_is_no_figure() {
    assert_eq!(working_set_bytes(51539607552), Some(51539607552));
    assert_eq!(working_set_bytes(0), None);
    assert_eq!(working_set_bytes(u64::MAX), None);
}
