use super::*;

// Captured on this project's Linux test machine (Debian 12, procps-ng 4.0.2,
// util-linux 2.38.1, kernel 6.x).
const FREE_B: &str =
    "               total        used        free      shared  buff/cache   available
Mem:     25276510208  1171906560 13148450816     9068544 11313106944 24104603648
Swap:              0           0           0
";

#[test]
fn free_b_is_read_by_its_header() {
    let f = parse_free(FREE_B).unwrap();
    assert_eq!(f.mem_total, 25276510208);
    assert_eq!(f.mem_used, 1171906560);
    assert_eq!(f.mem_free, 13148450816);
    assert_eq!(f.mem_available, Some(24104603648));
    assert_eq!((f.swap_total, f.swap_used), (0, 0));
}

#[test]
fn an_older_free_without_available_still_reads() {
    // procps 3.3.9 and before: buffers and cached apart, no available.
    let old = "             total       used       free     shared    buffers     cached
Mem:    8254390272 7812345856  442044416   12345678  123456789 4567890123
-/+ buffers/cache: 3121000000 5133390272
Swap:   2147479552   10485760 2136993792
";
    let f = parse_free(old);
    // The `-/+ buffers/cache:` line has a label of its own: ignored.
    let f = f.unwrap();
    assert_eq!(f.mem_available, None);
    assert_eq!(f.swap_used, 10485760);
}

#[test]
fn free_output_that_is_not_free_is_none() {
    for bad in [
        "",
        "total used\n",
        "               total        used\nMem:     x  y\nSwap: 0 0\n",
        "               total        used        free\nMem: 1 2 3\n",
        // A number past u64.
        "  total used free\nMem: 99999999999999999999999 1 1\nSwap: 0 0 0\n",
    ] {
        assert_eq!(parse_free(bad), None, "{bad:?}");
    }
}

const ROLLUP: &str =
    "55fda1aac000-7ffd18615000 ---p 00000000 00:00 0                          [rollup]
Rss:              265892 kB
Pss:              263711 kB
Pss_Dirty:        262260 kB
Pss_Anon:         262256 kB
Pss_File:           1455 kB
Pss_Shmem:             0 kB
Shared_Clean:       2180 kB
Shared_Dirty:          0 kB
Private_Clean:      1452 kB
Private_Dirty:    262260 kB
Referenced:       265892 kB
Anonymous:        262256 kB
KSM:                   0 kB
LazyFree:              0 kB
AnonHugePages:    260096 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:       0 kB
Swap:               1024 kB
SwapPss:            1024 kB
Locked:                0 kB
";

#[test]
fn smaps_rollup_gives_rss_anonymous_and_swap() {
    let r = parse_smaps_rollup(ROLLUP).unwrap();
    assert_eq!(r.rss, 265892 * 1024);
    assert_eq!(r.anonymous, 262256 * 1024);
    assert_eq!(r.swap, 1024 * 1024);
    // Pss_Anon and SwapPss are other lines, not prefixes of these.
    assert_eq!(parse_smaps_rollup("Rss: 1 kB\n"), None);
    assert_eq!(parse_smaps_rollup(""), None);
    // A kB figure past u64 in bytes is skipped: Rss is then missing.
    assert_eq!(
        parse_smaps_rollup("Rss: 18446744073709551615 kB\nAnonymous: 1 kB\n"),
        None
    );
}

#[test]
fn swapon_sums_every_area() {
    assert_eq!(parse_swapon(""), Some(Swapon::default()));
    let two = "2147483648 52428800\n 1073741824 0\n";
    assert_eq!(
        parse_swapon(two),
        Some(Swapon {
            areas: 2,
            size: 3221225472,
            used: 52428800
        })
    );
    assert_eq!(parse_swapon("/swapfile file 2G 0B -2\n"), None);
    assert_eq!(parse_swapon("18446744073709551615 0\n1 0\n"), None);
}

#[test]
fn ps_rss_is_kib() {
    assert_eq!(parse_ps_rss("  4004\n"), Some(4004 * 1024));
    assert_eq!(parse_ps_rss(""), None);
    assert_eq!(parse_ps_rss("4004 12\n"), None);
    assert_eq!(parse_ps_rss("-1\n"), None);
}

#[test]
fn os_release_pretty_name() {
    let text = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n";
    assert_eq!(
        parse_os_release(text).as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    assert_eq!(
        parse_os_release("PRETTY_NAME=Alpine\n").as_deref(),
        Some("Alpine")
    );
    assert_eq!(parse_os_release("NAME=x\n"), None);
}
