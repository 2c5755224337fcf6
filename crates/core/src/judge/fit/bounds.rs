//! The bounds this machine puts on memory, from its figures as the probe
//! gives them, each held against the need; and the ones that do not apply
//! here, with why.

use super::{
    free_now, gb, is_macos, Bound, BoundId, Figures, Framework, IfOver, Skipped, MLX_LIMIT_SHARE,
    MPS_DEFAULT_HIGH_RATIO, MPS_MAX_RATIO, MPS_RATIO_ENV,
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
    match mps_ratio(f.mps_high_watermark_ratio.as_deref()) {
        Ok(Some((ratio, set))) => {
            let how = if set {
                " ="
            } else {
                " (unset: PyTorch's default)"
            };
            l.bound(
                BoundId::MpsHighWatermark,
                (ratio * rec as f64) as u64,
                format!(
                    "{MPS_RATIO_ENV}{how} {ratio:.2} × the recommended working set {}",
                    gb(rec)
                ),
                IfOver::Raises,
                Some(Framework::PytorchMps),
            );
        }
        Ok(None) => l.skip(
            BoundId::MpsHighWatermark,
            format!("{MPS_RATIO_ENV}=0: PyTorch puts no limit on the MPS pool"),
        ),
        Err(why) => l.skip(BoundId::MpsHighWatermark, why),
    }
    l.bound(
        BoundId::MlxMemoryLimit,
        (MLX_LIMIT_SHARE * rec as f64) as u64,
        format!(
            "MLX's default, {MLX_LIMIT_SHARE} × the recommended working set (mx.set_memory_limit); a limit the program sets is not seen here"
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

/// The MPS high watermark ratio in force: `Ok(Some((ratio, set)))`,
/// `set` when it came from the environment; `Ok(None)` for 0 (no limit);
/// `Err` for a value PyTorch refuses.
pub fn mps_ratio(env: Option<&str>) -> Result<Option<(f64, bool)>, String> {
    let Some(raw) = env else {
        return Ok(Some((MPS_DEFAULT_HIGH_RATIO, false)));
    };
    let shown = crate::util::text::clean(raw);
    let ratio: f64 = raw
        .trim()
        .parse()
        .ok()
        .filter(|r: &f64| r.is_finite())
        .ok_or_else(|| {
            format!("{MPS_RATIO_ENV}='{shown}' is not a number: the MPS bound is left out")
        })?;
    if !(0.0..=MPS_MAX_RATIO).contains(&ratio) {
        return Err(format!(
            "{MPS_RATIO_ENV}={shown} is outside 0 to {MPS_MAX_RATIO}: PyTorch refuses it at the first MPS use (\"invalid high watermark ratio\")"
        ));
    }
    Ok((ratio > 0.0).then_some((ratio, true)))
}
