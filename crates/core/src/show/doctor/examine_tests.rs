use super::on_macos::MacRead;
use super::*;

#[test]
fn a_missing_tool_is_named_once_and_its_rows_say_so() {
    let mut ctx = Ctx {
        timeout: Duration::from_secs(5),
        missing: Vec::new(),
        used: Vec::new(),
    };
    for _ in 0..2 {
        let r = ctx.parsed("swapsight-no-such-tool", &[], |_| Some(1));
        assert_eq!(
            r,
            Reading::Unreadable("no trusted swapsight-no-such-tool is installed".into())
        );
    }
    assert_eq!(ctx.missing.len(), 1);
    assert_eq!(ctx.missing[0].tool, "swapsight-no-such-tool");
    assert!(ctx.used.is_empty());
    // Output the parser cannot read is named, not a panic; the binary
    // that answered is kept, once.
    for _ in 0..2 {
        let r = ctx.parsed("uname", &["-s"], macos::parse_sysctl_u64);
        assert_eq!(r, Reading::Unreadable("cannot read uname's output".into()));
    }
    assert!(ctx.missing.len() == 1);
    assert_eq!(ctx.used.len(), 1, "{:?}", ctx.used);
    assert!(ctx.used[0].path.ends_with("/uname"), "{:?}", ctx.used);
}

fn snap(procs: Vec<ProcessSample>) -> Snap {
    (SystemSample::default(), procs)
}

/// What the tools said on a Mac: `vm_stat`, the GPU's registry and the
/// wired limit as given, every other tool unread.
fn mac_read(
    vm_stat: Reading<macos::VmStat>,
    gpu: Reading<crate::probe::GpuMemory>,
    wired_limit_mb: Reading<u64>,
) -> MacRead {
    MacRead {
        memsize: unread(),
        vm_stat,
        swapusage: unread(),
        pressure: unread(),
        child_footprint: unread(),
        child_top: unread(),
        gpu,
        wired_limit_mb,
        procs: Vec::new(),
        others: 0,
    }
}

/// A tool these tests leave unread.
fn unread<T>() -> Reading<T> {
    Reading::Unreadable("x".into())
}

/// The doctor's child in these tests: pid 9, one byte.
const CHILD: ChildInfo = ChildInfo {
    pid: 9,
    size_bytes: 1,
    inherited_bytes: 0,
};

/// The row of `figure` against `tool`.
fn find_row(rows: &[Row], figure: &str, tool: &str) -> Row {
    rows.iter()
        .find(|r| r.figure == figure && r.tool_name == tool)
        .unwrap_or_else(|| panic!("{figure} / {tool}"))
        .clone()
}

#[test]
fn other_users_processes_on_a_mac_are_counted_and_never_compared() {
    let p = |pid, footprint_bytes, readable| ProcessSample {
        pid,
        name: format!("p{pid}").into(),
        footprint_bytes,
        readable,
        ..ProcessSample::default()
    };
    let a = snap(vec![
        p(1, 0, false),
        p(2, 0, false),
        p(3, 50 << 20, true),
        p(9, 1, true),
    ]);
    let read = MacRead {
        procs: vec![(
            Pick {
                pid: 3,
                name: "p3".into(),
                what: "largest readable process",
            },
            Reading::Value(macos::Printed {
                bytes: 50 << 20,
                resolution: 1,
            }),
        )],
        others: 2,
        ..mac_read(unread(), unread(), unread())
    };
    let rows = rows_macos(&read, CHILD, &a, &a);
    let largest = rows
        .iter()
        .find(|r| r.figure == "largest readable process: p3 (pid 3)")
        .unwrap();
    assert_eq!(largest.status, super::super::Status::Ok);
    let others = rows
        .iter()
        .find(|r| r.figure == "other users' processes (2)")
        .unwrap();
    assert_eq!(others.status, super::super::Status::Unreadable);
    assert!(others.note.as_deref().unwrap().contains("only to root"));
    // A process swapsight lists but cannot read is never judged.
    let row = judge(
        "x",
        "y",
        Unit::Bytes,
        proc_bracket(&a, &a, 1, |q| Some(q.footprint_bytes)),
        Reading::Value(5.0),
        Tolerance::new(0.0, 0.0),
    );
    assert_eq!(row.status, super::super::Status::Unreadable);
    assert!(row.note.unwrap().contains("another user's process"));
}

