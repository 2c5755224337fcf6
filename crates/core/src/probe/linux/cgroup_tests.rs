//! The scope reader on fake procfs and cgroupfs trees whose files are laid
//! out as the kernel writes them (cgroup-v2.rst "Memory Interface Files";
//! cgroup-v1/memory.rst; man 5 proc for mountinfo; man 7 cgroups for
//! `/proc/PID/cgroup`).

use std::path::{Path, PathBuf};

use super::*;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
const HOST: u64 = 24 * GIB;

/// A fake procfs and cgroupfs in a fresh directory, removed on drop.
struct Tree(swapsight_testkit::TempDir);

impl Tree {
    fn new(tag: &str) -> Tree {
        Tree(swapsight_testkit::TempDir::new(&format!("cgroup-{tag}")))
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

// A v2 `memory.stat`, abridged from a 6.x kernel, in the kernel's order
// ("new entries can show up in the middle").
const STAT_V2: &str = "anon 218103808\nfile 4096000\nkernel 1966080\nkernel_stack 49152\n\
pagetables 610304\nsec_pagetables 0\npercpu 0\nsock 0\nvmalloc 0\nshmem 0\n\
file_mapped 0\nfile_dirty 0\nfile_writeback 0\nswapcached 1052672\nanon_thp 0\n\
inactive_anon 215031808\nactive_anon 3072000\ninactive_file 2048000\nactive_file 2048000\n\
unevictable 0\nslab_reclaimable 303104\nslab_unreclaimable 311296\nslab 614400\n\
pgfault 312870\npgmajfault 2511\n";

fn v2_job(t: &Tree) {
    // /proc/42/cgroup on a v2-only machine (man 7 cgroups: "0::/PATH").
    t.write("proc/42/cgroup", "0::/system.slice/job.scope/inner\n");
    // The leaf has the controller but no limit of its own: "max".
    t.write("cg/system.slice/job.scope/inner/memory.max", "max\n");
    t.write("cg/system.slice/job.scope/inner/memory.high", "max\n");
    t.write(
        "cg/system.slice/job.scope/inner/memory.current",
        "1048576\n",
    );
    // The job's scope holds the limit.
    let d = "cg/system.slice/job.scope";
    t.write(&format!("{d}/memory.max"), "268435456\n");
    t.write(&format!("{d}/memory.high"), "max\n");
    t.write(&format!("{d}/memory.swap.max"), "max\n");
    t.write(&format!("{d}/memory.current"), "266338304\n");
    t.write(&format!("{d}/memory.swap.current"), "536870912\n");
    t.write(
        &format!("{d}/memory.events"),
        "low 0\nhigh 0\nmax 1841\noom 2\noom_kill 1\noom_group_kill 0\n",
    );
    t.write(&format!("{d}/memory.stat"), STAT_V2);
    t.write("cg/system.slice/memory.max", "max\n");
    t.write("cg/system.slice/memory.high", "max\n");
}

fn v2_fs(t: &Tree) -> CgroupFs {
    CgroupFs::rooted(
        t.path("proc"),
        Mounts {
            v2: Some(Mount {
                root: "/".into(),
                point: t.path("cg"),
            }),
            v1_memory: None,
        },
    )
}

#[test]
fn v2_the_innermost_cgroup_with_a_limit_is_the_scope() {
    let t = Tree::new("v2");
    v2_job(&t);
    let scope = v2_fs(&t).scope_of(42, HOST).unwrap().expect("a scope");
    assert_eq!(scope.path, "/system.slice/job.scope");
    assert_eq!(scope.version, 2);
    assert_eq!(scope.limit_bytes, 256 * MIB);
    assert_eq!(scope.high_bytes, None);
    assert_eq!(scope.swap_limit_bytes, None, "\"max\" is no swap limit");
    assert_eq!(scope.usage_bytes, 266_338_304);
    assert_eq!(scope.swap_bytes, Some(512 * MIB));
    assert_eq!(scope.anon_bytes, Some(218_103_808));
    assert_eq!(scope.events.max, Some(1841));
    assert_eq!(scope.events.oom, Some(2));
    assert_eq!(scope.events.oom_kill, Some(1));
    assert_eq!(scope.free_bytes(), 256 * MIB - 266_338_304);
    assert_eq!(scope.swap_out_bytes, None, "this kernel counts no pswpout");
}

#[test]
fn v2_swap_written_is_the_scopes_pswpout_in_pages_where_the_kernel_counts_it() {
    let t = Tree::new("v2-pswpout");
    v2_job(&t);
    // Kernels that count swap per cgroup add the vm events after the
    // fault counts.
    t.write(
        "cg/system.slice/job.scope/memory.stat",
        &format!("{STAT_V2}pgpgin 5000\npgpgout 9000\npswpin 12\npswpout 131072\n"),
    );
    let mut fs = v2_fs(&t);
    let page = fs.page_size;
    let scope = fs.scope_of(42, HOST).unwrap().expect("a scope");
    assert_eq!(scope.swap_out_bytes, Some(131_072 * page));
}

#[test]
fn v2_the_scopes_own_psi_is_read_from_memory_pressure() {
    let t = Tree::new("v2-psi");
    v2_job(&t);
    let scope = v2_fs(&t).scope_of(42, HOST).unwrap().unwrap();
    assert_eq!(scope.pressure, None, "no memory.pressure: no figures");
    // psi.rst, "Cgroup2 interface": the format of /proc/pressure/memory.
    t.write(
        "cg/system.slice/job.scope/memory.pressure",
        "some avg10=31.20 avg60=12.05 avg300=2.61 total=9182736\n\
         full avg10=18.44 avg60=6.10 avg300=1.20 total=5012345\n",
    );
    let p = v2_fs(&t)
        .scope_of(42, HOST)
        .unwrap()
        .unwrap()
        .pressure
        .expect("the job's PSI");
    let (some, full) = (p.some.unwrap(), p.full.unwrap());
    assert_eq!(
        (some.avg10, some.avg60, some.total_us),
        (31.2, 12.05, 9_182_736)
    );
    assert_eq!((full.avg10, full.total_us), (18.44, 5_012_345));
    assert_eq!(p.level, None, "the monitor derives the level");
}

#[test]
fn v2_a_swap_limit_and_a_high_throttle_are_read() {
    let t = Tree::new("v2-swap");
    v2_job(&t);
    t.write("cg/system.slice/job.scope/memory.swap.max", "1073741824\n");
    t.write("cg/system.slice/job.scope/memory.high", "201326592\n");
    let scope = v2_fs(&t).scope_of(42, HOST).unwrap().unwrap();
    assert_eq!(scope.swap_limit_bytes, Some(GIB));
    assert_eq!(scope.high_bytes, Some(192 * MIB));
    assert_eq!(
        scope.limit_bytes,
        256 * MIB,
        "max is the limit, high beside it"
    );
}

#[test]
fn v2_only_a_high_throttle_is_the_limit() {
    let t = Tree::new("v2-high");
    v2_job(&t);
    t.write("cg/system.slice/job.scope/memory.max", "max\n");
    t.write("cg/system.slice/job.scope/memory.high", "201326592\n");
    let scope = v2_fs(&t).scope_of(42, HOST).unwrap().unwrap();
    assert_eq!(scope.limit_bytes, 192 * MIB);
}

#[test]
fn no_limit_anywhere_is_the_host() {
    let t = Tree::new("v2-none");
    v2_job(&t);
    t.write("cg/system.slice/job.scope/memory.max", "max\n");
    assert_eq!(v2_fs(&t).scope_of(42, HOST).unwrap(), None);
    // A limit above the host's memory binds nothing either.
    t.write(
        "cg/system.slice/job.scope/memory.max",
        &format!("{}\n", 64 * GIB),
    );
    assert_eq!(v2_fs(&t).scope_of(42, HOST).unwrap(), None);
}

#[test]
fn a_process_gone_is_the_host() {
    let t = Tree::new("gone");
    v2_job(&t);
    assert_eq!(v2_fs(&t).scope_of(43, HOST).unwrap(), None);
}

#[test]
fn a_process_that_exited_is_read_where_it_last_was() {
    // Killed by its cgroup's OOM killer: /proc/42 is gone, the cgroup
    // stays and counts the kill.
    let t = Tree::new("exited");
    v2_job(&t);
    let mut fs = v2_fs(&t);
    assert!(fs.scope_of(42, HOST).unwrap().is_some());
    // A zombie: the kernel shows it in the root cgroups.
    t.write("proc/42/cgroup", "0::/\n");
    t.write(
        "proc/42/stat",
        "42 (python3 (x) y) Z 1 42 42 0 -1 4194316 0",
    );
    let zombie = fs.scope_of(42, HOST).unwrap().expect("a zombie");
    assert_eq!(zombie.path, "/system.slice/job.scope");
    std::fs::remove_dir_all(t.path("proc/42")).unwrap();
    t.write(
        "cg/system.slice/job.scope/memory.events",
        "low 0\nhigh 0\nmax 1900\noom 3\noom_kill 2\noom_group_kill 0\n",
    );
    let scope = fs.scope_of(42, HOST).unwrap().expect("where it last was");
    assert_eq!(scope.events.oom_kill, Some(2));
    // Another pid that is gone is not given that cgroup.
    assert_eq!(fs.scope_of(44, HOST).unwrap(), None);
}

#[test]
fn a_process_running_its_exit_is_read_where_it_last_was() {
    // Measured here: an OOM-killed filler shows `4:memory:/` (the root) in
    // /proc/PID/cgroup while its state is still R, with PF_EXITING set;
    // read as is, the run's last look found no cgroup and no kill.
    let t = Tree::new("exiting");
    v2_job(&t);
    let mut fs = v2_fs(&t);
    assert!(fs.scope_of(42, HOST).unwrap().is_some());
    t.write("proc/42/cgroup", "0::/\n");
    t.write(
        "proc/42/stat",
        "42 (python3) R 1 42 42 0 -1 4194628 58880 0 0 0 81 29 0 0 20 0 1 0",
    );
    let scope = fs.scope_of(42, HOST).unwrap().expect("where it last was");
    assert_eq!(scope.path, "/system.slice/job.scope");
    // A live process (no PF_EXITING) moved to the root is in the root.
    t.write(
        "proc/42/stat",
        "42 (python3) R 1 42 42 0 -1 4194304 58880 0 0 0 81 29 0 0 20 0 1 0",
    );
    assert_eq!(fs.scope_of(42, HOST).unwrap(), None);
}

#[test]
fn stat_lines_say_whether_a_process_is_exiting() {
    // Laid out as fs/proc/array.c writes them; the name may hold ") ".
    assert!(!stat_says_exiting(
        "4162 (cat) R 4159 4159 18350 0 -1 4194304 130 0 0 0"
    ));
    assert!(stat_says_exiting(
        "42 (python3) R 1 42 42 0 -1 4194628 58880 0 0 0"
    ));
    assert!(stat_says_exiting("42 (a) b) Z 1 42 42 0 -1 4194304 0"));
    assert!(stat_says_exiting("42 (a) X 1 42 42 0 -1 0 0"));
    assert!(!stat_says_exiting("42 (a) S 1 42 42 0 -1 4194304 0"));
    assert!(!stat_says_exiting("garbage"));
    assert!(!stat_says_exiting("42 (a) R 1 2"));
}

#[test]
fn a_container_mount_shows_its_own_subtree() {
    // Docker without a cgroup namespace: /proc/self/cgroup names the full
    // path, the mount's root is the container's cgroup.
    let t = Tree::new("v2-ns");
    t.write("proc/7/cgroup", "0::/docker/abc/app\n");
    t.write("cg/memory.max", "536870912\n");
    t.write("cg/memory.current", "1000\n");
    t.write("cg/app/memory.max", "max\n");
    let mut fs = CgroupFs::rooted(
        t.path("proc"),
        Mounts {
            v2: Some(Mount {
                root: "/docker/abc".into(),
                point: t.path("cg"),
            }),
            v1_memory: None,
        },
    );
    let scope = fs.scope_of(7, HOST).unwrap().unwrap();
    assert_eq!(scope.path, "/docker/abc");
    assert_eq!(scope.limit_bytes, 512 * MIB);
    // A cgroup outside the mount's root cannot be read: said, not guessed.
    t.write("proc/8/cgroup", "0::/other/job\n");
    assert!(fs.scope_of(8, HOST).is_err());
}

fn v1_job(t: &Tree) {
    // /proc/42/cgroup on a v1 machine (this project's test machine).
    t.write(
        "proc/42/cgroup",
        "9:name=systemd:/\n8:pids:/\n4:memory:/swapsight-test-42\n1:cpu:/\n0::/\n",
    );
    let d = "mem/swapsight-test-42";
    t.write(&format!("{d}/memory.limit_in_bytes"), "268435456\n");
    t.write(&format!("{d}/memory.usage_in_bytes"), "268029952\n");
    t.write(
        &format!("{d}/memory.memsw.limit_in_bytes"),
        "9223372036854771712\n",
    );
    t.write(&format!("{d}/memory.memsw.usage_in_bytes"), "1073741824\n");
    t.write(&format!("{d}/memory.failcnt"), "24577\n");
    t.write(
        &format!("{d}/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
    );
    t.write(
        &format!("{d}/memory.stat"),
        "cache 0\nrss 266338304\nrss_huge 0\nshmem 0\nmapped_file 0\nswap 805306368\n\
hierarchical_memory_limit 268435456\nhierarchical_memsw_limit 9223372036854771712\n\
total_cache 0\ntotal_rss 266338304\ntotal_shmem 0\ntotal_swap 805306368\n",
    );
    // The root: no limit ("-1" reads back as PAGE_COUNTER_MAX pages).
    t.write("mem/memory.limit_in_bytes", "9223372036854771712\n");
}

fn v1_fs(t: &Tree) -> CgroupFs {
    CgroupFs::rooted(
        t.path("proc"),
        Mounts {
            v2: Some(Mount {
                root: "/".into(),
                point: t.path("unified"),
            }),
            v1_memory: Some(Mount {
                root: "/".into(),
                point: t.path("mem"),
            }),
        },
    )
}

#[test]
fn v1_the_memory_hierarchy_gives_the_scope() {
    let t = Tree::new("v1");
    v1_job(&t);
    let scope = v1_fs(&t).scope_of(42, HOST).unwrap().expect("a scope");
    assert_eq!(scope.path, "/swapsight-test-42");
    assert_eq!(scope.version, 1);
    assert_eq!(scope.limit_bytes, 256 * MIB);
    assert_eq!(scope.usage_bytes, 268_029_952);
    assert_eq!(
        scope.swap_bytes,
        Some(768 * MIB),
        "total_swap of memory.stat"
    );
    assert_eq!(scope.swap_limit_bytes, None, "memsw unlimited");
    assert_eq!(scope.anon_bytes, Some(266_338_304));
    assert_eq!(scope.events.max, Some(24577));
    assert_eq!(scope.events.oom_kill, Some(0));
}

#[test]
fn v1_a_memsw_limit_is_the_swap_limit_and_oom_kills_count() {
    let t = Tree::new("v1-memsw");
    v1_job(&t);
    let d = "mem/swapsight-test-42";
    t.write(&format!("{d}/memory.memsw.limit_in_bytes"), "268435456\n");
    // The charges failed at memory+swap, so memory.failcnt stayed 0.
    t.write(&format!("{d}/memory.failcnt"), "0\n");
    t.write(&format!("{d}/memory.memsw.failcnt"), "4413\n");
    t.write(
        &format!("{d}/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    );
    // Without swap accounting in memory.stat, memsw − usage is the swap.
    t.write(
        &format!("{d}/memory.stat"),
        "cache 0\nrss 1\ntotal_rss 1\ntotal_shmem 0\n",
    );
    let scope = v1_fs(&t).scope_of(42, HOST).unwrap().unwrap();
    assert_eq!(scope.swap_limit_bytes, Some(0));
    assert_eq!(scope.events.oom_kill, Some(1));
    assert_eq!(scope.events.max, Some(4413), "memsw.failcnt counts hits");
    assert_eq!(scope.swap_bytes, Some(GIB - 268_029_952));
}

#[test]
fn v1_the_root_is_the_host() {
    let t = Tree::new("v1-root");
    v1_job(&t);
    t.write("proc/43/cgroup", "4:memory:/\n0::/\n");
    assert_eq!(v1_fs(&t).scope_of(43, HOST).unwrap(), None);
}

/// A folder whose limit does not bind below the host (v1's "no limit", or a
/// limit above the host's memory) has nothing else read: its other files
/// could not be read here (a directory in their place), and no error came.
#[test]
fn v1_a_limit_at_or_above_the_host_reads_no_other_file() {
    let t = Tree::new("v1-above");
    v1_job(&t);
    let d = "mem/swapsight-test-42";
    for limit in ["9223372036854771712\n", &format!("{HOST}\n")] {
        t.write(&format!("{d}/memory.limit_in_bytes"), limit);
        let usage = t.path(&format!("{d}/memory.usage_in_bytes"));
        let _ = std::fs::remove_file(&usage);
        let _ = std::fs::create_dir(&usage);
        assert_eq!(v1_fs(&t).scope_of(42, HOST).unwrap(), None, "{limit}");
    }
    // Below the host it binds, and the unreadable usage is said.
    t.write(&format!("{d}/memory.limit_in_bytes"), "268435456\n");
    let err = v1_fs(&t).scope_of(42, HOST).unwrap_err();
    assert!(err.to_string().contains("memory.usage_in_bytes"), "{err}");
}

#[cfg(unix)]
#[test]
fn unreadable_files_are_an_error_not_the_host() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new("v1-denied");
    v1_job(&t);
    let f = t.path("mem/swapsight-test-42/memory.limit_in_bytes");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&f).is_ok() {
        // root reads a file whatever its mode: deny with a directory in its
        // place instead (EISDIR on read).
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap();
    }
    let err = v1_fs(&t).scope_of(42, HOST).unwrap_err();
    assert!(err.to_string().contains("memory.limit_in_bytes"), "{err}");
}

#[test]
fn a_memory_cgroup_no_mount_shows_is_said() {
    let t = Tree::new("hidden");
    v1_job(&t);
    let mut fs = CgroupFs::rooted(t.path("proc"), Mounts::default());
    let err = fs.scope_of(42, HOST).unwrap_err();
    assert!(err.to_string().contains("not mounted"), "{err}");
}

#[test]
fn proc_cgroup_lines() {
    let at = parse_proc_cgroup("12:memory,hugetlb:/a:b\n0::/c\ngarbage\n3:cpu:relative\n");
    assert_eq!(at.v1_memory.as_deref(), Some("/a:b"));
    assert_eq!(at.v2.as_deref(), Some("/c"));
    assert_eq!(parse_proc_cgroup(""), ProcCgroup::default());
}

#[test]
fn mountinfo_finds_both_hierarchies() {
    // A hybrid machine (this project's), as /proc/self/mountinfo lists it.
    let text = "\
25 30 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n\
26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n\
31 25 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:14 - cgroup cgroup rw,cpu\n\
33 25 0:31 /docker/x /sys/fs/cgroup/mem\\040ory rw,relatime shared:16 - cgroup cgroup rw,memory\n";
    let m = parse_mountinfo(text);
    assert_eq!(
        m.v2,
        Some(Mount {
            root: "/".into(),
            point: PathBuf::from("/sys/fs/cgroup/unified")
        })
    );
    let v1 = m.v1_memory.unwrap();
    assert_eq!(v1.root, "/docker/x");
    assert_eq!(v1.point, Path::new("/sys/fs/cgroup/mem ory"));
    assert_eq!(parse_mountinfo("junk\n1 2 3\n"), Mounts::default());
}

#[test]
fn values_from_outside_are_bounded() {
    assert_eq!(parse_limit("max\n"), Some(Limit::Max));
    assert_eq!(parse_limit("268435456\n"), Some(Limit::Bytes(256 * MIB)));
    // Only the literal "max" means no limit.
    assert_eq!(parse_limit("MAX"), None);
    assert_eq!(parse_limit("-1"), None);
    assert_eq!(
        parse_limit("18446744073709551615"),
        Some(Limit::Bytes(u64::MAX))
    );
    assert_eq!(parse_limit("18446744073709551616"), None, "past u64");
    assert_eq!(parse_limit("99999999999999999999999"), None);
    assert_eq!(parse_limit(""), None);
    assert_eq!(flat_key("oom 1\noom_kill 2\n", "oom_kill"), Some(2));
    assert_eq!(flat_key("oom_kill x\n", "oom_kill"), None);
    assert_eq!(Limit::Bytes(9_223_372_036_854_771_712).below(HOST), None);
}

#[test]
fn a_huge_file_is_read_only_up_to_the_cap() {
    let t = Tree::new("huge");
    let big = "a".repeat(FILE_READ_MAX + 10);
    t.write("f", &big);
    let text = read_capped(&t.path("f")).unwrap().unwrap();
    assert_eq!(text.len(), FILE_READ_MAX);
    assert_eq!(read_capped(&t.path("absent")).unwrap(), None);
}

#[test]
fn a_path_with_control_characters_is_cleaned() {
    let t = Tree::new("odd");
    t.write("proc/5/cgroup", "0::/job\u{1b}[31m\n");
    t.write("cg/job\u{1b}[31m/memory.max", "1048576\n");
    let scope = v2_fs(&t).scope_of(5, HOST).unwrap().unwrap();
    assert_eq!(scope.path, "/job?[31m");
}
