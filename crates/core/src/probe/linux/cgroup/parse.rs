//! The cgroup formats, parsed: where a process sits (`/proc/PID/cgroup`),
//! where the hierarchies are mounted (mountinfo), and what the memory files
//! of one cgroup say (v1 and v2), with the scope they make.

use std::path::PathBuf;

use crate::probe::{Scope, ScopeEvents};

/// Longest cgroup path kept (a cgroup path in the kernel is at most
/// `PATH_MAX`, 4096 bytes).
pub const PATH_MAX: usize = 4096;

/// v1 writes "no limit" as `PAGE_COUNTER_MAX` pages, 9223372036854771712
/// bytes with 4 KiB pages (less with larger pages): anything from 2^62 up is
/// taken for it.
const V1_NO_LIMIT_FROM: u64 = 1 << 62;

/// `PF_EXITING` of `include/linux/sched.h`: the task is getting shut down.
const PF_EXITING: u64 = 0x4;

/// Whether a `/proc/PID/stat` line (fs/proc/array.c, `do_task_stat`: the
/// state is the first field after the parenthesised name, the flags word the
/// seventh) says the process is exiting: a zombie (`Z`), dead (`X`), or
/// still running its exit with `PF_EXITING` set — when, measured on this
/// project's machine, `/proc/PID/cgroup` already shows the root cgroups
/// while the state is still `R`.
pub fn stat_says_exiting(stat: &str) -> bool {
    let Some((_, rest)) = stat.rsplit_once(") ") else {
        return false;
    };
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next();
    let flags = fields.nth(5).and_then(|f| f.parse::<u64>().ok());
    matches!(state, Some("Z" | "X")) || flags.is_some_and(|f| f & PF_EXITING != 0)
}

/// Where a process sits in each hierarchy, from `/proc/PID/cgroup`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcCgroup {
    /// The v2 path (`0::/PATH`).
    pub v2: Option<String>,
    /// The path in the v1 hierarchy that holds the memory controller.
    pub v1_memory: Option<String>,
}

/// Parses `/proc/PID/cgroup`. Lines that do not have three fields are
/// skipped; the path may itself hold `:`.
pub fn parse_proc_cgroup(text: &str) -> ProcCgroup {
    let mut out = ProcCgroup::default();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if path.len() > PATH_MAX || !path.starts_with('/') {
            continue;
        }
        if id == "0" && controllers.is_empty() {
            out.v2 = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            out.v1_memory = Some(path.to_string());
        }
    }
    out
}

/// A cgroupfs mount: where it is mounted, and which cgroup of its hierarchy
/// is its root (`/` unless the mount shows a subtree, as in a container
/// without a cgroup namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub(crate) root: String,
    pub(crate) point: PathBuf,
}

/// The cgroupfs mounts swapsight can read a scope from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    pub(crate) v2: Option<Mount>,
    pub(crate) v1_memory: Option<Mount>,
}

/// Parses `/proc/self/mountinfo` for the cgroup2 mount and the v1 mount of
/// the memory controller (the first of each).
pub fn parse_mountinfo(text: &str) -> Mounts {
    let mut out = Mounts::default();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(point), Some(fstype)) = (left.get(3), left.get(4), right.first())
        else {
            continue;
        };
        let mount = || Mount {
            root: unescape_mount(root),
            point: PathBuf::from(unescape_mount(point)),
        };
        match *fstype {
            "cgroup2" if out.v2.is_none() => out.v2 = Some(mount()),
            "cgroup"
                if out.v1_memory.is_none()
                    && right
                        .get(2)
                        .is_some_and(|o| o.split(',').any(|o| o == "memory")) =>
            {
                out.v1_memory = Some(mount())
            }
            _ => {}
        }
    }
    out
}

/// `\040` (space), `\011` (tab), `\012` (newline) and `\134` (backslash) as
/// the kernel escapes them in mountinfo (`seq_path` / `mangle`).
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).filter(|d| {
            b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)) && d[0] <= b'3'
        });
        match oct {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A limit file's value: the literal `max` (v2's "no limit"), or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `max`: no limit.
    Max,
    /// A limit in bytes.
    Bytes(u64),
}

impl Limit {
    /// The limit in bytes when it binds below `ceiling` (the host's
    /// memory): a limit at or above it is no limit for the job (v1 writes
    /// "no limit" as 9223372036854771712, far above any host).
    pub fn below(self, ceiling: u64) -> Option<u64> {
        match self {
            Limit::Bytes(b) if b < ceiling => Some(b),
            _ => None,
        }
    }
}

/// A single-value file: `max`, or a decimal count of bytes.
pub fn parse_limit(text: &str) -> Option<Limit> {
    match text.trim() {
        "max" => Some(Limit::Max),
        s => parse_bytes(s).map(Limit::Bytes),
    }
}

/// A decimal number of bytes, with checked arithmetic (`None` past
/// `u64::MAX`, on a sign or on any other character). v1 files answer `-1`
/// nowhere: "no limit" reads back as a large number.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    s.bytes().try_fold(0u64, |n, c| {
        c.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(c - b'0')))
            .flatten()
    })
}

/// The value of `key` in a flat-keyed file (`KEY VALUE` per line:
/// `memory.events`, `memory.stat`, v1 `memory.oom_control`).
pub fn flat_key(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| parse_bytes(v)).flatten()
    })
}