/// The GPU's rows and swap written on a Mac, over figures laid out as the
/// tools print them (`ioreg`'s `PerformanceStatistics` line, `sysctl -n`,
/// `vm_stat`'s "Swapouts") and the probe's two samples around them.
#[test]
fn gpu_and_swap_written_rows_compare_the_probe_with_ioreg_sysctl_and_vm_stat() {
    use super::super::Status;
    use crate::probe::GpuMemory;
    use crate::show::doctor::names as n;
    const GIB: u64 = 1 << 30;
    let ioreg = r#"+-o AGXAcceleratorG14X  <class AGXAcceleratorG14X, id 0x1000009c4, registered, matched, active, busy 0 (1284 ms), retain 57>
    {
      "PerformanceStatistics" = {"In use system memory (driver)"=0,"Alloc system memory"=4272832512,"Device Utilization %"=4,"In use system memory"=1200357376}
    }
"#;
    let vm_stat = "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n\
        Pages free: 1.\nPages speculative: 1.\nPages wired down: 1.\nPages purgeable: 1.\n\
        File-backed pages: 1.\nAnonymous pages: 1.\nPages occupied by compressor: 1.\n\
        Swapouts: 65536.\n";
    let sample = |in_use: u64, swapped_pages: u64| SystemSample {
        swap_out_bytes: Some(swapped_pages * 16384),
        gpu: Some(GpuMemory {
            in_use_bytes: Some(in_use),
            alloc_bytes: Some(4272832512),
            driver_in_use_bytes: Some(0),
            wired_limit_mb: Some(57344),
            recommended_working_set_bytes: Some(48 * GIB),
        }),
        ..SystemSample::default()
    };
    // Swap written moved from 65000 to 65600 pages while the tools ran; the
    // GPU's in-use figure moved too.
    let a = (sample(1190000000, 65000), Vec::new());
    let b = (sample(1210000000, 65600), Vec::new());
    let read = |gpu_text: &str, limit: &str| {
        mac_read(
            Reading::Value(macos::parse_vm_stat(vm_stat).unwrap()),
            match crate::probe::macos::parse::gpu_memory(macos::parse_ioreg_accelerators(gpu_text))
            {
                Some(g) => Reading::Value(g),
                None => Reading::Unreadable("cannot read ioreg's output".into()),
            },
            Reading::Value(macos::parse_sysctl_u64(limit).unwrap()),
        )
    };
    let (child, find) = (CHILD, find_row);
    let rows = rows_macos(&read(ioreg, "57344\n"), child, &a, &b);
    let in_use = find(&rows, n::GPU_IN_USE, n::IOREG_IN_USE);
    assert_eq!(
        (in_use.status, in_use.tool),
        (Status::Ok, Some(1200357376.0))
    );
    assert_eq!(find(&rows, n::GPU_ALLOC, n::IOREG_ALLOC).status, Status::Ok);
    let limit = find(&rows, n::GPU_WIRED_LIMIT, n::SYSCTL_WIRED_LIMIT);
    assert_eq!(
        (limit.status, limit.tool),
        (Status::Ok, Some((56 * GIB) as f64))
    );
    let written = find(&rows, n::SWAP_WRITTEN, n::VM_STAT_SWAPOUTS);
    assert_eq!(
        (written.status, written.tool),
        (Status::Ok, Some((65536u64 * 16384) as f64))
    );
    // A limit set since the probe read it, and a GPU figure far off: OFF.
    let far = ioreg.replace("1200357376", "9200357376");
    let rows = rows_macos(&read(&far, "0\n"), child, &a, &b);
    assert_eq!(
        find(&rows, n::GPU_IN_USE, n::IOREG_IN_USE).status,
        Status::Off
    );
    assert_eq!(
        find(&rows, n::GPU_WIRED_LIMIT, n::SYSCTL_WIRED_LIMIT).status,
        Status::Off
    );
    // A Mac whose accelerators use other keys: unreadable on both sides,
    // never a row that fails.
    let none = (SystemSample::default(), Vec::new());
    let amd = r#"      "PerformanceStatistics" = {"vramUsedBytes"=1073741824}"#;
    let rows = rows_macos(&read(amd, "0\n"), child, &none, &none);
    let in_use = find(&rows, n::GPU_IN_USE, n::IOREG_IN_USE);
    assert_eq!(in_use.status, Status::Unreadable);
    assert!(in_use.note.unwrap().contains("no GPU in-use figure"));
}

/// A probe that says what was watched when each sample was taken.
struct Watched {
    inner: Box<dyn Probe>,
    watching: Vec<u32>,
    samples: Vec<(Vec<u32>, Vec<u32>)>,
}

impl Probe for Watched {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        self.inner.system()
    }

    fn sample(&mut self) -> Result<Snap, ProbeError> {
        let snap = self.inner.sample()?;
        let pids = snap.1.iter().map(|p| p.pid).collect();
        self.samples.push((pids, self.watching.clone()));
        Ok(snap)
    }

    fn host(&mut self) -> Result<crate::probe::HostInfo, ProbeError> {
        self.inner.host()
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        self.watching = pids.to_vec();
        self.inner.watch_closely(pids);
    }
}

