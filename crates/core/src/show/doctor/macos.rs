//! Parsers of the macOS tools' output, as the tools print it. Pure
//! functions of the text (or JSON), so they compile and are tested on Linux
//! (`macos_tests.rs`, on output laid out as each tool prints it). Anything
//! unexpected is `None`, never a panic: sizes are multiplied with checks,
//! decimals only through finite, bounded floats.
//!
//! Where each format comes from:
//! - `footprint`: footprint(1) (`-j path` "also save a JSON representation",
//!   `-f bytes`); the JSON holds `processes[].pid` and
//!   `processes[].auxiliary.phys_footprint`, the text an `Auxiliary data:`
//!   block with `phys_footprint: <n> <unit>` and a header
//!   `name [pid]: 64-bit    Footprint: <n> <unit> (16384 bytes per page)`.
//! - `top -l 1 -stats pid,mem`: top(1); after the summary block a header
//!   line `PID  MEM` and one row per process, the size with a unit letter
//!   (`B`, `K`, `M`, `G`, `T`) and, in some versions, a `+`/`-` trend mark.
//! - `vm_stat`: system_cmds `vm_stat/vm_stat.c`; a header `Mach Virtual
//!   Memory Statistics: (page size of 16384 bytes)`, then `Pages free:
//!   12627.` lines. Its "Pages free" is `free_count − speculative_count`,
//!   "Anonymous pages" `internal_page_count`, "File-backed pages"
//!   `external_page_count`; its "Swapouts" is the `swapouts` page count of
//!   the same `vm_statistics64`.
//! - `sysctl vm.swapusage`: system_cmds `sysctl/sysctl.c` (`S_xswusage`):
//!   `vm.swapusage: total = 2048.00M  used = 1043.25M  free = 1004.75M
//!   (encrypted)`, two decimals of one unit letter.
//! - `memory_pressure`: memory_pressure(1); its last line `System-wide
//!   memory free percentage: 62%` is `kern.memorystatus_level`.
//! - `sw_vers`: sw_vers(1), `ProductName:`, `ProductVersion:`,
//!   `BuildVersion:` lines.
//! - `ioreg -r -d 1 -w 0 -c IOAccelerator`: Apple's `IOKitTools` sources of
//!   `ioreg` (`ioreg.c`): each matched service a `+-o Name  <class …>` line,
//!   then its properties one a line, `"key" = value`, a dictionary printed
//!   `{"key"=value,"key"=value}` (`cfdictionaryshow`), a number with `%qu`
//!   (`cfnumbershow`: a negative one shows as a huge unsigned). A line
//!   clipped to `-w` ends in `$`, hence `-w 0` (unlimited); `-d 1` leaves
//!   out the services' children.
//! - `sysctl -n iogpu.wired_limit_mb`: the number alone (0: the default).

/// A size as a tool printed it, and the rounding of the print (the value
/// may be off by up to half of `resolution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Printed {
    pub(crate) bytes: u64,
    pub(crate) resolution: u64,
}

/// The largest size accepted from a tool's text: 8 PiB, more than any
/// machine's memory (and well inside a float's exact integers), the bound a
/// trace holds figures to.
const MAX_BYTES: f64 = crate::util::units::MAX_BYTES as f64;

/// `258 MB`, `1.5GB`, `270532608 B`, `1104K`: binary units, as Apple's
/// tools print them. `None` for a negative, non-finite or huge figure.
pub fn parse_size(text: &str) -> Option<Printed> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return None;
    }
    let unit = unit.trim();
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" | "BYTES" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let scale = (1u64 << shift) as f64;
    let bytes = value * scale;
    if !bytes.is_finite() || !(0.0..=MAX_BYTES).contains(&bytes) {
        return None;
    }
    let resolution = (scale / 10f64.powi(decimals.min(9))).max(1.0);
    Some(Printed {
        bytes: bytes.round() as u64,
        resolution: resolution as u64,
    })
}

/// `phys_footprint` of `pid` in `footprint -j`'s JSON.
pub fn parse_footprint_json(json: &str, pid: u32) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.get("processes")?
        .as_array()?
        .iter()
        .find(|p| p.get("pid").and_then(|x| x.as_u64()) == Some(u64::from(pid)))?
        .get("auxiliary")?
        .get("phys_footprint")?
        .as_u64()
        .filter(|&b| (b as f64) <= MAX_BYTES)
}

