use super::*;

fn id(start_time: u64, comm: &str, name: &str) -> Identity {
    Identity {
        start_time,
        comm: comm.into(),
        naming: Naming {
            name: name.into(),
            cmdline: Some(format!("{comm} …").into()),
        },
    }
}

#[test]
fn start_time_and_name_are_read_once_per_process_and_again_for_a_reused_pid() {
    let mut ids = Identities::default();
    ids.begin_tick();
    assert_eq!(ids.known(42, 1001), None, "new pid: read it");
    ids.insert(42, 1001, id(5_000, "python3", "generate.py (python3)"));
    ids.end_tick();

    ids.begin_tick();
    let got = ids.known(42, 1001).unwrap();
    assert_eq!(got, id(5_000, "python3", "generate.py (python3)"));
    assert!(got.named_for("python3") && got.named_for(""));
    ids.end_tick();

    // pid 42 exited and was reused by a different program: new unique
    // id, so its start time and name are read again.
    ids.begin_tick();
    assert_eq!(ids.known(42, 2002), None);
    ids.insert(42, 2002, id(9_000, "node", "server.js (node)"));
    ids.end_tick();
    ids.begin_tick();
    assert_eq!(
        &*ids.known(42, 2002).unwrap().naming.name,
        "server.js (node)"
    );
    ids.end_tick();
}

#[test]
fn an_exec_is_told_by_a_new_comm() {
    // exec keeps the pid and unique id; comm changes.
    let known = id(5_000, "bash", "run.sh (bash)");
    assert!(!known.named_for("python3"));
}

#[test]
fn without_a_unique_id_the_start_time_decides() {
    let mut ids = Identities::default();
    ids.begin_tick();
    ids.insert(7, 0, id(100, "daemon", "daemon"));
    ids.end_tick();
    ids.begin_tick();
    // Unique id unreadable: always read the start time again…
    assert_eq!(ids.known(7, 0), None);
    // …and keep the name only when it is the same process.
    assert_eq!(&*ids.same_start(7, 100).unwrap().naming.name, "daemon");
    assert_eq!(ids.same_start(7, 101), None);
    assert_eq!(ids.same_start(8, 100), None);
}

#[test]
fn processes_not_seen_in_a_scan_are_forgotten() {
    let mut ids = Identities::default();
    ids.begin_tick();
    ids.insert(1, 11, id(1, "a", "a"));
    ids.insert(2, 22, id(2, "b", "b"));
    ids.end_tick();
    ids.begin_tick();
    assert!(ids.known(1, 11).is_some());
    ids.end_tick();
    assert_eq!(ids.len(), 1);
    ids.begin_tick();
    assert_eq!(ids.known(2, 22), None);
}

#[test]
fn host_statistics_at_most_once_a_second_and_never_when_only_polling() {
    let mut cache = VmStatsCache::default();
    let t0 = Instant::now();
    let calls = std::cell::Cell::new(0);
    let call = |c: u64| {
        calls.set(calls.get() + 1);
        Some(VmStats {
            compressed_bytes: c,
            wired_bytes: Some(c * 2),
            memory: None,
            swap_out_bytes: None,
        })
    };
    // The gate's poll: no call, nothing known yet.
    assert_eq!(cache.get(t0, false, || call(1)), VmStats::default());
    assert_eq!(cache.get(t0, true, || call(1)).compressed_bytes, 1);
    // Ticks within the second reuse the answer.
    for ms in [100, 500, 999] {
        let s = cache.get(t0 + Duration::from_millis(ms), true, || call(2));
        assert_eq!(s.compressed_bytes, 1);
    }
    // Polling after the second still makes no call, but sees the cache.
    let s = cache.get(t0 + Duration::from_millis(1500), false, || call(3));
    assert_eq!(s.compressed_bytes, 1);
    let s = cache.get(t0 + Duration::from_millis(1500), true, || call(4));
    assert_eq!(
        s,
        VmStats {
            compressed_bytes: 4,
            wired_bytes: Some(8),
            memory: None,
            swap_out_bytes: None,
        }
    );
    assert_eq!(calls.get(), 2);
}