/// The bracket's second sample reads afresh every process the first one
/// listed (the largest included): a tiered probe would otherwise repeat
/// the first sample's figures for the ones it found idle there.
#[test]
fn the_second_sample_reads_every_process_the_first_listed() {
    let mut probe = Watched {
        inner: crate::probe::native().unwrap(),
        watching: Vec::new(),
        samples: Vec::new(),
    };
    let opts = Options {
        child_size: 4 << 20,
        ..Options::default()
    };
    examine(&mut probe, &opts).unwrap();
    let [(first, none), (_, watched)] = &probe.samples[..] else {
        panic!("two samples, not {}", probe.samples.len());
    };
    assert!(none.is_empty(), "nothing watched at the first");
    assert!(first.len() > 1);
    assert!(
        first.iter().all(|pid| watched.binary_search(pid).is_ok()),
        "unwatched at the second: {:?}",
        first
            .iter()
            .filter(|pid| watched.binary_search(pid).is_err())
            .collect::<Vec<_>>()
    );
}

/// macOS 26 on a Mac with memory tagging: `vm_stat`'s "Pages tag-storage"
/// line is compared with the probe's own tag storage figure, on a row of
/// its own that says why it is apart, and used memory leaves it out on
/// both sides.
#[test]
fn tag_storage_has_a_row_of_its_own_beside_vm_stat_and_stays_out_of_used_memory() {
    use super::super::Status;
    use crate::show::doctor::names as n;
    const PAGE: u64 = 16384;
    let vm_stat = "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n\
        Pages free: 1000.\nPages speculative: 0.\nPages wired down: 3000.\nPages purgeable: 0.\n\
        File-backed pages: 1000.\nAnonymous pages: 5000.\nPages occupied by compressor: 1000.\n\
        Pages tag-storage: 2048.\nPages tag-storage holding tags: 2000.\n";
    let used = (5000 + 3000 + 1000) * PAGE;
    let sample = |tags: Option<u64>| SystemSample {
        phys_bytes: 1 << 30,
        memory_used_bytes: Some(used),
        tag_storage_bytes: tags,
        ..SystemSample::default()
    };
    let read = mac_read(
        Reading::Value(macos::parse_vm_stat(vm_stat).unwrap()),
        unread(),
        unread(),
    );
    let mte = (sample(Some(2048 * PAGE)), Vec::new());
    let rows = rows_macos(&read, CHILD, &mte, &mte);
    let tags = find_row(&rows, n::TAG_STORAGE, n::VM_STAT_TAG_STORAGE);
    assert_eq!(
        (tags.status, tags.swapsight, tags.tool),
        (
            Status::Ok,
            Some((2048 * PAGE) as f64),
            Some((2048 * PAGE) as f64)
        )
    );
    assert_eq!(
        tags.note.as_deref(),
        Some(super::on_macos::TAG_STORAGE_APART)
    );
    let used_row = find_row(&rows, n::USED_MEMORY, n::VM_STAT_USED);
    assert_eq!(
        (used_row.status, used_row.swapsight, used_row.tool),
        (Status::Ok, Some(used as f64), Some(used as f64))
    );
    // A probe that gave no figure (an older kernel's answer): said so.
    let plain = (sample(None), Vec::new());
    let rows = rows_macos(&read, CHILD, &plain, &plain);
    let tags = find_row(&rows, n::TAG_STORAGE, n::VM_STAT_TAG_STORAGE);
    assert_eq!(tags.status, Status::Unreadable);
    assert!(tags.note.unwrap().contains("no tag storage figure"));
}

#[test]
fn the_working_set_metal_gave_is_a_row_of_its_own_and_its_absence_is_said() {
    use super::super::Status;
    use crate::show::doctor::names as n;
    let snap = |ws: Option<u64>| {
        (
            SystemSample {
                phys_bytes: 48 << 30,
                gpu: Some(crate::probe::GpuMemory {
                    recommended_working_set_bytes: ws,
                    ..Default::default()
                }),
                ..SystemSample::default()
            },
            Vec::new(),
        )
    };
    let read = mac_read(unread(), unread(), unread());
    let rec = 40_200_960_000u64;
    let read_it = snap(Some(rec));
    let rows = rows_macos(&read, CHILD, &read_it, &read_it);
    let ws = find_row(&rows, n::GPU_WORKING_SET, n::METAL_WORKING_SET);
    assert_eq!(
        (ws.status, ws.swapsight, ws.tool),
        (Status::Info, Some(rec as f64), Some(rec as f64))
    );
    assert!(ws.note.unwrap().contains("78 % of memory"));
    let none = snap(None);
    let rows = rows_macos(&read, CHILD, &none, &none);
    let ws = find_row(&rows, n::GPU_WORKING_SET, n::METAL_WORKING_SET);
    assert_eq!((ws.status, ws.swapsight), (Status::Unreadable, None));
    assert_eq!(
        ws.note.as_deref(),
        Some(super::on_macos::WORKING_SET_UNREAD)
    );
}
