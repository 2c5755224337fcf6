//! The bounds this machine puts on memory, from its figures as the probe
//! gives them, each held against the need; and the ones that do not apply
//! here, with why.

use super::{
    free_now, gb, is_macos, Bound, BoundId, Figures, Framework, IfOver, Skipped,
    MLX_LIMIT_RAM_SHARE, MLX_LIMIT_SHARE, MPS_DEFAULT_HIGH_RATIO, MPS_DEFAULT_LOW_RATIO,
    MPS_LOW_RATIO_ENV, MPS_MAX_RATIO, MPS_RATIO_ENV,
};
use crate::probe::GpuMemory;

/// The bounds that apply on `f`, each held against `needed`, and the ones
/// that do not, with why.
pub fn bounds(f: &Figures, needed: u64) -> (Vec<Bound>, Vec<Skipped>) {
    let mut l = List {
        needed,
        bounds: Vec::new(),
        skipped: Vec::new(),
    };
    host(&mut l, f);
    scope(&mut l, f);
    gpu(&mut l, f);
    (l.bounds, l.skipped)
}

struct List {
    needed: u64,
    bounds: Vec<Bound>,
    skipped: Vec<Skipped>,
}

impl List {
    fn bound(
        &mut self,
        id: BoundId,
        bytes: u64,
        source: impl Into<String>,
        if_over: IfOver,
        framework: Option<Framework>,
    ) {
        self.bounds.push(Bound {
            id,
            name: id.name(),
            bytes,
            source: source.into(),
            over: self.needed > bytes,
            if_over,
            framework,
        });
    }

    fn skip(&mut self, id: BoundId, why: impl Into<String>) {
        self.skipped.push(Skipped {
            id,
            name: id.name(),
            why: why.into(),
        });
    }
}

/// Physical memory and free memory now.
fn host(l: &mut List, f: &Figures) {
    let (memory, free) = if is_macos(&f.os) {
        (
            "hw.memsize",
            "memory less Memory Used (app + wired + compressed, host_statistics64): free pages and cached files",
        )
    } else {
        ("MemTotal of /proc/meminfo", "MemAvailable of /proc/meminfo")
    };
    let sys = &f.system;
    l.bound(
        BoundId::Memory,
        sys.phys_bytes,
        memory,
        IfOver::DoesNotFit,
        None,
    );
    l.bound(BoundId::FreeNow, free_now(sys), free, IfOver::Swaps, None);
}

/// The cgroup's limit and what is free in it (Linux).
fn scope(l: &mut List, f: &Figures) {
    match (&f.scope, &f.scope_unread) {
        (Some(s), _) => {
            let (limit_file, usage_file) = if s.version == 1 {
                ("memory.limit_in_bytes", "memory.usage_in_bytes")
            } else {
                ("memory.max", "memory.current")
            };
            let at = format!("cgroup v{} {}", s.version, s.path);
            l.bound(
                BoundId::CgroupLimit,
                s.limit_bytes,
                format!("{limit_file} of {at}: a job run here has it as its memory"),
                IfOver::DoesNotFit,
                None,
            );
            l.bound(
                BoundId::CgroupFreeNow,
                s.free_bytes(),
                format!("{limit_file} less {usage_file} of {at}"),
                IfOver::Swaps,
                None,
            );
        }
        (None, Some(why)) => {
            let why = format!("the cgroup could not be read ({why}): judged against the host");
            l.skip(BoundId::CgroupLimit, why.clone());
            l.skip(BoundId::CgroupFreeNow, why);
        }
        (None, None) if is_macos(&f.os) => l.skip(BoundId::CgroupLimit, "macOS has no memory cgroups"),
        (None, None) => l.skip(
            BoundId::CgroupLimit,
            "no memory cgroup with a limit below the host's memory holds this shell (or SWAPSIGHT_SCOPE=host)",
        ),
    }
}

