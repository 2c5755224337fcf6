use super::*;
use crate::probe::linux::fd::MAX_KEPT;
use crate::probe::linux::parse::{parse_stat, StatusFigures};
use crate::probe::naming::{Naming, ARGS_RETRIES};
use crate::probe::tiers::{FullTicks, Unmoved, FULL_EVERY};

#[test]
fn sees_itself_with_real_figures() {
    let mut probe = NativeProbe::new().unwrap();
    let me = std::process::id();
    for _ in 0..2 {
        // Twice: the second tick may reuse cached status figures.
        let (sys, procs) = probe.sample().unwrap();
        assert!(sys.phys_bytes > 0 && sys.free_pct > 0.0 && sys.free_pct <= 100.0);
        let p = procs
            .iter()
            .find(|p| p.pid == me)
            .expect("this test process is listed");
        assert!(p.footprint_bytes > 0, "{p:?}");
        assert!(p.swap_bytes.is_some());
        assert_eq!(p.ppid, std::os::unix::process::parent_id());
        assert!(
            !procs.iter().any(|p| p.pid == 2),
            "kthreadd is a kernel thread"
        );
    }
}

#[test]
fn kept_descriptors_stay_under_the_cap_and_every_process_is_sampled() {
    let mut children: Vec<_> = (0..40)
        .map(|_| {
            std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap()
        })
        .collect();
    let mut probe = NativeProbe::new().unwrap();
    probe.cap = 8;
    for tick in 0..3 {
        let (_, procs) = probe.sample().unwrap();
        for c in &children {
            assert!(
                procs.iter().any(|p| p.pid == c.id()),
                "tick {tick}: child {} not sampled",
                c.id()
            );
        }
        // `stat`, or `statm` once idle: one descriptor either way.
        let open = probe.known.values();
        let open: usize = open
            .map(|k| usize::from(k.stat.is_some()) + usize::from(k.statm.is_some()))
            .sum();
        assert_eq!(open, probe.kept(), "the count follows the descriptors");
        assert!(open <= 8, "tick {tick}: {open} descriptors kept, cap 8");
    }
    // The largest processes keep theirs: after a tick's ranking none
    // left out is larger than one kept, and the kept ones hold theirs.
    let kept = probe.known.values().filter(|k| k.keep);
    let smallest_kept = kept.clone().map(|k| k.rss_pages).min().unwrap();
    let largest_left = probe.known.values().filter(|k| !k.keep);
    let largest_left = largest_left.map(|k| k.rss_pages).max().unwrap();
    assert!(smallest_kept >= largest_left && smallest_kept > 0);
    assert_eq!(kept.clone().count(), 8);
    assert!(probe
        .known
        .values()
        .all(|k| k.keep || (k.stat.is_none() && k.statm.is_none())));
    probe.shed();
    assert_eq!((probe.kept(), probe.cap), (0, 4));
    for c in &mut children {
        let _ = c.kill();
        let _ = c.wait();
    }
}

#[test]
fn processes_tied_at_the_threshold_never_take_the_room_of_larger_ones() {
    // Many equal small processes (a quiet CI box running 40 `sleep`s)
    // and a few larger ones: every larger one keeps its descriptor,
    // whatever order the map visits them in.
    for round in 0..50u32 {
        let mut probe = NativeProbe::new().unwrap();
        probe.known.clear();
        probe.cap = 4;
        let sizes = [9, 8, 7, 5, 5, 5, 5, 5, 5, 0, 0];
        for (i, rss) in sizes.into_iter().enumerate() {
            let pid = round * 100 + i as u32 + 1;
            probe.known.insert(
                pid,
                Known {
                    stat: None,
                    start_time: 1,
                    rss_pages: rss,
                    majflt: 0,
                    status: StatusFigures::default(),
                    tick: 0,
                    keep: false,
                    unmoved: Unmoved::default(),
                    idle_sample: None,
                    kernel: false,
                    statm: None,
                    statm_resident: 0,
                    read_once: false,
                },
            );
        }
        probe.rank();
        let mut kept: Vec<u64> = probe
            .known
            .values()
            .filter(|k| k.keep)
            .map(|k| k.rss_pages)
            .collect();
        kept.sort_unstable();
        assert_eq!(kept, [5, 7, 8, 9], "round {round}");
    }
}

#[test]
fn the_cap_is_a_quarter_of_the_limit() {
    assert_eq!(kept_cap(Some(64)), 16);
    assert_eq!(kept_cap(Some(1024)), 256);
    assert_eq!(kept_cap(Some(1 << 20)), MAX_KEPT);
    assert_eq!(kept_cap(None), MAX_KEPT);
    assert_eq!(kept_cap(Some(3)), 0);
}

