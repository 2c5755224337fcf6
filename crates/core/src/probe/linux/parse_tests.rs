use super::*;

const MEMINFO: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-meminfo.txt"
));
const STATUS: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-status-python.txt"
));
const STATUS_KTHREAD: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-status-kthread.txt"
));
/// `sleep` under `setpriv --reuid 65534`, and under `setpriv --ruid 65534
/// --euid 0` (real uid nobody, effective root, as a setuid program runs).
const STATUS_NOBODY: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-status-nobody.txt"
));
const STATUS_SETUID: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-status-setuid.txt"
));

#[test]
fn meminfo_figures_in_bytes() {
    let m = parse_meminfo(MEMINFO).unwrap();
    assert_eq!(m.mem_total_bytes, 24_608_420 * 1024);
    assert_eq!(m.mem_available_bytes, 23_866_996 * 1024);
    assert_eq!(m.swap_total_bytes, 1_048_572 * 1024);
    assert_eq!(m.swap_free_bytes, 86_012 * 1024);
    assert_eq!(m.swap_used_bytes(), (1_048_572 - 86_012) * 1024);
    let pct = m.free_pct();
    assert!((pct - 96.987).abs() < 0.01, "{pct}");
    // What processes hold: AnonPages + Shmem (ShmemHugePages is not Shmem).
    assert_eq!(m.anon_bytes(), Some((201_712 + 8_856) * 1024));
    // The tiered tick's movers: Shmem, Mapped (not ShmemPmdMapped or
    // FilePmdMapped, later lines ending the same), AnonPages, SwapCached.
    assert_eq!(
        m.movers(),
        crate::probe::tiers::Movers([
            Some(8_856 * 1024),
            Some(19_180 * 1024),
            Some(201_712 * 1024),
            Some(0),
        ])
    );
    assert_eq!(
        parse_meminfo(b"MemTotal: 1 kB\n").unwrap().anon_bytes(),
        None
    );
}

#[test]
fn meminfo_without_total_is_rejected() {
    assert_eq!(parse_meminfo(b"Foo: 1 kB\n"), None);
    assert_eq!(parse_meminfo(b""), None);
}

#[test]
fn free_pct_of_empty_meminfo_is_zero_not_nan() {
    assert_eq!(MemInfo::default().free_pct(), 0.0);
}

#[test]
fn status_footprint_is_anon_plus_shmem() {
    let s = parse_status(STATUS);
    assert_eq!(s.rss_anon_bytes, 253_952 * 1024);
    assert_eq!(s.rss_shmem_bytes, 128 * 1024);
    assert_eq!(s.vm_swap_bytes, Some(958_464 * 1024));
    assert_eq!(s.footprint_bytes(), (253_952 + 128) * 1024);
}

#[test]
fn kernel_thread_status_has_no_swap_line() {
    let s = parse_status(STATUS_KTHREAD);
    assert_eq!(
        s,
        StatusFigures {
            uid: Some(0),
            ..StatusFigures::default()
        }
    );
}

#[test]
fn status_says_whose_process_it_is() {
    assert_eq!(parse_status(STATUS).uid, Some(0));
    let nobody = parse_status(STATUS_NOBODY);
    assert_eq!(nobody.uid, Some(65534));
    assert_eq!(
        nobody.rss_anon_bytes,
        108 * 1024,
        "the figures after it too"
    );
    assert_eq!(nobody.vm_swap_bytes, Some(0));
    // Real uid nobody, effective root: nobody's own.
    assert_eq!(parse_status(STATUS_SETUID).uid, None);
    assert_eq!(parse_status(b"Uid:\t1\t1\t1\n").uid, None, "three ids");
    assert_eq!(parse_status(b"Uid:\t1\tx\t1\t1\n").uid, None);
    assert_eq!(
        parse_status(b"Uid:\t7\t7\t7\t0\n").uid,
        Some(7),
        "fsuid aside"
    );
}

#[test]
fn stat_with_spaces_and_parens_in_name() {
    let line = b"4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1200 0 37 0 5 3 0 0 20 0 1 0 98765 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    let f = parse_stat(line).unwrap();
    assert_eq!(f.comm, b"my (odd) name");
    assert_eq!(f.state, b'S');
    assert_eq!(f.ppid, 1);
    assert_eq!(f.flags, 4_194_560);
    assert_eq!(f.majflt, 37);
    assert_eq!(f.starttime, 98_765);
    assert_eq!(f.rss_pages, 500);
    assert!(!f.is_kernel_thread());
}

#[test]
fn stat_of_kernel_thread() {
    let line = b"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 1 0 0 0 0 0\n";
    let f = parse_stat(line).unwrap();
    assert!(f.is_kernel_thread());
    assert_eq!(f.starttime, 3);
}