#[test]
fn a_failed_host_statistics_call_keeps_the_last_figures() {
    let mut cache = VmStatsCache::default();
    let t0 = Instant::now();
    let memory = crate::probe::macos::parse::VmMemory {
        free_bytes: 1,
        ..Default::default()
    };
    let ok = VmStats {
        compressed_bytes: 10,
        wired_bytes: Some(20),
        memory: Some(memory),
        swap_out_bytes: Some(40),
    };
    cache.get(t0, true, || Some(ok));
    let s = cache.get(t0 + Duration::from_secs(2), true, || None);
    assert_eq!(s, ok);
    // An answer without the wired count, the page counts or swapouts keeps
    // the last.
    let s = cache.get(t0 + Duration::from_secs(4), true, || {
        Some(VmStats {
            compressed_bytes: 30,
            wired_bytes: None,
            memory: None,
            swap_out_bytes: None,
        })
    });
    assert_eq!(
        s,
        VmStats {
            compressed_bytes: 30,
            wired_bytes: Some(20),
            memory: Some(memory),
            swap_out_bytes: Some(40),
        }
    );
}

fn in_use(b: u64) -> Option<GpuMemory> {
    Some(GpuMemory {
        in_use_bytes: Some(b),
        alloc_bytes: Some(2 * b),
        ..GpuMemory::default()
    })
}

#[test]
fn the_gpu_registry_is_walked_at_most_once_a_second_and_never_when_only_polling() {
    let mut cache = GpuCache::new();
    let t0 = Instant::now();
    let walks = std::cell::Cell::new(0);
    let walk = |b: u64| {
        walks.set(walks.get() + 1);
        in_use(b)
    };
    // The gate's poll: nothing read, nothing known.
    assert_eq!(cache.get(t0, false, || walk(1), || Some(0), || None), None);
    let g = cache.get(t0, true, || walk(1), || Some(0), || Some(48 << 30));
    assert_eq!(
        g,
        Some(GpuMemory {
            in_use_bytes: Some(1),
            alloc_bytes: Some(2),
            wired_limit_mb: Some(0),
            recommended_working_set_bytes: Some(48 << 30),
            ..GpuMemory::default()
        })
    );
    for ms in [100, 999] {
        let g = cache.get(
            t0 + Duration::from_millis(ms),
            true,
            || walk(2),
            || None,
            || None,
        );
        assert_eq!(g.unwrap().in_use_bytes, Some(1), "within the second");
    }
    let later = t0 + Duration::from_millis(1500);
    let g = cache.get(later, false, || walk(3), || None, || None);
    assert_eq!(g.unwrap().in_use_bytes, Some(1), "polling reads the cache");
    let g = cache.get(later, true, || walk(4), || Some(0), || None);
    assert_eq!(g.unwrap().in_use_bytes, Some(4));
    assert_eq!(walks.get(), 2);
}

#[test]
fn metal_is_asked_once_and_again_only_when_the_wired_limit_changes() {
    let mut cache = GpuCache::new();
    let t0 = Instant::now();
    let asked = std::cell::Cell::new(0);
    let metal = |b: u64| {
        asked.set(asked.get() + 1);
        Some(b)
    };
    let at = |s: u64| t0 + Duration::from_secs(s);
    let g = cache.get(at(0), true, || in_use(1), || Some(0), || metal(48 << 30));
    assert_eq!(g.unwrap().recommended_working_set_bytes, Some(48 << 30));
    let g = cache.get(at(2), true, || in_use(1), || Some(0), || metal(1));
    assert_eq!(g.unwrap().recommended_working_set_bytes, Some(48 << 30));
    assert_eq!(asked.get(), 1, "same sysctl value: Metal not asked");
    // `sudo sysctl iogpu.wired_limit_mb=57344`: asked again.
    let g = cache.get(
        at(4),
        true,
        || in_use(1),
        || Some(57344),
        || metal(56 << 30),
    );
    let g = g.unwrap();
    assert_eq!(
        (g.wired_limit_mb, g.recommended_working_set_bytes),
        (Some(57344), Some(56 << 30))
    );
    assert_eq!(g.wired_limit_bytes(), Some(56 << 30));
    // Back to the default.
    let g = cache.get(at(6), true, || in_use(1), || Some(0), || metal(48 << 30));
    assert_eq!(g.unwrap().wired_limit_bytes(), Some(48 << 30));
    assert_eq!(asked.get(), 3);
}