/// The GPU's bounds on a Mac, and the frameworks' sized from them.
fn gpu(l: &mut List, f: &Figures) {
    const GPU: [BoundId; 4] = [
        BoundId::GpuWiredLimit,
        BoundId::RecommendedWorkingSet,
        BoundId::MpsHighWatermark,
        BoundId::MlxMemoryLimit,
    ];
    let Some(gpu) = f.system.gpu.filter(|g| !g.is_empty()) else {
        let why = if is_macos(&f.os) {
            "the probe read no GPU figures (an Intel Mac, or a macOS without them)"
        } else {
            "not on Linux: these are the GPU's share of a Mac's unified memory"
        };
        GPU.into_iter().for_each(|id| l.skip(id, why));
        return;
    };
    match gpu.wired_limit_bytes() {
        Some(w) => l.bound(
            BoundId::GpuWiredLimit,
            w,
            wired_source(&gpu),
            IfOver::Swaps,
            None,
        ),
        None => l.skip(
            BoundId::GpuWiredLimit,
            "neither iogpu.wired_limit_mb nor Metal's recommended working set was read",
        ),
    }
    let Some(rec) = gpu.recommended_working_set_bytes else {
        GPU[1..]
            .iter()
            .for_each(|id| l.skip(*id, "Metal's recommended working set was not read"));
        return;
    };
    l.bound(
        BoundId::RecommendedWorkingSet,
        rec,
        "Metal's recommendedMaxWorkingSetSize of the default device",
        IfOver::Swaps,
        None,
    );
    let env = (
        f.mps_high_watermark_ratio.as_deref(),
        f.mps_low_watermark_ratio.as_deref(),
    );
    match mps_ratio(env.0, env.1) {
        Ok(Some((ratio, set))) => {
            let how = if set {
                " ="
            } else {
                " (unset: PyTorch's default)"
            };
            let read = env
                .0
                .and_then(|raw| read_as(raw, ratio))
                .unwrap_or_default();
            l.bound(
                BoundId::MpsHighWatermark,
                (ratio * rec as f64) as u64,
                format!(
                    "{MPS_RATIO_ENV}{how} {ratio:.2}{read} × the recommended working set {}",
                    gb(rec)
                ),
                IfOver::Raises,
                Some(Framework::PytorchMps),
            );
        }
        Ok(None) => {
            let read = env.0.and_then(|raw| read_as(raw, 0.0)).unwrap_or_default();
            l.skip(
                BoundId::MpsHighWatermark,
                format!("{MPS_RATIO_ENV}=0{read}: PyTorch puts no limit on the MPS pool"),
            )
        }
        Err(why) => l.skip(BoundId::MpsHighWatermark, why),
    }
    let by_set = (MLX_LIMIT_SHARE * rec as f64) as u64;
    let by_ram = (MLX_LIMIT_RAM_SHARE * f.system.phys_bytes as f64) as u64;
    let which = if by_ram < by_set {
        format!("{MLX_LIMIT_RAM_SHARE} × memory, below {MLX_LIMIT_SHARE} × the recommended working set ({})", gb(by_set))
    } else {
        format!("{MLX_LIMIT_SHARE} × the recommended working set, below {MLX_LIMIT_RAM_SHARE} × memory ({})", gb(by_ram))
    };
    l.bound(
        BoundId::MlxMemoryLimit,
        by_set.min(by_ram),
        format!(
            "MLX's default, {which} (mlx/backend/metal/allocator.cpp); a limit the program sets is not seen here"
        ),
        IfOver::Swaps,
        Some(Framework::Mlx),
    );
}

fn wired_source(gpu: &GpuMemory) -> String {
    match gpu.wired_limit_mb {
        Some(mb) if mb > 0 => format!("iogpu.wired_limit_mb = {mb}"),
        Some(_) => "iogpu.wired_limit_mb = 0, the default: Metal's recommended working set".into(),
        None => "no iogpu.wired_limit_mb (before macOS 14): Metal's recommended working set".into(),
    }
}

