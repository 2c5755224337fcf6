//! Pure parsers for the `/proc` files the Linux probe reads. Kept apart from
//! the reading so tests can feed them captured text (tests/fixtures/).
//!
//! Everything here takes bytes, not `&str`: `/proc` is ASCII in practice but a
//! process name may hold any byte, and skipping UTF-8 validation keeps the tick
//! cheap.

use crate::probe::pressure::{Pressure, PsiLine};

/// The `/proc/meminfo` lines swapsight needs, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub(crate) mem_total_bytes: u64,
    pub(crate) mem_available_bytes: u64,
    pub(crate) swap_total_bytes: u64,
    pub(crate) swap_free_bytes: u64,
    /// `AnonPages`: anonymous memory mapped by processes.
    pub anon_pages_bytes: Option<u64>,
    /// `Shmem`: tmpfs and shared memory.
    pub shmem_bytes: Option<u64>,
    /// `Mapped`: files (tmpfs ones too) mapped into processes.
    pub mapped_bytes: Option<u64>,
    /// `SwapCached`: swapped pages read back and still in swap.
    pub swap_cached_bytes: Option<u64>,
}

impl MemInfo {
    /// Swap in use: `SwapTotal − SwapFree`.
    pub fn swap_used_bytes(&self) -> u64 {
        self.swap_total_bytes.saturating_sub(self.swap_free_bytes)
    }

    /// Memory processes hold that the kernel cannot drop like file cache:
    /// `AnonPages + Shmem` (Documentation/filesystems/proc.rst, "meminfo").
    /// A footprint that falls while this does not moved out of sight (to a
    /// tmpfs file it keeps, say); one that falls with it was freed.
    pub fn anon_bytes(&self) -> Option<u64> {
        Some(self.anon_pages_bytes?.saturating_add(self.shmem_bytes?))
    }

    /// The figures a process's growth moves besides used memory and swap,
    /// for the tiered tick ([`Movers`](crate::probe::tiers::Movers)).
    pub fn movers(&self) -> crate::probe::tiers::Movers {
        crate::probe::tiers::Movers([
            self.shmem_bytes,
            self.mapped_bytes,
            self.anon_pages_bytes,
            self.swap_cached_bytes,
        ])
    }

    /// Free memory in percent: `MemAvailable / MemTotal × 100`, clamped.
    pub fn free_pct(&self) -> f64 {
        if self.mem_total_bytes == 0 {
            return 0.0;
        }
        (self.mem_available_bytes as f64 / self.mem_total_bytes as f64 * 100.0).clamp(0.0, 100.0)
    }
}

/// Parses `/proc/meminfo`. Returns `None` when `MemTotal` is missing (not a
/// meminfo file at all); other missing lines read as 0.
pub fn parse_meminfo(text: &[u8]) -> Option<MemInfo> {
    let mut info = MemInfo::default();
    let mut saw_total = false;
    for line in text.split(|&b| b == b'\n') {
        if let Some(v) = kb_field(line, b"MemTotal:") {
            info.mem_total_bytes = v;
            saw_total = true;
        } else if let Some(v) = kb_field(line, b"MemAvailable:") {
            info.mem_available_bytes = v;
        } else if let Some(v) = kb_field(line, b"SwapTotal:") {
            info.swap_total_bytes = v;
        } else if let Some(v) = kb_field(line, b"SwapFree:") {
            info.swap_free_bytes = v;
        } else if let Some(v) = kb_field(line, b"AnonPages:") {
            info.anon_pages_bytes = Some(v);
        } else if let Some(v) = kb_field(line, b"Shmem:") {
            info.shmem_bytes = Some(v);
        } else if let Some(v) = kb_field(line, b"Mapped:") {
            info.mapped_bytes = Some(v);
        } else if let Some(v) = kb_field(line, b"SwapCached:") {
            info.swap_cached_bytes = Some(v);
        }
    }
    saw_total.then_some(info)
}

/// The `/proc/PID/status` figures swapsight needs, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusFigures {
    pub(crate) rss_anon_bytes: u64,
    pub(crate) rss_shmem_bytes: u64,
    /// `VmSwap`; absent for kernel threads.
    pub vm_swap_bytes: Option<u64>,
    /// The process's user, from the `Uid:` line (real, effective, saved,
    /// filesystem): [`owner`](crate::probe::owner) of the first three.
    pub uid: Option<u32>,
}

impl StatusFigures {
    /// The Linux footprint: resident memory the process owns. Swapped-out
    /// pages are not in it (they are in `VmSwap`); macOS `phys_footprint`,
    /// by contrast, keeps them (XNU `osfmk/kern/task.c`, "Task ledgers").
    pub fn footprint_bytes(&self) -> u64 {
        self.rss_anon_bytes + self.rss_shmem_bytes
    }
}