#[test]
fn a_mac_without_any_gpu_figure_has_none_and_a_vanished_one_is_dropped() {
    let mut cache = GpuCache::new();
    let t0 = Instant::now();
    // An Intel Mac before macOS 14: no known key, no sysctl, no Metal read.
    assert_eq!(cache.get(t0, true, || None, || None, || None), None);
    // The limits alone still make a figure.
    let mut cache = GpuCache::new();
    let g = cache.get(t0, true, || None, || None, || Some(10 << 30));
    assert_eq!(g.unwrap().wired_limit_bytes(), Some(10 << 30));
    // An accelerator that is gone (an eGPU unplugged) reads as absent, not
    // as its last figures.
    let mut cache = GpuCache::new();
    cache.get(t0, true, || in_use(5), || None, || None);
    let g = cache.get(t0 + Duration::from_secs(2), true, || None, || None, || None);
    assert_eq!(g, None);
}

/// A sample of pid 42 as a read gives it.
fn read_of(footprint_bytes: u64, pageins: u64) -> ProcessSample {
    ProcessSample {
        pid: 42,
        ppid: 1,
        name: "worker".into(),
        uid: Some(501),
        footprint_bytes,
        pageins,
        readable: true,
        compressed_bytes: Some(0),
        swapin_bytes: Some(0),
        ..ProcessSample::default()
    }
}

/// One tick of the probe's loop over a listing of pid 42 (unique id
/// `uniqueid`): the repeated sample, or the read that gave `sample`.
/// Whether the tick read it.
fn tick(reads: &mut LastReads, uniqueid: u64, full: bool, sample: &ProcessSample) -> bool {
    reads.begin_tick();
    let read = reads.repeat(42, uniqueid, full).is_none();
    if read {
        reads.read(42, uniqueid, sample);
    }
    reads.end_tick();
    read
}

/// Bookkeeping past its first scan, which listed no pid 42: pid 42 starts
/// during the run.
fn after_first_scan() -> LastReads {
    let mut reads = LastReads::default();
    reads.begin_tick();
    reads.end_tick();
    reads
}

/// Pid 42 (unique id 1001), started during the run, read until idle: its
/// first read and [`IDLE_AFTER`](crate::probe::tiers::IDLE_AFTER) more, all
/// `still`.
fn idle(still: &ProcessSample) -> LastReads {
    let mut reads = after_first_scan();
    for _ in 0..=crate::probe::tiers::IDLE_AFTER {
        assert!(tick(&mut reads, 1001, false, still), "not idle yet: read");
    }
    reads
}

#[test]
fn a_process_unmoved_since_its_last_read_is_skipped_between_full_ticks_only() {
    use crate::probe::tiers::IDLE_AFTER;
    let mut reads = after_first_scan();
    let still = read_of(100 << 20, 7);
    assert!(tick(&mut reads, 1001, false, &still), "new: read");
    for n in 1..=IDLE_AFTER {
        assert!(
            tick(&mut reads, 1001, false, &still),
            "read {n}: not idle yet"
        );
    }
    assert!(!tick(&mut reads, 1001, false, &still), "idle: skipped");
    assert!(!tick(&mut reads, 1001, false, &still), "and again");
    assert!(tick(&mut reads, 1001, true, &still), "a full tick reads it");
    assert!(!tick(&mut reads, 1001, false, &still), "still idle");
    // Its footprint moved: seen at the next full tick, then read each tick
    // while it moves.
    let grown = read_of(300 << 20, 7);
    assert!(tick(&mut reads, 1001, true, &grown));
    let paged = read_of(300 << 20, 8);
    assert!(tick(&mut reads, 1001, false, &paged), "moved lately: read");
    assert!(tick(&mut reads, 1001, false, &paged), "a page-in is a move");
    assert!(!tick(&mut reads, 1001, false, &paged), "still since: idle");
}