/// `phys_footprint` from `footprint`'s text: the `Auxiliary data:` line,
/// else the `Footprint:` of the header of `pid`'s block. Either way only
/// within `pid`'s block, so another process's figure is never taken.
pub fn parse_footprint_text(text: &str, pid: u32) -> Option<Printed> {
    let tag = format!("[{pid}]");
    let mut in_block = false;
    let mut header = None;
    for line in text.lines() {
        let t = line.trim();
        if t.contains("]: ") && t.contains("Footprint:") {
            // A process's header: `name [pid]: 64-bit    Footprint: 258 MB (…)`.
            in_block = t.contains(&tag);
            if in_block {
                header = t
                    .split_once("Footprint:")
                    .and_then(|(_, rest)| parse_size(rest.split('(').next()?));
            }
            continue;
        }
        if in_block {
            if let Some(rest) = t.strip_prefix("phys_footprint:") {
                return parse_size(rest);
            }
        }
    }
    header
}

/// The MEM column of `pid` in `top -l 1 -stats pid,mem`.
pub fn parse_top_mem(text: &str, pid: u32) -> Option<Printed> {
    let mut lines = text.lines();
    // Past the summary block, to the column header.
    let header = lines.by_ref().find(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.first() == Some(&"PID") && w.contains(&"MEM")
    })?;
    let cols: Vec<&str> = header.split_whitespace().collect();
    let (pid_col, mem_col) = (0, cols.iter().position(|c| *c == "MEM")?);
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.get(pid_col).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            let mem = w.get(mem_col)?.trim_end_matches(['+', '-', '*']);
            return parse_size(mem);
        }
    }
    None
}

/// `vm_stat`'s page counts (and its page size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmStat {
    pub(crate) page_size: u64,
    /// "Pages free": `free_count − speculative_count`.
    pub free: u64,
    pub(crate) speculative: u64,
    pub(crate) wired: u64,
    pub(crate) purgeable: u64,
    /// "File-backed pages": `external_page_count`.
    pub file_backed: u64,
    /// "Anonymous pages": `internal_page_count`.
    pub anonymous: u64,
    /// "Pages occupied by compressor": `compressor_page_count`.
    pub compressor: u64,
    /// "Pages tag-storage": `total_tag_storage_pages`, printed on a Mac
    /// with memory tagging (macOS 26, `vm_stat.c`'s `has_mte`).
    pub tag_storage: Option<u64>,
    /// "Swapouts": pages written to swap since boot (`swapouts`).
    pub swapouts: Option<u64>,
}

impl VmStat {
    fn bytes(&self, pages: u64) -> Option<u64> {
        pages.checked_mul(self.page_size)
    }

    /// Activity Monitor's "App Memory": anonymous less purgeable pages.
    pub fn app_bytes(&self) -> Option<u64> {
        self.bytes(self.anonymous.saturating_sub(self.purgeable))
    }

    /// Activity Monitor's "Memory Used": app memory + wired + compressed,
    /// the probe's formula (tag storage, where `vm_stat` prints it, is not
    /// added: see `VmMemory::used_bytes`).
    pub fn used_bytes(&self) -> Option<u64> {
        self.app_bytes()?
            .checked_add(self.wired_bytes()?)?
            .checked_add(self.compressed_bytes()?)
    }

    /// Tag storage in bytes; `None` where `vm_stat` printed no such line.
    pub fn tag_storage_bytes(&self) -> Option<Option<u64>> {
        self.tag_storage.map(|p| self.bytes(p))
    }

    /// Free: free + speculative pages (the kernel's `free_count`).
    pub fn free_bytes(&self) -> Option<u64> {
        self.bytes(self.free.checked_add(self.speculative)?)
    }

    /// Activity Monitor's "Cached Files": file-backed + purgeable pages.
    pub fn cached_bytes(&self) -> Option<u64> {
        self.bytes(self.file_backed.checked_add(self.purgeable)?)
    }

    pub(crate) fn compressed_bytes(&self) -> Option<u64> {
        self.bytes(self.compressor)
    }

    pub(crate) fn wired_bytes(&self) -> Option<u64> {
        self.bytes(self.wired)
    }

    /// Bytes written to swap since boot: "Swapouts" × the page size;
    /// `None` without that line or past `u64`.
    pub fn swap_out_bytes(&self) -> Option<u64> {
        self.bytes(self.swapouts?)
    }
}