#[test]
fn truncated_stat_is_none_not_panic() {
    assert!(parse_stat(b"12 (bash) S 1 12").is_none());
    assert!(parse_stat(b"").is_none());
    assert!(parse_stat(b"12 bash) S (").is_none());
}

#[test]
fn u64_parsing_rejects_garbage_and_overflow() {
    assert_eq!(parse_u64(b"123"), Some(123));
    assert_eq!(parse_u64(b" 7 "), Some(7));
    assert_eq!(parse_u64(b"-1"), None);
    assert_eq!(parse_u64(b"99999999999999999999999"), None);
    assert_eq!(parse_u64(b""), None);
}

#[test]
fn kb_field_handles_units() {
    assert_eq!(kb_field(b"VmSwap:\t  12 kB", b"VmSwap:"), Some(12 * 1024));
    assert_eq!(
        kb_field(b"HugePages_Total:  4", b"HugePages_Total:"),
        Some(4)
    );
    assert_eq!(kb_field(b"VmSwap: 12 MB", b"VmSwap:"), None);
    assert_eq!(kb_field(b"VmSwapX: 12 kB", b"VmSwap:"), None);
}

#[test]
fn last_pid_is_the_last_field_of_loadavg() {
    assert_eq!(parse_last_pid(b"0.47 0.26 0.68 2/345 12345\n"), Some(12345));
    assert_eq!(
        parse_last_pid(b"12.00 3.50 0.01 17/2048 4194303"),
        Some(4_194_303)
    );
    assert_eq!(parse_last_pid(b"0.47 0.26 0.68 2/345\n"), None);
    assert_eq!(parse_last_pid(b"0.47 0.26 0.68 2 345 12345\n"), None);
    assert_eq!(parse_last_pid(b"0.47 0.26 0.68 2/345 -1\n"), None);
    assert_eq!(parse_last_pid(b"0.47 0.26 0.68 2/345 12345 9\n"), None);
    assert_eq!(parse_last_pid(b""), None);
}

#[test]
fn stat_gives_the_stack_start_and_zero_where_it_is_hidden_or_cut() {
    // Field 28 (startstack), as the kernel shows it to a permitted reader.
    let line = b"812 (python3) S 1 812 812 0 -1 4194560 900 0 3 0 1 1 0 0 20 0 1 0 4242 20000000 2000 18446744073709551615 94000000000000 94000000004096 140729000000000 0 0 0 0 16781312 0 0 0 17 0 0 0 0 0 0\n";
    assert_eq!(parse_stat(line).unwrap().start_stack, 140_729_000_000_000);
    // Another user's process: shown as 0 (startcode/endcode as 1).
    let hidden = b"813 (sshd) S 1 813 813 0 -1 4194560 900 0 3 0 1 1 0 0 20 0 1 0 4242 20000000 2000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 0 0 0 0 0 0\n";
    assert_eq!(parse_stat(hidden).unwrap().start_stack, 0);
    // Cut after the resident pages: the rest still parses.
    let cut = b"814 (x) S 1 814 814 0 -1 4194560 900 0 3 0 1 1 0 0 20 0 1 0 4242 20000000 2000";
    let f = parse_stat(cut).unwrap();
    assert_eq!((f.rss_pages, f.start_stack), (2000, 0));
}

#[test]
fn the_last_byte_is_found_wherever_it_lies() {
    for len in 0..40usize {
        for at in 0..len {
            let mut text = vec![b'7'; len];
            text[at] = b')';
            assert_eq!(rfind_byte(&text, b')'), Some(at), "len {len}, at {at}");
            if at > 0 {
                text[at / 2] = b')';
                assert_eq!(rfind_byte(&text, b')'), Some(at), "two, len {len}");
            }
        }
        assert_eq!(rfind_byte(&vec![b'7'; len], b')'), None);
    }
    // Bytes next to `)` (0x29) and with the high bit set are not it.
    assert_eq!(
        rfind_byte(b"(\xa9\x28\x2a\xff\x29\x80\x00\x01\x02", b')'),
        Some(5)
    );
    assert_eq!(
        rfind_byte(b"\xa9\x28\x2a\xff\x80\x00\x01\x02\xa9", b')'),
        None
    );
}

/// `/proc/pressure/memory` of the test machine (Linux 6.18), as the kernel
/// writes it (`psi_show`: `%s avg10=%lu.%02lu … total=%llu\n` per line).
const PSI: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-pressure-memory.txt"
));