/// A process listed at the first scan is idle from that read: the next
/// tick that is not full repeats it; it moves, and it is read each tick
/// until it stands still again.
#[test]
fn a_process_listed_at_the_first_scan_is_idle_from_its_first_read() {
    let mut reads = LastReads::default();
    let still = read_of(100 << 20, 7);
    assert!(
        tick(&mut reads, 1001, true, &still),
        "the first scan reads it"
    );
    assert!(
        !tick(&mut reads, 1001, false, &still),
        "idle at once: skipped"
    );
    let grown = read_of(300 << 20, 7);
    assert!(tick(&mut reads, 1001, true, &grown), "a full tick reads it");
    assert!(tick(&mut reads, 1001, false, &grown), "moved: read again");
    assert!(!tick(&mut reads, 1001, false, &grown), "still since: idle");
}

#[test]
fn a_skipped_process_repeats_its_last_read_with_the_scans_parent_owner_and_name() {
    let last = read_of(100 << 20, 7);
    let mut reads = idle(&last);
    reads.begin_tick();
    let kept = reads.repeat(42, 1001, false).expect("idle").clone();
    assert_eq!(kept, last);
    let naming = Naming {
        name: "exec'd".into(),
        cmdline: Some("exec'd --flag".into()),
    };
    let p = repeated(&kept, 7, Some(0), naming);
    assert_eq!((p.ppid, p.uid, &*p.name), (7, Some(0), "exec'd"));
    assert_eq!(p.cmdline.as_deref(), Some("exec'd --flag"));
    assert_eq!((p.footprint_bytes, p.pageins), (100 << 20, 7));
    // A scan that could not read the short BSD info says nothing of them.
    let p = repeated(&kept, 0, None, Naming::default());
    assert_eq!((p.ppid, p.uid), (1, Some(501)));
}

#[test]
fn a_new_or_reused_pid_or_one_without_a_unique_id_is_read_at_once() {
    let still = read_of(100 << 20, 7);
    let mut reads = idle(&still);
    assert!(!tick(&mut reads, 1001, false, &still), "idle");
    assert!(tick(&mut reads, 2002, false, &still), "reused pid: read");
    assert!(tick(&mut reads, 2002, false, &still), "and counted afresh");
    // Without a unique id a reuse cannot be told: read every tick, not kept.
    for _ in 0..=crate::probe::tiers::IDLE_AFTER + 1 {
        assert!(tick(&mut reads, 0, false, &still));
    }
    assert!(reads.is_empty());
}

#[test]
fn a_process_that_was_compressed_or_swapped_moved_though_its_footprint_did_not() {
    let still = read_of(100 << 20, 7);
    let mut reads = idle(&still);
    let compressed = ProcessSample {
        compressed_bytes: Some(40 << 20),
        ..still.clone()
    };
    assert!(tick(&mut reads, 1001, true, &compressed), "full");
    let swapped_in = ProcessSample {
        swapin_bytes: Some(1 << 20),
        ..compressed
    };
    assert!(tick(&mut reads, 1001, false, &swapped_in), "moved: read");
    assert!(
        tick(&mut reads, 1001, false, &swapped_in),
        "moved again: read"
    );
    assert!(!tick(&mut reads, 1001, false, &swapped_in), "still: idle");
}

#[test]
fn a_process_gone_from_the_scan_or_mid_read_is_forgotten() {
    let mut reads = after_first_scan();
    reads.begin_tick();
    for pid in [42, 43, 44] {
        assert!(reads.repeat(pid, 1000 + u64::from(pid), false).is_none());
        reads.read(pid, 1000 + u64::from(pid), &read_of(1, 1));
    }
    reads.end_tick();
    assert_eq!(reads.len(), 3);
    reads.begin_tick();
    // 42 is not listed; 43 exits while it is read.
    assert!(reads.repeat(43, 1043, false).is_none());
    reads.forget(43);
    assert!(reads.repeat(44, 1044, false).is_none());
    reads.read(44, 1044, &read_of(1, 1));
    reads.end_tick();
    assert_eq!(reads.len(), 1, "only the listed pid is kept");
}