/// Parses `vm_stat`. `None` without the page size or any of the lines the
/// formulas need.
pub fn parse_vm_stat(text: &str) -> Option<VmStat> {
    let mut v = VmStat::default();
    let mut lines = text.lines();
    let head = lines.next()?;
    let size = head.split_once("page size of ")?.1;
    v.page_size = size.split_whitespace().next()?.parse().ok()?;
    if v.page_size == 0 {
        return None;
    }
    let mut seen = 0u8;
    for line in lines {
        if let Some(("Pages tag-storage", value)) = line.rsplit_once(':') {
            v.tag_storage = value.trim().trim_end_matches('.').parse().ok();
            continue;
        }
        let Some((key, value)) = line.rsplit_once(':') else {
            continue;
        };
        if key.trim() == "Swapouts" {
            v.swapouts = value.trim().trim_end_matches('.').parse().ok();
            continue;
        }
        let Some(n) = value.trim().trim_end_matches('.').parse::<u64>().ok() else {
            continue;
        };
        let (slot, bit) = match key.trim().trim_matches('"') {
            "Pages free" => (&mut v.free, 1),
            "Pages speculative" => (&mut v.speculative, 2),
            "Pages wired down" => (&mut v.wired, 4),
            "Pages purgeable" => (&mut v.purgeable, 8),
            "File-backed pages" => (&mut v.file_backed, 16),
            "Anonymous pages" => (&mut v.anonymous, 32),
            "Pages occupied by compressor" => (&mut v.compressor, 64),
            _ => continue,
        };
        *slot = n;
        seen |= bit;
    }
    (seen == 127).then_some(v)
}

/// `sysctl vm.swapusage`'s figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapUsage {
    pub(crate) total: Printed,
    pub(crate) used: Printed,
    pub(crate) free: Printed,
}

/// Parses `vm.swapusage: total = 2048.00M  used = 1043.25M  free =
/// 1004.75M  (encrypted)` (also the bare value of `sysctl -n`).
pub fn parse_swapusage(text: &str) -> Option<SwapUsage> {
    let field = |name: &str| -> Option<Printed> {
        let after = text.split_once(&format!("{name} = "))?.1;
        parse_size(after.split_whitespace().next()?)
    };
    Some(SwapUsage {
        total: field("total")?,
        used: field("used")?,
        free: field("free")?,
    })
}

/// `System-wide memory free percentage: 62%` of `memory_pressure`.
pub fn parse_memory_pressure(text: &str) -> Option<f64> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("System-wide memory free percentage:"))?;
    let pct: f64 = line.trim().strip_suffix('%')?.trim().parse().ok()?;
    (0.0..=100.0).contains(&pct).then_some(pct)
}

/// A whole number printed alone (`sysctl -n hw.memsize`).
pub fn parse_sysctl_u64(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let n = words.next()?.parse().ok()?;
    words.next().is_none().then_some(n)
}

/// `sw_vers`: `macOS 14.4.1 (23E224)`.
pub fn parse_sw_vers(text: &str) -> Option<String> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let name = field("ProductName:").unwrap_or_else(|| "macOS".into());
    let version = field("ProductVersion:")?;
    Some(match field("BuildVersion:") {
        Some(build) => format!("{name} {version} ({build})"),
        None => format!("{name} {version}"),
    })
}

/// Each accelerator's `PerformanceStatistics` in `ioreg -r -d 1 -w 0 -c
/// IOAccelerator`, as the whole numbers it holds by key (strings, nested
/// values and other keys' text are skipped): one list per
/// `"PerformanceStatistics" = {…}` line, for
/// [`gpu_memory`](crate::probe::macos::parse::gpu_memory) to sum as the
/// probe sums IOKit's. A line that does not close its dictionary (clipped
/// to the terminal's width, ending in `$`) gives nothing, never a number
/// cut short.
pub fn parse_ioreg_accelerators(text: &str) -> Vec<Vec<(String, u64)>> {
    text.lines()
        .filter_map(|line| {
            let (_, after) = line.split_once("\"PerformanceStatistics\" = ")?;
            ioreg_dictionary(after)
        })
        .collect()
}

/// `{"key"=value,…}` as ioreg prints a dictionary: its whole-number values
/// by key; `None` unless the dictionary closes.
fn ioreg_dictionary(text: &str) -> Option<Vec<(String, u64)>> {
    let mut rest = text.trim_start().strip_prefix('{')?;
    let mut out = Vec::new();
    if let Some(after) = rest.strip_prefix('}') {
        return after.trim().is_empty().then_some(out);
    }
    loop {
        let body = rest.strip_prefix('"')?;
        let end = body.find('"')?;
        let key = &body[..end];
        let value_and_on = body[end + 1..].strip_prefix('=')?;
        let split = ioreg_value_end(value_and_on)?;
        let (value, on) = value_and_on.split_at(split);
        if let Ok(n) = value.parse::<u64>() {
            out.push((key.to_string(), n));
        }
        match on.as_bytes().first() {
            Some(b',') => rest = &on[1..],
            Some(b'}') => return on[1..].trim().is_empty().then_some(out),
            _ => return None,
        }
    }
}

/// Where a value printed by ioreg ends: the first `,` or `}` outside
/// quotes and brackets; `None` when the text ends first.
fn ioreg_value_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '{' | '(' | '[' | '<' => depth += 1,
            '}' | ')' | ']' | '>' if depth > 0 => depth -= 1,
            ',' | '}' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[path = "macos_tests.rs"]
mod tests;