/// The MPS high watermark ratio in force, from the high and the low
/// ratios' variables as PyTorch reads them (`strtod`, `init_allocator` in
/// `aten/src/ATen/mps/MPSAllocator.mm`): `Ok(Some((ratio, set)))`, `set`
/// when it came from the environment; `Ok(None)` for 0 (no limit, as is
/// any text with no number in front: strtod reads it as 0); `Err` for a
/// setting PyTorch refuses at its first MPS use — a high ratio outside 0 to
/// [`MPS_MAX_RATIO`], or a low ratio above the high one
/// (`setLowWatermarkRatio`: the low's default on unified memory,
/// [`MPS_DEFAULT_LOW_RATIO`], is above any high ratio under it).
pub fn mps_ratio(high: Option<&str>, low: Option<&str>) -> Result<Option<(f64, bool)>, String> {
    let (ratio, set) = match high {
        None => (MPS_DEFAULT_HIGH_RATIO, false),
        Some(raw) => (strtod(raw).0, true),
    };
    let shown = |raw: Option<&str>, v: f64| match raw {
        Some(raw) => format!(
            "'{}'{}",
            crate::util::text::clean(raw),
            read_as(raw, v).unwrap_or_default()
        ),
        None => "unset".into(),
    };
    if !(0.0..=MPS_MAX_RATIO).contains(&ratio) || ratio.is_nan() {
        return Err(format!(
            "{MPS_RATIO_ENV}={} is outside 0 to {MPS_MAX_RATIO}: PyTorch refuses it at the first MPS use (\"invalid high watermark ratio\")",
            shown(high, ratio)
        ));
    }
    let low_ratio = low.map_or(MPS_DEFAULT_LOW_RATIO, |raw| strtod(raw).0);
    // A high ratio of 0 (no limit) is compared as the upper bound.
    let ceiling = if ratio == 0.0 { MPS_MAX_RATIO } else { ratio };
    if !(0.0..=ceiling).contains(&low_ratio) || low_ratio.is_nan() {
        let low_said = match low {
            None => format!("unset, PyTorch's default on unified memory {MPS_DEFAULT_LOW_RATIO}"),
            Some(_) => shown(low, low_ratio),
        };
        return Err(format!(
            "{MPS_RATIO_ENV}={} with {MPS_LOW_RATIO_ENV} {low_said}: PyTorch refuses to start MPS (\"invalid low watermark ratio\": the low ratio may not pass the high); set {MPS_LOW_RATIO_ENV} at or below the high ratio",
            shown(high, ratio)
        ));
    }
    Ok((ratio > 0.0).then_some((ratio, set)))
}

/// " (read as 1.5: PyTorch's strtod stops at 'x')" where `raw` is not a
/// number whole, as C's `strtod` reads it; `None` where it is.
pub(crate) fn read_as(raw: &str, v: f64) -> Option<String> {
    let (_, used) = strtod(raw);
    let rest = raw[used..].trim();
    if used > 0 && rest.is_empty() {
        return None;
    }
    Some(if used == 0 {
        " (no number in front: PyTorch's strtod reads it as 0)".to_string()
    } else {
        let next: String = rest
            .chars()
            .take(1)
            .map(crate::util::text::safe_char)
            .collect();
        format!(" (read as {v}: PyTorch's strtod stops at '{next}')")
    })
}

/// C's `strtod` on `s`, as PyTorch reads its ratios: leading white space,
/// a sign, then the longest decimal number (digits, a point, an exponent)
/// or `inf`, `infinity`, `nan` in any case; the value and the bytes it
/// took, (0.0, 0) where no number starts. Hexadecimal floats (`0x1p0`),
/// which strtod also takes, are read up to the `x` (as 0).
pub fn strtod(s: &str) -> (f64, usize) {
    let b = s.as_bytes();
    let mut i = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let start = i;
    if matches!(b.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let word = s[i..].to_ascii_lowercase();
    for (name, v) in [
        ("infinity", f64::INFINITY),
        ("inf", f64::INFINITY),
        ("nan", f64::NAN),
    ] {
        if word.starts_with(name) {
            let neg = b.get(start) == Some(&b'-');
            return (if neg { -v } else { v }, i + name.len());
        }
    }
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let whole = digits(i);
    let mut end = i + whole;
    let mut frac = 0;
    if b.get(end) == Some(&b'.') {
        frac = digits(end + 1);
        if whole + frac > 0 {
            end += 1 + frac;
        }
    }
    if whole + frac == 0 {
        return (0.0, 0);
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp = digits(j);
        if exp > 0 {
            end = j + exp;
        }
    }
    (s[start..end].parse().unwrap_or(0.0), end)
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod tests;