/// The events of a v2 `memory.events`.
pub fn parse_events_v2(text: &str) -> ScopeEvents {
    ScopeEvents {
        high: flat_key(text, "high"),
        max: flat_key(text, "max"),
        oom: flat_key(text, "oom"),
        oom_kill: flat_key(text, "oom_kill"),
    }
}

/// The files of one cgroup that make a scope, as read (absent: `None`).
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub(crate) max: Option<String>,
    pub(crate) high: Option<String>,
    pub(crate) swap_max: Option<String>,
    pub(crate) current: Option<String>,
    pub(crate) swap_current: Option<String>,
    pub(crate) events: Option<String>,
    pub(crate) stat: Option<String>,
    // v2 only
    pub(crate) pressure: Option<String>,
    // v1 only
    pub(crate) memsw_limit: Option<String>,
    pub(crate) memsw_usage: Option<String>,
    pub(crate) failcnt: Option<String>,
    pub(crate) memsw_failcnt: Option<String>,
    pub(crate) oom_control: Option<String>,
}

/// A v2 cgroup's scope from its files, when it has a limit below
/// `ceiling`: `memory.max`, else `memory.high` (the throttle, which never
/// kills but is what the job lives under). `page_size` turns the page
/// counts of `memory.stat` into bytes.
pub fn scope_v2(path: &str, f: &Files, ceiling: u64, page_size: u64) -> Option<Scope> {
    let limit = |t: &Option<String>| t.as_deref().and_then(parse_limit);
    let max = limit(&f.max).and_then(|l| l.below(ceiling));
    let high = limit(&f.high).and_then(|l| l.below(ceiling));
    let limit_bytes = max.or(high)?;
    let num = |t: &Option<String>| t.as_deref().and_then(parse_bytes);
    Some(Scope {
        path: clean_path(path),
        version: 2,
        limit_bytes,
        high_bytes: high,
        swap_limit_bytes: match limit(&f.swap_max) {
            Some(Limit::Bytes(b)) => Some(b),
            _ => None,
        },
        usage_bytes: num(&f.current).unwrap_or(0),
        swap_bytes: num(&f.swap_current),
        anon_bytes: f
            .stat
            .as_deref()
            .and_then(|s| Some(flat_key(s, "anon")?.saturating_add(flat_key(s, "shmem")?))),
        swap_out_bytes: f
            .stat
            .as_deref()
            .and_then(|s| flat_key(s, "pswpout")?.checked_mul(page_size)),
        events: f.events.as_deref().map(parse_events_v2).unwrap_or_default(),
        pressure: f
            .pressure
            .as_deref()
            .and_then(|t| crate::probe::linux::parse::parse_psi(t.as_bytes())),
    })
}

/// A v1 cgroup's scope from its files, when `memory.limit_in_bytes` is
/// below `ceiling`. Swap is `total_swap` of `memory.stat` where swap
/// accounting shows it, else memory+swap less memory; the swap limit is
/// the memory+swap limit less the memory limit, when it binds.
pub fn scope_v1(path: &str, f: &Files, ceiling: u64) -> Option<Scope> {
    let num = |t: &Option<String>| t.as_deref().and_then(parse_bytes);
    let limit_bytes = num(&f.max).filter(|&b| b < ceiling)?;
    let usage_bytes = num(&f.current).unwrap_or(0);
    let stat = f.stat.as_deref();
    let swap_bytes = stat
        .and_then(|s| flat_key(s, "total_swap"))
        .or_else(|| num(&f.memsw_usage).map(|both| both.saturating_sub(usage_bytes)));
    let swap_limit_bytes = num(&f.memsw_limit)
        .filter(|&b| b < V1_NO_LIMIT_FROM)
        .map(|both| both.saturating_sub(limit_bytes));
    let oom = f.oom_control.as_deref();
    Some(Scope {
        path: clean_path(path),
        version: 1,
        limit_bytes,
        high_bytes: None,
        swap_limit_bytes,
        usage_bytes,
        swap_bytes,
        anon_bytes: stat.and_then(|s| {
            Some(flat_key(s, "total_rss")?.saturating_add(flat_key(s, "total_shmem")?))
        }),
        events: ScopeEvents {
            high: None,
            // A charge is tried against memory+swap first: where that
            // limit binds (memsw at the memory limit: no swap), it fails
            // there, and memory.failcnt does not move (mm/memcontrol.c,
            // try_charge_memcg). memory.memsw.failcnt counts those hits
            // (cgroup-v1/memory.rst); this project's 6.18 kernel left both
            // at 0 in that case (measured), so an OOM kill may come with
            // no hit counted.
            max: match (num(&f.failcnt), num(&f.memsw_failcnt)) {
                (Some(m), Some(sw)) => Some(m.saturating_add(sw)),
                (m, sw) => m.or(sw),
            },
            oom: None,
            oom_kill: oom.and_then(|o| flat_key(o, "oom_kill")),
        },
        // v1 has no per-cgroup PSI, nor a swap-out count.
        pressure: None,
        swap_out_bytes: None,
    })
}

/// A cgroup path as shown: text from outside, cleaned by the house rule
/// and capped.
fn clean_path(path: &str) -> String {
    let mut s: String = path.chars().take(PATH_MAX).collect();
    crate::util::text::clean_in_place(&mut s);
    s
}