/// Parses `/proc/PID/status`. Stops reading once all four lines were seen
/// (`Uid` comes first, `VmSwap` after the `Rss*` lines).
pub fn parse_status(text: &[u8]) -> StatusFigures {
    let mut fig = StatusFigures::default();
    let mut seen = 0;
    for line in text.split(|&b| b == b'\n') {
        if let Some(ids) = line.strip_prefix(b"Uid:") {
            fig.uid = parse_uid(ids);
            seen += 1;
        } else if line.first() == Some(&b'R') {
            if let Some(v) = kb_field(line, b"RssAnon:") {
                fig.rss_anon_bytes = v;
                seen += 1;
            } else if let Some(v) = kb_field(line, b"RssShmem:") {
                fig.rss_shmem_bytes = v;
                seen += 1;
            }
        } else if let Some(v) = kb_field(line, b"VmSwap:") {
            fig.vm_swap_bytes = Some(v);
            seen += 1;
        }
        if seen == 4 {
            break;
        }
    }
    fig
}

/// The ids of a `Uid:` line (`\t1000\t1000\t1000\t1000`) → the owner;
/// `None` when they are not four numbers.
fn parse_uid(ids: &[u8]) -> Option<u32> {
    let mut ids = ids
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .map(|f| parse_u64(f).and_then(|v| u32::try_from(v).ok()));
    let (real, effective, saved, _fs) = (ids.next()??, ids.next()??, ids.next()??, ids.next()??);
    if ids.next().is_some() {
        return None;
    }
    crate::probe::owner(real, effective, saved)
}

/// Fields of `/proc/PID/stat` swapsight uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatFields<'a> {
    /// `comm`: the name between the parentheses (at most 15 bytes).
    pub comm: &'a [u8],
    pub(crate) state: u8,
    pub(crate) ppid: u32,
    /// Kernel flags (`PF_*`); `PF_KTHREAD` marks kernel threads.
    pub flags: u64,
    /// Major faults: pages read back from disk or swap.
    pub majflt: u64,
    /// Start time in clock ticks since boot.
    pub starttime: u64,
    /// Resident set size in pages (anon + file + shmem).
    pub rss_pages: u64,
    /// `startstack`: where the stack of the running program starts. Set
    /// by each `execve` (`setup_arg_pages`, `fs/exec.c`) and randomized
    /// with the stack, so a new program shows here even under the same
    /// `comm`. 0 where it is not shown: another user's process (unless
    /// root), a zombie, a kernel thread, the middle of an `execve`.
    pub start_stack: u64,
}

/// `PF_KTHREAD` from the kernel's `sched.h`.
pub const PF_KTHREAD: u64 = 0x0020_0000;

impl StatFields<'_> {
    /// Whether the process is a kernel thread (`PF_KTHREAD` in `flags`).
    pub fn is_kernel_thread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }
}

/// Parses `/proc/PID/stat`. The name may hold spaces and parentheses, so the
/// fields are counted from the *last* `)`.
pub fn parse_stat(text: &[u8]) -> Option<StatFields<'_>> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = rfind_byte(text, b')')?;
    if close < open {
        return None;
    }
    let comm = &text[open + 1..close];
    // After ") ": field 3 (state) is index 0 here.
    let mut fields = text.get(close + 2..)?.split(|&b| b == b' ');
    let state = *fields.next()?.first()?;
    let ppid = parse_u64(fields.next()?)? as u32; // 4
    let mut fields = fields.skip(3); // 5 pgrp, 6 session, 7 tty_nr
    let _tpgid = fields.next()?; // 8
    let flags = parse_u64(fields.next()?)?; // 9
    let _minflt = fields.next()?; // 10
    let _cminflt = fields.next()?; // 11
    let majflt = parse_u64(fields.next()?)?; // 12
                                             // 13 cmajflt .. 21 itrealvalue, then 22 starttime.
    let starttime = parse_u64(fields.nth(9)?)?;
    let _vsize = fields.next()?; // 23
    let rss_pages = parse_u64(fields.next()?)?; // 24
                                                // 25 rsslim, 26 startcode, 27 endcode, then 28 startstack.
    let start_stack = fields.nth(3).and_then(parse_u64).unwrap_or(0);
    Some(StatFields {
        comm,
        state,
        ppid,
        flags,
        majflt,
        starttime,
        rss_pages,
        start_stack,
    })
}

/// Resident pages from `/proc/PID/statm`, its second field
/// (`fs/proc/array.c` `proc_pid_statm`: `size resident shared text 0 data
/// 0\n`): file + shmem + anon pages (`task_statm`, `fs/proc/task_mmu.c`),
/// the sum `status` shows as `VmRSS`. Compare it with `statm` only: `stat`'s
/// `rss` can differ from it (here, kernel 6.18: 2,364 against 2,406 pages for
/// pid 1, its per-CPU counters read approximately), so the probe keeps the
/// `statm` figure apart. A process with no memory map (a kernel thread, a
/// zombie) shows all zeros. `None` when the field is missing or not a number.
pub fn parse_statm_resident(text: &[u8]) -> Option<u64> {
    let mut fields = text.split(|&b| b == b' ' || b == b'\n');
    fields.next()?;
    parse_u64(fields.next()?)
}

