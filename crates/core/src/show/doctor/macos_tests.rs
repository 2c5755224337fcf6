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
/// (`vm_stat.c`, `has_mte`); used memory does not add them, as the probe
/// does not (the pages storing tags are wired already).
#[test]
fn vm_stat_tag_storage_is_read_and_not_added_to_used_memory() {
    let plain = parse_vm_stat(VM_STAT).unwrap();
    assert_eq!(plain.tag_storage_bytes(), None);
    let mte = format!("{VM_STAT}Pages tag-storage:                        2048.\nPages tag-storage free:                      17.\n");
    let v = parse_vm_stat(&mte).unwrap();
    let page = 16384;
    assert_eq!(v.tag_storage_bytes(), Some(Some(2048 * page)));
    assert_eq!(
        v.used_bytes(),
        Some((465781 - 15049 + 118245 + 403470) * page)
    );
}

#[test]
fn vm_stat_swapouts_in_bytes() {
    let v = parse_vm_stat(VM_STAT).unwrap();
    assert_eq!(v.swapouts, Some(17217613));
    assert_eq!(v.swap_out_bytes(), Some(17217613 * 16384));
    // Older output without the line: no figure, the others still read.
    let without = VM_STAT.replace("Swapouts:                              17217613.\n", "");
    let v = parse_vm_stat(&without).unwrap();
    assert_eq!(v.swap_out_bytes(), None);
    let huge = VM_STAT.replace("17217613.", "18446744073709551615.");
    assert_eq!(parse_vm_stat(&huge).unwrap().swap_out_bytes(), None);
}

// `ioreg -r -d 1 -w 0 -c IOAccelerator` on an Apple Silicon Mac, laid out as
// `ioreg.c` prints it (`+-o` node line; `{`, properties and `}` indented
// four spaces past the node; a blank line after), cut to a few
// properties. Values of the `PerformanceStatistics` line as in the issue.
const IOREG_APPLE: &str = r#"+-o AGXAcceleratorG14X  <class AGXAcceleratorG14X, id 0x1000009c4, registered, matched, active, busy 0 (1284 ms), retain 57>
    {
      "IOClass" = "AGXAcceleratorG14X"
      "AGCInfo" = {"fLastSubmissionPID"=612,"fSubmissionsSinceLastCheck"=0,"fBusyCount"=0}
      "model" = "Apple M2 Pro"
      "IOMatchedAtBoot" = Yes
      "PerformanceStatistics" = {"In use system memory (driver)"=0,"Alloc system memory"=4272832512,"Tiler Utilization %"=3,"recoveryCount"=0,"lastRecoveryTime"=0,"Renderer Utilization %"=2,"TiledSceneBytes"=0,"Device Utilization %"=4,"SplitSceneCount"=0,"Allocated PB Size"=11534336,"In use system memory"=1200357376}
      "gpu-core-count" = 19
      "vendor-id" = <6b100000>
    }
    
"#;

#[test]
fn ioreg_accelerator_statistics_as_ioreg_prints_them() {
    use crate::probe::macos::parse::gpu_memory;
    let all = parse_ioreg_accelerators(IOREG_APPLE);
    assert_eq!(all.len(), 1);
    let stats = &all[0];
    assert_eq!(stats.len(), 11, "every number of the dictionary: {stats:?}");
    assert!(stats.contains(&("In use system memory".into(), 1200357376)));
    // AGCInfo is another dictionary, never taken for the statistics.
    assert!(!stats.iter().any(|(k, _)| k == "fBusyCount"));
    let gpu = gpu_memory(all).unwrap();
    assert_eq!(gpu.in_use_bytes, Some(1200357376));
    assert_eq!(gpu.alloc_bytes, Some(4272832512));
    assert_eq!(gpu.driver_in_use_bytes, Some(0));
}