#[test]
fn psi_some_and_full_with_their_totals() {
    let p = parse_psi(PSI).unwrap();
    let some = p.some.unwrap();
    assert_eq!(
        (some.avg10, some.avg60, some.total_us),
        (1.69, 1.10, 72_636_100)
    );
    let full = p.full.unwrap();
    assert_eq!(
        (full.avg10, full.avg60, full.total_us),
        (1.39, 0.84, 60_358_068)
    );
    assert_eq!((p.kernel_level, p.level), (None, None));
}

#[test]
fn psi_of_an_idle_machine_is_zeros_but_present() {
    let p = parse_psi(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
    assert_eq!(p.some.unwrap().total_us, 0);
    assert!(p.full.is_some());
}

#[test]
fn psi_without_a_some_line_is_not_psi() {
    assert_eq!(parse_psi(b""), None);
    assert_eq!(
        parse_psi(b"full avg10=1.00 avg60=1.00 avg300=1.00 total=5\n"),
        None
    );
    assert_eq!(parse_psi(MEMINFO), None);
}

#[test]
fn psi_lines_that_do_not_parse_are_left_out() {
    // a cut file: the full line ends mid-way
    let p = parse_psi(b"some avg10=3.00 avg60=2.00 avg300=1.00 total=9\nfull avg10=1.0").unwrap();
    assert_eq!(p.some.unwrap().avg10, 3.0);
    assert_eq!(p.full, None);
    // out of range, negative, not a number, overflowing total
    for bad in [
        &b"some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n"[..],
        b"some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n",
        b"some avg10=NaN avg60=0.00 avg300=0.00 total=0\n",
        b"some avg10=1e2 avg60=0.00 avg300=0.00 total=0\n",
        b"some avg10=0.00 avg60=0.00 avg300=0.00 total=99999999999999999999999\n",
        b"some avg10 avg60=0.00 total=0\n",
    ] {
        assert_eq!(parse_psi(bad), None, "{}", String::from_utf8_lossy(bad));
    }
}

/// /proc/vmstat of this project's 6.18 kernel (a machine that had swapped).
const VMSTAT: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-vmstat.txt"
));

#[test]
fn swap_written_is_the_pswpout_line_of_vmstat_not_pswpin() {
    assert_eq!(parse_vmstat_pswpout(VMSTAT), Some(13990731));
    assert_eq!(parse_vmstat_pswpout(b"pswpin 5\npswpout 7\n"), Some(7));
    // A longer key that starts the same is another counter.
    assert_eq!(parse_vmstat_pswpout(b"pswpout_zero 9\npswpout 3"), Some(3));
    for bad in [
        &b""[..],
        b"pswpin 5\n",
        b"pswpout\n",
        b"pswpout -1\n",
        b"pswpout 99999999999999999999999\n",
    ] {
        assert_eq!(
            parse_vmstat_pswpout(bad),
            None,
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    assert_eq!(pages_to_bytes(3, 4096), Some(12288));
    assert_eq!(pages_to_bytes(u64::MAX / 2, 4096), None);
}

/// `statm` as `proc_pid_statm` prints it: resident is the second field, and
/// it is the sum `status` shows as `VmRSS`.
#[test]
fn statm_gives_resident_pages_as_status_vmrss_does() {
    assert_eq!(
        parse_statm_resident(b"5512 1409 1024 5 0 331 0\n"),
        Some(1409)
    );
    // A kernel thread or a zombie: no memory map, all zeros.
    assert_eq!(parse_statm_resident(b"0 0 0 0 0 0 0\n"), Some(0));
    assert_eq!(parse_statm_resident(b"5512\n"), None);
    assert_eq!(parse_statm_resident(b""), None);
    assert_eq!(parse_statm_resident(b"5512 x 1024 5 0 331 0\n"), None);
    assert_eq!(
        parse_statm_resident(b"5512 99999999999999999999999 0\n"),
        None
    );
    // This process, read twice: the two files agree (nothing allocates
    // between the reads but the reads themselves, into buffers made first).
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page_kib = u64::try_from(page).unwrap() / 1024;
    let (mut status, mut statm) = (Vec::with_capacity(8192), Vec::with_capacity(4096));
    for _ in 0..5 {
        status.clear();
        statm.clear();
        use std::io::Read;
        let mut f = std::fs::File::open("/proc/self/status").unwrap();
        let mut g = std::fs::File::open("/proc/self/statm").unwrap();
        f.read_to_end(&mut status).unwrap();
        g.read_to_end(&mut statm).unwrap();
        let vmrss_kib = status
            .split(|&b| b == b'\n')
            .find_map(|l| l.strip_prefix(b"VmRSS:"))
            .and_then(|v| parse_u64(v.trim_ascii().strip_suffix(b"kB")?))
            .unwrap();
        if parse_statm_resident(&statm).map(|p| p * page_kib) == Some(vmrss_kib) {
            return;
        }
    }
    panic!("statm's resident never matched status's VmRSS");
}