/// The last field of `/proc/loadavg`: the last pid the kernel handed out in
/// the reader's pid namespace (`fs/proc/loadavg.c`: `"%lu.%02lu %lu.%02lu
/// %lu.%02lu %u/%d %d\n"`, the last `%d` being the idr cursor less one).
pub fn parse_last_pid(text: &[u8]) -> Option<u64> {
    let line = text.split(|&b| b == b'\n').next()?;
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    // Five fields, the fourth `running/total`: anything else is not loadavg.
    let running = fields.nth(3)?;
    if !running.contains(&b'/') {
        return None;
    }
    let last = parse_u64(fields.next()?)?;
    fields.next().is_none().then_some(last)
}

/// Index of the last `byte` in `text`, eight bytes at a time: in a `stat`
/// line (~300 bytes) the last `)` is near the start, and a scan from the end
/// one byte at a time was the larger part of the parse.
fn rfind_byte(text: &[u8], byte: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(byte);
    let mut end = text.len();
    while let Some(word) = end.checked_sub(8).and_then(|start| text.get(start..end)) {
        let word = u64::from_le_bytes(word.try_into().ok()?) ^ pattern;
        // Some byte of `word` is zero, i.e. equals `byte` (exact, no false
        // positives): it is among these eight.
        if word.wrapping_sub(ONES) & !word & HIGHS != 0 {
            break;
        }
        end -= 8;
    }
    text[..end].iter().rposition(|&b| b == byte)
}

/// `"Key:   1234 kB"` → bytes, when the line starts with `key`.
fn kb_field(line: &[u8], key: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(key)?;
    let digits: &[u8] = rest.trim_ascii_start();
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let value = parse_u64(&digits[..end])?;
    let unit = digits[end..].trim_ascii();
    match unit {
        b"kB" => value.checked_mul(1024),
        b"" => Some(value),
        _ => None,
    }
}

/// Pages written to swap since boot: the `pswpout` line of `/proc/vmstat`
/// (`KEY VALUE` per line, `mm/vmstat.c` `vmstat_text`). `None` where the
/// line is missing or its number does not parse.
pub fn parse_vmstat_pswpout(text: &[u8]) -> Option<u64> {
    text.split(|&b| b == b'\n').find_map(|line| {
        let value = line.strip_prefix(b"pswpout ")?;
        parse_u64(value)
    })
}

/// Bytes of `pages` pages of `page_size` bytes, `None` on overflow (a
/// corrupt counter, never a wrapped figure).
pub fn pages_to_bytes(pages: u64, page_size: u64) -> Option<u64> {
    pages.checked_mul(page_size)
}

/// Decimal digits → u64 without UTF-8 checks; `None` on anything else.
pub fn parse_u64(digits: &[u8]) -> Option<u64> {
    let digits = digits.trim_ascii();
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// Parses `/proc/pressure/memory` (PSI, Documentation/accounting/psi.rst):
///
/// ```text
/// some avg10=0.94 avg60=2.10 avg300=0.74 total=71716221
/// full avg10=0.57 avg60=1.39 avg300=0.51 total=59637252
/// ```
///
/// `avg*` are % of wall time, `total` µs since boot. `None` without a
/// well-formed `some` line (not a PSI file); a `full` line that does not
/// parse is left out (kernels before 4.20's memory `full` do not exist, but
/// a container may show a cut file). Averages outside 0–100 are refused.
pub fn parse_psi(text: &[u8]) -> Option<Pressure> {
    let mut p = Pressure::default();
    for line in text.split(|&b| b == b'\n') {
        if let Some(rest) = line.strip_prefix(b"some ") {
            p.some = parse_psi_line(rest);
        } else if let Some(rest) = line.strip_prefix(b"full ") {
            p.full = parse_psi_line(rest);
        }
    }
    p.some.is_some().then_some(p)
}

/// `avg10=… avg60=… avg300=… total=…`, in any order; all of avg10, avg60
/// and total needed.
fn parse_psi_line(fields: &[u8]) -> Option<PsiLine> {
    let (mut avg10, mut avg60, mut total) = (None, None, None);
    for field in fields.split(|&b| b == b' ').filter(|f| !f.is_empty()) {
        let eq = field.iter().position(|&b| b == b'=')?;
        let (key, value) = (&field[..eq], &field[eq + 1..]);
        match key {
            b"avg10" => avg10 = Some(parse_pct(value)?),
            b"avg60" => avg60 = Some(parse_pct(value)?),
            b"total" => total = Some(parse_u64(value)?),
            _ => {}
        }
    }
    Some(PsiLine {
        avg10: avg10?,
        avg60: avg60?,
        total_us: total?,
    })
}

/// A PSI average: a decimal in 0–100 (the kernel prints `%lu.%02lu`).
fn parse_pct(value: &[u8]) -> Option<f64> {
    if value.is_empty()
        || value.len() > 16
        || !value.iter().all(|b| b.is_ascii_digit() || *b == b'.')
    {
        return None;
    }
    let v: f64 = std::str::from_utf8(value).ok()?.parse().ok()?;
    (0.0..=100.0).contains(&v).then_some(v)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