#[test]
fn footprint_follows_allocation_across_ticks() {
    let mut probe = NativeProbe::new().unwrap();
    let me = std::process::id();
    let before = probe
        .sample()
        .unwrap()
        .1
        .into_iter()
        .find(|p| p.pid == me)
        .unwrap()
        .footprint_bytes;
    let mut big = vec![1u8; 64 << 20];
    for (i, b) in big.iter_mut().enumerate().step_by(4096) {
        *b = i as u8;
    }
    // Found at the first tick, this process counts as idle: a full tick
    // reads it (the used memory it moved may be hidden by other tests
    // freeing as much meanwhile).
    probe.full = FullTicks::default();
    let after = probe
        .sample()
        .unwrap()
        .1
        .into_iter()
        .find(|p| p.pid == me)
        .unwrap()
        .footprint_bytes;
    std::hint::black_box(&big);
    assert!(
        after >= before + (60 << 20),
        "before {before}, after {after}"
    );
}

/// Spawns `program args`, samples until it is listed as `want` says
/// (a launcher such as pyenv's shim execs the real program later) with a
/// command line that starts with `program`, or for 2 s; kills it.
///
/// The spawn returns as the child's `execve` lets go of the test's memory
/// (`posix_spawn`'s vfork; `exec_mm_release` in `exec_mmap`, fs/exec.c),
/// before its arguments are in place (`create_elf_tables`,
/// fs/binfmt_elf.c): a read then may find no command line or, once in six
/// lib runs here, a short one not the child's. The probe names the child
/// again when its short name or stack start change, or its arguments were
/// missing; waiting for its own line checks that too.
fn named(
    program: &std::path::Path,
    args: &[&str],
    want: impl Fn(&ProcessSample) -> bool,
) -> ProcessSample {
    let mut child = std::process::Command::new(program)
        .args(args)
        .spawn()
        .unwrap();
    let mut probe = NativeProbe::new().unwrap();
    let program = program.to_string_lossy();
    let ours = |p: &ProcessSample| {
        p.cmdline
            .as_deref()
            .is_some_and(|c| c.starts_with(&*program))
    };
    let mut found = None;
    for _ in 0..100 {
        let (_, procs) = probe.sample().unwrap();
        found = procs.into_iter().find(|p| p.pid == child.id());
        if found.as_ref().is_some_and(|p| ours(p) && want(p)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    found.expect("the child is listed")
}

fn temp_dir(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("swapsight-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn an_executable_name_longer_than_comm_shows_in_full() {
    let dir = temp_dir("long-name");
    let long = dir.join("a-sleeper-with-a-long-name");
    std::fs::copy("/bin/sleep", &long).unwrap();
    let p = named(&long, &["30"], |p| p.cmdline.is_some());
    assert_eq!(&*p.name, "a-sleeper-with-a-long-name");
    assert_eq!(
        p.cmdline.as_deref(),
        Some(format!("{} 30", long.display()).as_str())
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A command line longer than a page comes whole up to the cap from one
/// read (procfs stops a read short only at the end).
#[test]
fn a_command_line_over_a_page_long_is_read_up_to_the_cap() {
    let (a, b) = ("a".repeat(3000), "b".repeat(3000));
    let p = named(
        std::path::Path::new("/bin/sh"),
        &["-c", "sleep 30; :", "sh", &a, &b],
        |p| p.cmdline.is_some(),
    );
    let line = p.cmdline.as_deref().unwrap();
    let head = format!("/bin/sh -c 'sleep 30; :' sh {a} b");
    assert!(
        line.starts_with(&head),
        "{:?}",
        line.get(..80).unwrap_or(line)
    );
    assert!(
        line.ends_with("b…"),
        "cut at the cap: …{}",
        &line[line.len() - 20..]
    );
    assert_eq!(line.len(), crate::probe::naming::CMDLINE_MAX_BYTES);
}

#[test]
fn a_python_script_is_named_by_its_file() {
    let dir = temp_dir("script");
    let script = dir.join("distinctive_pipeline.py");
    std::fs::write(&script, "import time\ntime.sleep(30)\n").unwrap();
    let p = named(
        std::path::Path::new("python3"),
        &["-u", script.to_str().unwrap()],
        |p| p.name.starts_with("distinctive_pipeline.py"),
    );
    assert!(
        p.name.starts_with("distinctive_pipeline.py (python3"),
        "{p:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn arguments_are_read_once_per_process() {
    let mut probe = NativeProbe::new().unwrap();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let (_, procs) = probe.sample().unwrap();
        seen.extend(
            procs
                .into_iter()
                .map(|p| (p.pid, p.start_time, p.name, p.cmdline.is_none())),
        );
    }
    // One read per process (a new name after an exec is a new read); 20
    // ticks of re-reading would be 20 per process. Slack for a process
    // that exec'd into the same name meanwhile, and for the few retries
    // of processes without readable arguments (zombies).
    let reads = probe.names.reads() as usize;
    let unreadable = seen.iter().filter(|p| p.3).count();
    assert!(
        reads >= seen.len().min(1)
            && reads <= seen.len() + unreadable * usize::from(ARGS_RETRIES) + 2,
        "{reads} reads for {} processes",
        seen.len()
    );
}

#[test]
fn a_process_started_between_ticks_is_sampled_and_one_that_exited_is_dropped() {
    let mut probe = NativeProbe::new().unwrap();
    probe.sample().unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id();
    let (_, procs) = probe.sample().unwrap();
    assert!(
        procs.iter().any(|p| p.pid == pid),
        "the new child is listed"
    );
    let _ = child.kill();
    let _ = child.wait();
    let (_, procs) = probe.sample().unwrap();
    assert!(
        !procs.iter().any(|p| p.pid == pid),
        "the reaped child is not"
    );
    assert!(!probe.listed.contains(&pid));
    assert!(procs.windows(2).all(|w| w[0].pid < w[1].pid), "by pid");
}

#[test]
fn with_no_pid_handed_out_the_last_listing_is_reused_less_the_gone() {
    // A loadavg whose last pid never moves: every tick after the first
    // reuses the first listing, so a process started since is not seen
    // (no real process starts without moving it) and one that exited is
    // dropped from the listing.
    let dir = temp_dir("loadavg");
    let fake = dir.join("loadavg");
    std::fs::write(&fake, "0.00 0.00 0.00 1/1 42\n").unwrap();
    let mut old = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let mut probe = NativeProbe::new().unwrap();
    probe.loadavg = Some(File::open(&fake).unwrap());
    let (_, first) = probe.sample().unwrap();
    assert!(first.iter().any(|p| p.pid == old.id()));
    assert_eq!(probe.listed_at, Some(42));
    let mut new = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let _ = old.kill();
    let _ = old.wait();
    // Found at the first tick, `old` is idle: a full tick reads it and
    // finds it gone (a tick that is not full repeats it until then).
    probe.full = FullTicks::default();
    let (_, second) = probe.sample().unwrap();
    assert!(!second.iter().any(|p| p.pid == new.id()), "listing reused");
    assert!(!second.iter().any(|p| p.pid == old.id()));
    assert!(!probe.listed.contains(&old.id()), "the gone are dropped");
    assert!(second.iter().any(|p| p.pid == std::process::id()));
    // Once the last pid moves, /proc is listed again.
    std::fs::write(&fake, "0.00 0.00 0.00 1/1 43\n").unwrap();
    let (_, third) = probe.sample().unwrap();
    assert!(third.iter().any(|p| p.pid == new.id()));
    assert_eq!(probe.listed_at, Some(43));
    let _ = new.kill();
    let _ = new.wait();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn this_process_reads_its_own_pid_namespace_in_proc() {
    let mut probe = NativeProbe::new().unwrap();
    assert!(
        probe.loadavg.is_some(),
        "/proc is of this pid namespace here"
    );
    assert!(probe.last_pid().is_some_and(|p| p > 1));
}

#[test]
fn an_exec_that_keeps_comm_is_named_by_its_new_script() {
    // python3 running first_script.py execs python3 with second_script.py
    // once the probe has named it: comm stays `python3`.
    let dir = temp_dir("exec-same-comm");
    let go = dir.join("go");
    let second = dir.join("second_script.py");
    std::fs::write(&second, "import time\ntime.sleep(30)\n").unwrap();
    let first = dir.join("first_script.py");
    std::fs::write(
        &first,
        format!(
            "import os, sys, time\nwhile not os.path.exists({go:?}):\n    time.sleep(0.02)\nos.execv(sys.executable, [sys.executable, {second:?}])\n",
            go = go.to_str().unwrap(),
            second = second.to_str().unwrap()
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new("python3")
        .arg(&first)
        .spawn()
        .unwrap();
    let mut probe = NativeProbe::new().unwrap();
    let mut names = Vec::new();
    for _ in 0..250 {
        let (_, procs) = probe.sample().unwrap();
        let name = procs
            .iter()
            .find(|p| p.pid == child.id())
            .map(|p| p.name.clone());
        if let Some(name) = name {
            if name.starts_with("first_script.py") {
                std::fs::write(&go, "").unwrap();
            }
            if names.last() != Some(&name) {
                names.push(name.clone());
            }
            if name.starts_with("second_script.py") {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("first_script.py (python3"))
            && names
                .last()
                .is_some_and(|n| n.starts_with("second_script.py (python3")),
        "{names:?}"
    );
}

#[test]
fn a_loadavg_that_does_not_follow_proc_is_found_out_and_dropped() {
    // A last pid that never moves while processes start: the checking
    // listing finds the new one, and /proc is listed every tick after.
    let dir = temp_dir("stale-loadavg");
    let fake = dir.join("loadavg");
    std::fs::write(&fake, "0.00 0.00 0.00 1/1 42\n").unwrap();
    let mut probe = NativeProbe::new().unwrap();
    probe.loadavg = Some(File::open(&fake).unwrap());
    probe.sample().unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    probe.tick = CHECK_EVERY - 1;
    let (_, procs) = probe.sample().unwrap();
    assert!(procs.iter().any(|p| p.pid == child.id()), "the check lists");
    assert!(probe.loadavg.is_none(), "and distrusts this loadavg");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_made_up_last_pid_of_zero_is_no_last_pid() {
    let dir = temp_dir("zero-loadavg");
    let fake = dir.join("loadavg");
    std::fs::write(&fake, "0.00 0.00 0.00 0/0 0\n").unwrap();
    let mut probe = NativeProbe::new().unwrap();
    probe.loadavg = Some(File::open(&fake).unwrap());
    assert_eq!(probe.last_pid(), None);
    probe.sample().unwrap();
    assert_eq!(probe.listed_at, None, "listed again next tick");
    let _ = std::fs::remove_dir_all(dir);
}

/// A Python child that sleeps on stdin and, told to, touches `mib` MiB and
/// says so; ended when dropped.
struct Grower(std::process::Child);

impl Grower {
    fn spawn(mib: u32) -> Grower {
        use std::process::{Command, Stdio};
        let script = format!(
            "import sys\nsys.stdin.readline()\nb = bytearray({mib} << 20)\n\
             for i in range(0, len(b), 4096): b[i] = 1\n\
             print('grown', flush=True)\nsys.stdin.readline()"
        );
        let child = Command::new("python3")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Until Python waits on stdin: it is Python (`python3` on PATH may
        // be a shell script that execs it, pyenv's shim, which a loaded
        // machine showed standing still as `bash`) and its resident pages
        // stand still (a probe started before would find it idle, then
        // moving).
        let statm = format!("/proc/{}/statm", child.id());
        let comm = format!("/proc/{}/comm", child.id());
        let mut last = String::new();
        for _ in 0..200 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let now = std::fs::read_to_string(&statm).unwrap_or_default();
            let python = std::fs::read_to_string(&comm).is_ok_and(|c| c.starts_with("python"));
            if python && now == last {
                break;
            }
            last = now;
        }
        Grower(child)
    }

    fn id(&self) -> u32 {
        self.0.id()
    }

    /// Tells it to grow; returns once it has.
    fn grow(&mut self) {
        use std::io::{BufRead, Write};
        self.0.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(self.0.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "grown");
    }
}

impl Drop for Grower {
    fn drop(&mut self) {
        use std::io::Write;
        let _ = self.0.stdin.as_mut().map(|i| i.write_all(b"end\n"));
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An idle process is not read between full ticks; once it starts to grow
/// (used memory moves past the step) the very next tick reads it in full,
/// and whatever the machine does, a full tick within [`FULL_EVERY`] does.
#[test]
fn an_idle_process_that_starts_growing_is_read_the_very_next_tick() {
    let mut child = Grower::spawn(512);
    let pid = child.id();
    let mut probe = NativeProbe::new().unwrap();
    let mut idle = false;
    for _ in 0..60 {
        probe.sample().unwrap();
        if probe.known.get(&pid).is_some_and(|k| k.skippable()) {
            idle = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(idle, "the sleeping child never counted as idle");
    let (_, procs) = probe.sample().unwrap();
    assert!(
        procs.iter().any(|p| p.pid == pid),
        "a skipped process is still listed"
    );
    let before = procs.iter().find(|p| p.pid == pid).unwrap().footprint_bytes;
    child.grow();
    let grown = |procs: &[ProcessSample]| {
        procs
            .iter()
            .find(|p| p.pid == pid)
            .is_some_and(|p| p.footprint_bytes >= before + (500 << 20))
    };
    let at = probe.full.last().expect("a full tick was taken");
    let (sys, procs) = probe.sample().unwrap();
    let step = crate::probe::tiers::full_step_bytes(sys.phys_bytes);
    // The machine's used memory moved with the child (unless, on a busy
    // machine, others freed as much meanwhile): the very next tick read it.
    let moved = sys.used_bytes().abs_diff(at.used_bytes) >= step;
    let mut read = grown(&procs);
    if moved {
        assert!(
            read,
            "used memory moved past the step and the tick skipped the child"
        );
    }
    for _ in 0..FULL_EVERY {
        if read {
            break;
        }
        read = grown(&probe.sample().unwrap().1);
    }
    drop(child);
    assert!(read, "not read within a full tick's period");
}

/// A process in no memory limit is looked up in cgroupfs at full ticks
/// only; one in a limit every time (its usage is the figure).
#[test]
fn a_process_in_no_limit_is_looked_up_in_cgroupfs_at_full_ticks_only() {
    let mut probe = NativeProbe::new().unwrap();
    let me = std::process::id();
    probe.sample().unwrap(); // the first tick is full
    let reads = probe.scope_reads;
    let first = probe.scope(me).unwrap();
    assert_eq!(probe.scope_reads, reads + 1);
    let again = probe.scope(me).unwrap();
    if first.is_none() {
        assert_eq!(again, None);
        assert_eq!(
            probe.scope_reads,
            reads + 1,
            "read again before a full tick"
        );
        // Another pid is no answer for this one.
        let _ = probe.scope(1);
        assert_eq!(probe.scope_reads, reads + 2);
        let _ = probe.scope(me);
        assert_eq!(probe.scope_reads, reads + 3);
        // A full tick: looked up again.
        probe.full = FullTicks::default();
        probe.sample().unwrap();
        let _ = probe.scope(me);
        assert_eq!(
            probe.scope_reads,
            reads + 4,
            "not looked up after a full tick"
        );
    } else {
        assert_eq!(
            probe.scope_reads,
            reads + 2,
            "a scope with a limit was not read again"
        );
    }
}

/// At a full tick an idle process that keeps `statm` open is checked by its
/// resident pages alone, keeps its figures while they stand, and is read in
/// full the first full tick after they moved; one that exited is dropped.
#[test]
fn an_idle_process_is_checked_with_statm_at_full_ticks_and_read_in_full_once_it_moved() {
    let mut child = Grower::spawn(64);
    let mut gone = std::process::Command::new("/bin/sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let (pid, gone_pid) = (child.id(), gone.id());
    let mut probe = NativeProbe::new().unwrap();
    let traded = |probe: &NativeProbe, pid| {
        probe
            .known
            .get(&pid)
            .is_some_and(|k| k.statm.is_some() && k.stat.is_none() && k.skippable())
    };
    let full_tick = |probe: &mut NativeProbe| {
        probe.full = FullTicks::default();
        probe.sample().unwrap().1
    };
    // Found at the first tick, both are idle from it; a full tick that
    // finds the child's pages moved since (its interpreter still settling
    // on a busy machine) reads it in full, and it is idle again a tick
    // later: wait for a full tick that finds it still.
    let mut still = None;
    for _ in 0..60 {
        probe.sample().unwrap();
        if traded(&probe, pid) && traded(&probe, gone_pid) {
            let procs = full_tick(&mut probe);
            if traded(&probe, pid) {
                assert!(probe.last_reads.statm >= 2, "{:?}", probe.last_reads);
                still = procs.iter().find(|p| p.pid == pid).cloned();
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = still
        .expect("no full tick found the idle child unmoved")
        .footprint_bytes;

    gone.kill().unwrap();
    gone.wait().unwrap();
    child.grow();
    let procs = full_tick(&mut probe);
    let after = procs.iter().find(|p| p.pid == pid).unwrap().footprint_bytes;
    drop(child);
    assert!(
        after >= before + (60 << 20),
        "grown by 64 MiB, yet {before} → {after}"
    );
    assert!(!traded(&probe, pid), "moved, yet still checked by statm");
    assert!(
        procs.iter().all(|p| p.pid != gone_pid),
        "an exited process still listed"
    );
}

/// A process found at the first tick is idle from that read and trades
/// its `stat` for `statm` then, so the second tick does not read it; one
/// that starts later trades at its second read when it finds it idle. Either
/// way `statm` is opened before that read, and `stat` not read again.
#[test]
fn an_idle_process_trades_stat_for_statm_at_its_first_read_at_start_else_at_its_second() {
    let mut child = exec_d_sleeper();
    let pid = child.id();
    // Its last pages faulted in: they and its faults stay put from here on.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut probe = NativeProbe::new().unwrap();
    probe.sample().unwrap();
    let k = &probe.known[&pid];
    assert!(k.skippable(), "found at the first tick, yet not idle");
    assert!(k.statm.is_some() && k.stat.is_none(), "not traded at once");
    let mut late = exec_d_sleeper();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let (_, second) = probe.sample().unwrap();
    assert!(
        second.iter().any(|p| p.pid == pid),
        "an idle process dropped"
    );
    // (Unless the machine's figures moved, as other tests run, and made
    // the tick full: then `statm` alone checked it.)
    let full = probe.full.last().is_some_and(|a| a.tick == probe.tick);
    assert!(
        (full || probe.last_reads.skipped > 0) && probe.known[&pid].statm.is_some(),
        "the second tick read what the first found idle: {:?}",
        probe.last_reads
    );
    let k = &probe.known[&late.id()];
    assert!(k.read_once && k.stat.is_some() && k.statm.is_none());
    probe.sample().unwrap();
    let k = &probe.known[&late.id()];
    for c in [&mut child, &mut late] {
        let _ = c.kill();
        let _ = c.wait();
    }
    assert!(k.skippable() && !k.read_once, "idle after its second read");
    assert!(k.statm.is_some() && k.stat.is_none(), "traded for statm");
    // Both had `statm` opened before their read. (Others may not: one that
    // moved at the second tick and stands still at the third, or one whose
    // `stat` the first tick could not keep, past the cap, read at a full
    // second tick.)
    for pid in [pid, late.id()] {
        assert!(
            !probe.traded_read_again.contains(&pid),
            "stat read again to trade {pid}"
        );
    }
    let open = probe.known.values();
    let open: usize = open
        .map(|k| usize::from(k.stat.is_some()) + usize::from(k.statm.is_some()))
        .sum();
    assert_eq!(open, probe.kept(), "unused statm closed, not counted");
}

/// `pswpout` is answered from the last `vmstat` read while swap used stands
/// still, for fewer than [`FULL_EVERY`] calls; swap used moving, or the
/// age, reads the file again.
#[test]
fn vmstat_is_read_again_when_swap_used_moves_or_the_last_read_is_old() {
    let mut probe = NativeProbe::new().unwrap();
    let marker = Some(u64::MAX - 7);
    let mut judged = false;
    for _ in 0..20 {
        let swap_used = probe.system().unwrap().swap_used_bytes;
        probe.written = Some(Written {
            swap_used,
            age: 0,
            bytes: marker,
        });
        let again = probe.system().unwrap();
        if again.swap_used_bytes != swap_used {
            continue; // the machine swapped meanwhile: try once more
        }
        assert_eq!(again.swap_out_bytes, marker, "read again, swap unmoved");
        // Old enough: read again.
        probe.written = Some(Written {
            swap_used,
            age: FULL_EVERY - 1,
            bytes: marker,
        });
        let old = probe.system().unwrap();
        assert_ne!(old.swap_out_bytes, marker, "an old read answered");
        // Swap used moved: read again.
        probe.written = Some(Written {
            swap_used: swap_used.wrapping_add(4096),
            age: 0,
            bytes: marker,
        });
        assert_ne!(probe.system().unwrap().swap_out_bytes, marker);
        judged = true;
        break;
    }
    assert!(judged, "swap used moved at every call");
}

#[test]
fn a_new_stack_start_reads_status_again_though_pages_and_faults_stayed() {
    // An exec (a set-user-ID program, a new uid) that happens to leave the
    // resident pages and major faults as they were: the name cache saw a
    // new stack start.
    // A sleeping child, whose pages and faults stay put between ticks.
    let mut child = exec_d_sleeper();
    let pid = child.id();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut probe = NativeProbe::new().unwrap();
    let uid_of = |probe: &mut NativeProbe| {
        let (_, procs) = probe.sample().unwrap();
        procs.iter().find(|p| p.pid == pid).unwrap().uid
    };
    let real = uid_of(&mut probe);
    assert!(real.is_some());
    // Settled before the probe started, it is idle from its first read;
    // else read until the probe finds it so.
    while !probe.known[&pid].unmoved.idle() {
        assert!(std::time::Instant::now() < until, "sleep never settled");
        std::thread::sleep(std::time::Duration::from_millis(20));
        uid_of(&mut probe);
    }
    let planted = Some(real.unwrap().wrapping_add(4242));
    // What an earlier image left cached, with this tick's pages and faults:
    // kept while the image is the same (the cache this test is about) ...
    let stale = |probe: &mut NativeProbe, image_moved: bool| {
        let n = probe.stat(pid).unwrap().0;
        let stat = parse_stat(&probe.buf[..n]).unwrap();
        let (start, comm, stack) = (stat.starttime, stat.comm.to_vec(), stat.start_stack);
        let k = probe.known.get_mut(&pid).unwrap();
        k.status.uid = planted;
        (k.rss_pages, k.majflt) = (stat.rss_pages, stat.majflt);
        k.unmoved = Unmoved::default();
        if image_moved {
            // The name cache last saw another stack start: an exec since.
            let earlier = stack.wrapping_add(1);
            probe
                .names
                .get_image(pid, start, &comm, earlier, Naming::default);
        }
    };
    stale(&mut probe, false);
    let kept = uid_of(&mut probe);
    // ... and read again once the stack start moved.
    stale(&mut probe, true);
    let read = uid_of(&mut probe);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(kept, planted);
    assert_eq!(read, real);
}

/// A `/bin/sleep` child once it runs `sleep` and sits still: `spawn`
/// returns inside the child's `execve`, and until `comm` is the new one the
/// name cache would rightly see the exec still to come; the kernel sets
/// `comm` before the new stack (`start_stack` reads 0 until
/// `setup_arg_pages`, `fs/binfmt_elf.c`), and the program then faults its
/// pages in. A probe finds a process there before it idle from its first
/// read, so the tests that plant figures need these to stand still first.
fn exec_d_sleeper() -> std::process::Child {
    let child = std::process::Command::new("/bin/sleep")
        .arg("600")
        .spawn()
        .unwrap();
    settle(child.id());
    child
}

/// Waits until `pid` runs `sleep` with its stack start set, and its
/// resident pages and faults stand still ([`exec_d_sleeper`]).
fn settle(pid: u32) {
    let comm = format!("/proc/{pid}/comm");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() != "sleep") {
        assert!(std::time::Instant::now() < until, "sleep never ran");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let figures = || {
        let bytes = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        let s = parse_stat(&bytes)?;
        Some((s.start_stack, s.rss_pages, s.majflt))
    };
    let mut last = None;
    loop {
        assert!(std::time::Instant::now() < until, "sleep never settled");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = figures();
        if now.is_some_and(|(stack, _, _)| stack != 0) && now == last {
            return;
        }
        last = now;
    }
}

/// A watched process is read every tick: a step of it too small to move the
/// machine's figures (here 8 MiB against a step of at least 16 MiB) shows
/// at the next tick, while an unwatched twin that grew as much keeps its
/// last figures until a full tick. The run a recording watches is what its
/// figures are for.
#[test]
fn a_watched_process_is_read_every_tick_though_it_was_idle() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    // Grows by 8 MiB each line it is sent, and says so.
    let script = "import sys\nheld = []\nfor line in sys.stdin:\n    b = bytearray(8 << 20)\n    \
                  for i in range(0, len(b), 4096): b[i] = 1\n    held.append(b)\n    \
                  print('grown', flush=True)";
    let spawn = || {
        Command::new("python3")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (mut watched, mut twin) = (spawn(), spawn());
    let grow = |c: &mut std::process::Child| {
        c.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(c.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "grown");
    };
    let (w, t) = (watched.id(), twin.id());
    let mut probe = NativeProbe::new().unwrap();
    let idle = |probe: &NativeProbe, pid| probe.known.get(&pid).is_some_and(|k| k.skippable());
    for _ in 0..100 {
        probe.sample().unwrap();
        if idle(&probe, w) && idle(&probe, t) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(idle(&probe, w) && idle(&probe, t), "the two never settled");
    probe.watch_closely(&[w]);
    let footprint =
        |procs: &[ProcessSample], pid| procs.iter().find(|p| p.pid == pid).unwrap().footprint_bytes;
    // A round is judged only when its tick was not full (the twin is then
    // skipped); a busy machine may make a few full.
    let mut judged = 0;
    for _ in 0..6 {
        let (_, before) = probe.sample().unwrap();
        let (bw, bt) = (footprint(&before, w), footprint(&before, t));
        grow(&mut watched);
        grow(&mut twin);
        // Skipped at a tick that is not full: idle now (not moved at its
        // last read).
        let twin_idle = idle(&probe, t);
        let (_, after) = probe.sample().unwrap();
        if !twin_idle || probe.last_reads.skipped == 0 {
            continue;
        }
        judged += 1;
        assert!(
            footprint(&after, w) >= bw + (7 << 20),
            "the watched process was not read: {} then {}",
            bw,
            footprint(&after, w)
        );
        assert_eq!(
            footprint(&after, t),
            bt,
            "the unwatched twin was read: the round tells nothing"
        );
    }
    for c in [&mut watched, &mut twin] {
        let _ = c.kill();
        let _ = c.wait();
    }
    assert!(judged >= 2, "only {judged} of 6 rounds could be judged");
}

/// The sample of `pid` in `procs`.
fn of(procs: &[ProcessSample], pid: u32) -> &ProcessSample {
    procs
        .iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("pid {pid} is not listed"))
}

/// With [`Probe::name_largest`] (here 0: the consumer shows the watched
/// tree and the flagged only), the first sample names the watched root
/// and its child in full and leaves an idle process outside under its
/// `comm`, with no command line and no argument read; that process is
/// named in full in the very sample that finds it moved, and a process
/// that starts later is named in full at its first sample.
#[test]
fn a_process_nobody_shows_is_named_once_it_moves_and_the_watched_at_once() {
    let mut grower = Grower::spawn(32);
    let root = std::process::Command::new("/bin/sh")
        .args(["-c", "/bin/sleep 600 & wait"])
        .spawn()
        .unwrap();
    let children = format!("/proc/{0}/task/{0}/children", root.id());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let child = loop {
        let text = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(pid) = text
            .split_whitespace()
            .next()
            .and_then(|p| p.parse::<u32>().ok())
        {
            if std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "sleep")
            {
                break pid;
            }
        }
        assert!(
            std::time::Instant::now() < until,
            "sh never started its sleep"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    // Python has run its first line (it waits on stdin), so its pages sit still.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut probe = NativeProbe::new().unwrap();
    probe.name_largest(0);
    probe.watch_closely(&[root.id()]);
    let (_, first) = probe.sample().unwrap();
    for pid in [root.id(), child] {
        assert!(
            of(&first, pid).cmdline.is_some() && !probe.names.is_waiting(pid),
            "a watched process was not named: {:?}",
            of(&first, pid)
        );
    }
    assert!(
        of(&first, child)
            .cmdline
            .as_deref()
            .is_some_and(|c| c.contains("600")),
        "the watched root's child: {:?}",
        of(&first, child).cmdline
    );
    let g = grower.id();
    assert!(
        probe.names.is_waiting(g),
        "the idle python was named at once"
    );
    assert_eq!(of(&first, g).cmdline, None);
    assert_eq!(&*of(&first, g).name, "python3");
    assert_eq!(
        probe.names.reads(),
        2,
        "arguments were read for more than the watched two"
    );
    grower.grow();
    let late = exec_d_sleeper();
    // Found idle at the first tick, the python is read again at a full
    // tick (made at once by the machine's figures when it grows by more
    // than their step; this one grows by less).
    probe.full = FullTicks::default();
    let (_, second) = probe.sample().unwrap();
    assert!(
        of(&second, g)
            .cmdline
            .as_deref()
            .is_some_and(|c| c.contains("bytearray")),
        "the python that grew is still unnamed: {:?}",
        of(&second, g)
    );
    assert!(!probe.names.is_waiting(g));
    assert_eq!(
        of(&second, late.id()).cmdline.as_deref(),
        Some("/bin/sleep 600"),
        "a process that started after the first sample waits for its name"
    );
    for mut c in [root, late] {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = std::process::Command::new("/bin/kill")
        .arg(child.to_string())
        .status();
}

/// The largest processes are named at the first sample, and one that
/// comes among them later is named in the sample where it does, though it
/// never moved: a consumer's top rows never show a name from `comm` alone.
#[test]
fn the_largest_are_named_and_one_that_comes_among_them_is_named_then() {
    let largest = |procs: &[ProcessSample], k: usize| {
        let mut by: Vec<&ProcessSample> = procs.iter().collect();
        by.sort_by(|a, b| {
            b.footprint_bytes
                .cmp(&a.footprint_bytes)
                .then(a.pid.cmp(&b.pid))
        });
        by.into_iter().take(k).map(|p| p.pid).collect::<Vec<_>>()
    };
    let mut probe = NativeProbe::new().unwrap();
    probe.name_largest(3);
    let (_, first) = probe.sample().unwrap();
    assert!(
        first.len() > 3,
        "too few processes to tell: {}",
        first.len()
    );
    for pid in largest(&first, 3) {
        assert!(
            !probe.names.is_waiting(pid),
            "pid {pid}, among the 3 largest, waits"
        );
    }
    assert!(
        probe.names.waiting() > 0,
        "every one of {} processes was named with 3 shown",
        first.len()
    );
    // Showing more makes the next tick name the new top, moved or not.
    probe.name_largest(usize::MAX);
    let (_, second) = probe.sample().unwrap();
    let unnamed: Vec<_> = second
        .iter()
        .filter(|p| probe.names.is_waiting(p.pid))
        .map(|p| (p.pid, p.name.clone()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "unnamed with every one shown: {unnamed:?}"
    );
}

/// A process that maps a tmpfs file already in memory and touches it grows
/// by the file (`RssShmem`) while used memory stays flat: only `Mapped`
/// moves. Read at the next tick after a full one, not up to
/// [`FULL_EVERY`] ticks later (2.3–2.4 s late at 500 ms before, and a
/// spike shorter than that never recorded).
#[test]
fn an_idle_process_mapping_shared_memory_already_in_ram_is_read_the_next_tick() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    const MIB: usize = 256;
    let path =
        std::path::Path::new("/dev/shm").join(format!("swapsight-test-shm-{}", std::process::id()));
    // The file's pages are made (Shmem, used memory) before the probe
    // starts, so the mapping moves neither.
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![1u8; 1 << 20];
        for _ in 0..MIB {
            f.write_all(&chunk).unwrap();
        }
    }
    let script = "import mmap, sys\n\
         f = open(sys.argv[1], 'rb')\n\
         sys.stdin.readline()\n\
         m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n\
         s = sum(m[i] for i in range(0, len(m), 4096))\n\
         print('grown', s, flush=True)\n\
         sys.stdin.readline()";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut probe = NativeProbe::new().unwrap();
    // Until the child is idle and the last tick was full: the next one is
    // not due by count or clock.
    let mut before = None;
    for _ in 0..200 {
        let (_, procs) = probe.sample().unwrap();
        let idle = probe.known.get(&pid).is_some_and(|k| k.skippable());
        if idle && probe.full.last().map(|a| a.tick) == Some(probe.tick) {
            before = procs
                .iter()
                .find(|p| p.pid == pid)
                .map(|p| p.footprint_bytes);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut grown_line = String::new();
    child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut grown_line)
        .unwrap();
    let (sys, procs) = probe.sample().unwrap();
    let after = procs
        .iter()
        .find(|p| p.pid == pid)
        .map(|p| p.footprint_bytes);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&path);
    let before = before.expect("the child never sat idle at a full tick");
    assert!(grown_line.starts_with("grown"), "{grown_line}");
    let after = after.unwrap();
    assert!(
        after >= before + ((MIB as u64 - 8) << 20),
        "footprint {before} -> {after} at the tick after the mapping (full: {:?}, tick {}, used {})",
        probe.full.last(),
        probe.tick,
        sys.used_bytes()
    );
}