#[test]
fn ioreg_of_two_accelerators_sums_and_other_keys_give_nothing() {
    use crate::probe::macos::parse::gpu_memory;
    // An Intel Mac's AMD GPU and its integrated Intel one: other keys.
    let intel = r#"+-o AMDRadeonX6000_AMDNavi14GraphicsAccelerator  <class AMDRadeonX6000_AMDNavi14GraphicsAccelerator, id 0x100000488, registered, matched, active, busy 0 (0 ms), retain 30>
    {
      "PerformanceStatistics" = {"vramFreeBytes"=3221225472,"Device Utilization %"=17,"vramUsedBytes"=1073741824,"GPU Activity(%)"=17}
    }
    
+-o IntelAccelerator  <class IntelAccelerator, id 0x100000510, registered, matched, active, busy 0 (0 ms), retain 22>
    {
      "PerformanceStatistics" = {"Device Utilization %"=0,"GPU Activity(%)"=0}
    }
    
"#;
    assert_eq!(parse_ioreg_accelerators(intel).len(), 2);
    assert_eq!(gpu_memory(parse_ioreg_accelerators(intel)), None);
    let two = format!("{IOREG_APPLE}{}", IOREG_APPLE.replace("1200357376", "100"));
    let gpu = gpu_memory(parse_ioreg_accelerators(&two)).unwrap();
    assert_eq!(gpu.in_use_bytes, Some(1200357376 + 100));
    assert_eq!(gpu.alloc_bytes, Some(2 * 4272832512));
}

#[test]
fn ioreg_clipped_empty_or_garbled_lines_give_no_number() {
    use crate::probe::macos::parse::gpu_memory;
    // Clipped to the terminal's width (ioreg ends the line in `$`): the
    // last number is cut short, so the line gives nothing.
    let clipped = "      \"PerformanceStatistics\" = {\"Alloc system memory\"=4272832512,\"In use system memory\"=12003$\n";
    assert!(parse_ioreg_accelerators(clipped).is_empty());
    assert!(parse_ioreg_accelerators("").is_empty());
    assert!(parse_ioreg_accelerators("No such class\n").is_empty());
    let empty = "      \"PerformanceStatistics\" = {}\n";
    assert_eq!(parse_ioreg_accelerators(empty), vec![Vec::new()]);
    assert_eq!(gpu_memory(parse_ioreg_accelerators(empty)), None);
    // A value past u64, or a negative printed by `%qu`: dropped or refused.
    let huge = IOREG_APPLE.replace("1200357376", "99999999999999999999");
    let gpu = gpu_memory(parse_ioreg_accelerators(&huge)).unwrap();
    assert_eq!(gpu.in_use_bytes, None);
    let negative = IOREG_APPLE.replace("1200357376", "18446744073709551615");
    let gpu = gpu_memory(parse_ioreg_accelerators(&negative)).unwrap();
    assert_eq!(
        (gpu.in_use_bytes, gpu.alloc_bytes),
        (None, Some(4272832512))
    );
    // Strings, arrays and data among the values are skipped whole, commas
    // and braces inside them included.
    let mixed = r#"      "PerformanceStatistics" = {"name"="a,b}c","list"=(1,2),"blob"=<00ff>,"In use system memory"=42}"#;
    let all = parse_ioreg_accelerators(mixed);
    assert_eq!(all, vec![vec![("In use system memory".to_string(), 42)]]);
    assert!(parse_ioreg_accelerators(r#""PerformanceStatistics" = {"a"=1"#).is_empty());
    assert!(parse_ioreg_accelerators(r#""PerformanceStatistics" = {"a"=1} x"#).is_empty());
}

#[test]
fn sysctl_wired_limit_as_sysctl_n_prints_it() {
    assert_eq!(parse_sysctl_u64("0\n"), Some(0));
    assert_eq!(parse_sysctl_u64("57344\n"), Some(57344));
    assert_eq!(
        parse_sysctl_u64("sysctl: unknown oid 'iogpu.wired_limit_mb'"),
        None
    );
}
