//! Parsers of the Linux tools' output, as the tools print it (procps-ng
//! `free` and `ps`, util-linux `swapon`, the kernel's `smaps_rollup`). Pure
//! functions of the text: tested on captured output in `linux_tests.rs`.
//! Anything unexpected is `None`, never a panic.

/// `free -b`'s figures, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Free {
    pub(crate) mem_total: u64,
    pub(crate) mem_used: u64,
    pub(crate) mem_free: u64,
    /// Absent in procps before 3.3.10, which had no `available` column.
    pub mem_available: Option<u64>,
    pub(crate) swap_total: u64,
    pub(crate) swap_used: u64,
}

/// Parses `free -b` (procps-ng 3.3.10 on):
///
/// ```text
///                total        used        free      shared  buff/cache   available
/// Mem:     25276510208  1171906560 13148450816     9068544 11313106944 24104603648
/// Swap:              0           0           0
/// ```
///
/// Columns are found by their header, so the older `buffers  cached` pair
/// and a missing `available` read as well.
pub fn parse_free(text: &str) -> Option<Free> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let mut free = Free::default();
    let (mut saw_mem, mut saw_swap) = (false, false);
    for line in lines {
        let mut words = line.split_whitespace();
        let label = words.next()?;
        if label != "Mem:" && label != "Swap:" {
            continue;
        }
        let values: Vec<u64> = words.map(|w| w.parse().ok()).collect::<Option<_>>()?;
        let at = |name: &str| col(name).and_then(|i| values.get(i).copied());
        match label {
            "Mem:" => {
                free.mem_total = at("total")?;
                free.mem_used = at("used")?;
                free.mem_free = at("free")?;
                free.mem_available = at("available");
                saw_mem = true;
            }
            "Swap:" => {
                free.swap_total = at("total")?;
                free.swap_used = at("used")?;
                saw_swap = true;
            }
            _ => {}
        }
    }
    (saw_mem && saw_swap).then_some(free)
}

/// The `/proc/PID/smaps_rollup` lines the doctor compares, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rollup {
    pub(crate) rss: u64,
    /// Resident anonymous pages, counted by walking the page tables (the
    /// probe's `RssAnon` is the kernel's running counter of the same).
    pub anonymous: u64,
    pub(crate) swap: u64,
}

/// Parses `/proc/PID/smaps_rollup` (Linux 4.14 on):
///
/// ```text
/// 55fda1aac000-7ffd18615000 ---p 00000000 00:00 0                          [rollup]
/// Rss:                1732 kB
/// Anonymous:           112 kB
/// Swap:                  0 kB
/// ```
///
/// `None` unless `Rss` and `Anonymous` are there.
pub fn parse_smaps_rollup(text: &str) -> Option<Rollup> {
    let mut rollup = Rollup::default();
    let (mut rss, mut anon) = (false, false);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(bytes) = kb_value(value) else {
            continue;
        };
        match key {
            "Rss" => {
                rollup.rss = bytes;
                rss = true;
            }
            "Anonymous" => {
                rollup.anonymous = bytes;
                anon = true;
            }
            "Swap" => rollup.swap = bytes,
            _ => {}
        }
    }
    (rss && anon).then_some(rollup)
}

/// `  1732 kB` → bytes.
fn kb_value(value: &str) -> Option<u64> {
    let digits = value.trim().strip_suffix("kB")?.trim();
    digits.parse::<u64>().ok()?.checked_mul(1024)
}

/// Swap areas summed, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swapon {
    pub(crate) areas: usize,
    pub(crate) size: u64,
    pub(crate) used: u64,
}

/// Parses `swapon --show=SIZE,USED --bytes --noheadings` (util-linux 2.26
/// on): one line per swap area, `2147483648 52428800`; no line at all when
/// there is no swap.
pub fn parse_swapon(text: &str) -> Option<Swapon> {
    let mut s = Swapon::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let size: u64 = words.next()?.parse().ok()?;
        let used: u64 = words.next()?.parse().ok()?;
        if words.next().is_some() {
            return None;
        }
        s.areas += 1;
        s.size = s.size.checked_add(size)?;
        s.used = s.used.checked_add(used)?;
    }
    Some(s)
}

/// Parses `ps -o rss= -p PID`: the resident set in KiB, as one number.
pub fn parse_ps_rss(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    if words.next().is_some() {
        return None;
    }
    kib.checked_mul(1024)
}

/// `PRETTY_NAME` of `/etc/os-release`, its quotes taken off.
pub fn parse_os_release(text: &str) -> Option<String> {
    let value = text
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))?
        .trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    (!value.is_empty()).then(|| value.to_string())
}

#[cfg(test)]
#[path = "linux_tests.rs"]
mod tests;
