//! The macOS tools' output, laid out as each tool prints it (formats and
//! their sources in the module's header), read by the pure parsers.

use super::*;

const MIB: u64 = 1 << 20;

// `footprint -f bytes -j out.json 4242`'s JSON, cut to the fields read
// (footprint also writes categories, regions and a summary).
const FOOTPRINT_JSON: &str = r#"{
  "arch" : "arm64",
  "processes" : [
    {
      "pid" : 4242,
      "name" : "swapsight",
      "footprint" : 270532608,
      "auxiliary" : {
        "phys_footprint" : 270548992,
        "phys_footprint_peak" : 270548992,
        "pageSize" : 16384
      }
    },
    {
      "pid" : 77,
      "name" : "other",
      "auxiliary" : { "phys_footprint" : 1024 }
    }
  ],
  "total footprint" : 270549016
}"#;

#[test]
fn footprint_json_gives_phys_footprint_of_the_pid() {
    assert_eq!(parse_footprint_json(FOOTPRINT_JSON, 4242), Some(270548992));
    assert_eq!(parse_footprint_json(FOOTPRINT_JSON, 77), Some(1024));
    assert_eq!(parse_footprint_json(FOOTPRINT_JSON, 5), None);
    assert_eq!(parse_footprint_json("{", 4242), None);
    assert_eq!(parse_footprint_json(r#"{"processes":{}}"#, 1), None);
    assert_eq!(
        parse_footprint_json(
            r#"{"processes":[{"pid":1,"auxiliary":{"phys_footprint":-5}}]}"#,
            1
        ),
        None
    );
    assert_eq!(
        parse_footprint_json(
            r#"{"processes":[{"pid":1,"auxiliary":{"phys_footprint":18446744073709551615}}]}"#,
            1
        ),
        None,
        "more than any machine's memory"
    );
}

// `footprint 4242`'s text (default, human-readable sizes).
const FOOTPRINT_TEXT: &str = "\
======================================================================
swapsight [4242]: 64-bit    Footprint: 258 MB (16384 bytes per page)
======================================================================

  Dirty      Clean  Reclaimable    Regions    Category
    ---        ---          ---        ---    ---
 256 MB        0 B          0 B          1    untagged (VM_ALLOCATE)
1824 KB        0 B          0 B         12    MALLOC_SMALL
    ---        ---          ---        ---    ---
 258 MB     1232 KB         0 B         45    TOTAL

Auxiliary data:
    phys_footprint_peak: 258 MB
    phys_footprint: 258 MB
";

#[test]
fn footprint_text_gives_the_auxiliary_line_of_the_pid() {
    let p = parse_footprint_text(FOOTPRINT_TEXT, 4242).unwrap();
    assert_eq!(p.bytes, 258 * MIB);
    assert_eq!(p.resolution, MIB);
    // Another pid's block is never read.
    assert_eq!(parse_footprint_text(FOOTPRINT_TEXT, 424), None);
    // `-f bytes`: exact.
    let bytes = FOOTPRINT_TEXT.replace("phys_footprint: 258 MB", "phys_footprint: 270548992 B");
    assert_eq!(
        parse_footprint_text(&bytes, 4242),
        Some(Printed {
            bytes: 270548992,
            resolution: 1
        })
    );
    // No auxiliary block: the header's figure.
    let head = FOOTPRINT_TEXT.split("Auxiliary").next().unwrap();
    assert_eq!(parse_footprint_text(head, 4242).unwrap().bytes, 258 * MIB);
    assert_eq!(parse_footprint_text("", 4242), None);
}

// `top -l 1 -stats pid,mem -pid 4242` on macOS 14.
const TOP: &str = "\
Processes: 612 total, 3 running, 609 sleeping, 2872 threads
2026/11/30 14:48:17
Load Avg: 2.12, 2.07, 2.01
CPU usage: 6.66% user, 12.50% sys, 80.83% idle
SharedLibs: 539M resident, 96M data, 52M linkedit.
MemRegions: 160214 total, 5384M resident, 203M private, 2373M shared.
PhysMem: 15G used (2093M wired, 1157M compressor), 268M unused.
VM: 232T vsize, 4938M framework vsize, 0(0) swapins, 0(0) swapouts.
Networks: packets: 4140557/4546M in, 2110380/320M out.
Disks: 1930218/35G read, 1067683/19G written.

PID    MEM
4242   258M
77     1104K+
9      2.5G-
";

#[test]
fn top_mem_of_the_pid_with_its_rounding() {
    assert_eq!(
        parse_top_mem(TOP, 4242),
        Some(Printed {
            bytes: 258 * MIB,
            resolution: MIB
        })
    );
    assert_eq!(parse_top_mem(TOP, 77).unwrap().bytes, 1104 * 1024);
    let g = parse_top_mem(TOP, 9).unwrap();
    assert_eq!((g.bytes, g.resolution), (5 << 29, (1 << 30) / 10));
    assert_eq!(parse_top_mem(TOP, 1), None);
    // The summary's "15G" is never taken for a process.
    assert_eq!(parse_top_mem("PhysMem: 15G used\n", 15), None);
    assert_eq!(parse_top_mem("PID MEM\n4242 lots\n", 4242), None);
}

// `vm_stat` of a 16 GiB Apple Silicon Mac.
const VM_STAT: &str = "\
Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                                5017.
Pages active:                            331215.
Pages inactive:                          329015.
Pages speculative:                         1591.
Pages throttled:                              0.
Pages wired down:                        118245.
Pages purgeable:                          15049.
\"Translation faults\":                 2283539387.
Pages copy-on-write:                   53417127.
Pages zero filled:                    949946040.
Pages reactivated:                    107095498.
Pages purged:                           7939453.
File-backed pages:                       196040.
Anonymous pages:                         465781.
Pages stored in compressor:             1081588.
Pages occupied by compressor:            403470.
Decompressions:                       141591849.
Compressions:                         163497547.
Pageins:                               29025808.
Pageouts:                                474773.
Swapins:                               16006637.
Swapouts:                              17217613.
";

#[test]
fn vm_stat_by_activity_monitors_formula() {
    let v = parse_vm_stat(VM_STAT).unwrap();
    let page = 16384;
    assert_eq!(v.page_size, page);
    assert_eq!(v.app_bytes(), Some((465781 - 15049) * page));
    assert_eq!(
        v.used_bytes(),
        Some((465781 - 15049 + 118245 + 403470) * page)
    );
    assert_eq!(v.free_bytes(), Some((5017 + 1591) * page));
    assert_eq!(v.cached_bytes(), Some((196040 + 15049) * page));
    assert_eq!(v.compressed_bytes(), Some(403470 * page));
    assert_eq!(v.wired_bytes(), Some(118245 * page));
}

#[test]
fn vm_stat_without_a_needed_line_or_with_huge_counts_is_none() {
    assert_eq!(parse_vm_stat(""), None);
    let no_compressor = VM_STAT.replace("Pages occupied by compressor:", "Pages occupied:");
    assert_eq!(parse_vm_stat(&no_compressor), None);
    let no_size = VM_STAT.replace("(page size of 16384 bytes)", "");
    assert_eq!(parse_vm_stat(&no_size), None);
    let zero = VM_STAT.replace("page size of 16384", "page size of 0");
    assert_eq!(parse_vm_stat(&zero), None);
    let huge = VM_STAT.replace("118245.", "18446744073709551615.");
    let v = parse_vm_stat(&huge).unwrap();
    assert_eq!(v.wired_bytes(), None);
    assert_eq!(v.used_bytes(), None);
}

#[test]
fn swapusage_in_one_unit_with_two_decimals() {
    let s = parse_swapusage(
        "vm.swapusage: total = 2048.00M  used = 1043.25M  free = 1004.75M  (encrypted)\n",
    )
    .unwrap();
    assert_eq!(s.total.bytes, 2048 * MIB);
    assert_eq!(s.used.bytes, 1043 * MIB + MIB / 4);
    assert_eq!(s.free.bytes, 1004 * MIB + 3 * MIB / 4);
    assert_eq!(s.used.resolution, MIB / 100);
    let g = parse_swapusage("total = 4.00G  used = 0.00M  free = 4.00G  (encrypted)").unwrap();
    assert_eq!((g.total.bytes, g.used.bytes), (4 << 30, 0));
    assert_eq!(parse_swapusage("vm.swapusage: total = M"), None);
    assert_eq!(parse_swapusage(""), None);
}

// `memory_pressure` (no arguments) on macOS 14.
const MEMORY_PRESSURE: &str = "\
The system has 17179869184 (1048576 pages with a page size of 16384).

Stats:
Pages free: 5017
Pages purgeable: 15049
Pages purged: 7939453

Swap I/O:
Swapins: 16006637
Swapouts: 17217613

Page Q counts:
Pages active: 331215
Pages inactive: 329015
Pages speculative: 1591
Pages throttled: 0
Pages wired down: 118245

Compressor Stats:
Pages used by compressor: 403470
Pages decompressed: 141591849
Pages compressed: 163497547

File I/O:
Pageins: 29025808
Pageouts: 474773

System-wide memory free percentage: 62%
";

#[test]
fn memory_pressure_free_percentage() {
    assert_eq!(parse_memory_pressure(MEMORY_PRESSURE), Some(62.0));
    assert_eq!(
        parse_memory_pressure("System-wide memory free percentage: 140%"),
        None
    );
    assert_eq!(parse_memory_pressure("The system has 1"), None);
}

#[test]
fn sizes_as_apples_tools_print_them() {
    let p = |s| parse_size(s).map(|p| p.bytes);
    assert_eq!(p("258 MB"), Some(258 * MIB));
    assert_eq!(p("1232 KB"), Some(1232 * 1024));
    assert_eq!(p("0 B"), Some(0));
    assert_eq!(p("270548992 B"), Some(270548992));
    assert_eq!(p("1.5GB"), Some(3 << 29));
    for bad in ["", "MB", "-1M", "1e400M", "1 XB", "99999999T", "NaN"] {
        assert_eq!(parse_size(bad), None, "{bad:?}");
    }
}

#[test]
fn sysctl_number_and_sw_vers() {
    assert_eq!(parse_sysctl_u64("17179869184\n"), Some(17179869184));
    assert_eq!(parse_sysctl_u64("1 2"), None);
    let sw = "ProductName:\t\tmacOS\nProductVersion:\t\t14.4.1\nBuildVersion:\t\t23E224\n";
    assert_eq!(parse_sw_vers(sw).as_deref(), Some("macOS 14.4.1 (23E224)"));
    assert_eq!(parse_sw_vers("ProductName: macOS\n"), None);
}

/// macOS 26 on a Mac with memory tagging prints the tag storage pages
/// (`vm_stat.c`, `has_mte`); used memory counts them, as the probe does.
#[test]
fn vm_stat_tag_storage_is_read_and_counted_in_used_memory() {
    let plain = parse_vm_stat(VM_STAT).unwrap();
    assert_eq!(plain.tag_storage_bytes(), None);
    let mte = format!("{VM_STAT}Pages tag-storage:                        2048.\nPages tag-storage free:                      17.\n");
    let v = parse_vm_stat(&mte).unwrap();
    let page = 16384;
    assert_eq!(v.tag_storage_bytes(), Some(Some(2048 * page)));
    assert_eq!(
        v.used_bytes(),
        Some((465781 - 15049 + 118245 + 403470 + 2048) * page)
    );
}
