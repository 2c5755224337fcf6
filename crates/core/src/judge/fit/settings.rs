//! The settings that would lift a bound the need is over — the GPU wired
//! limit, PyTorch's MPS watermark, MLX's memory limit — each with its risk.

use super::{
    gb, Bound, BoundId, Figures, IfOver, Setting, GIB, MIB, MPS_DEFAULT_LOW_RATIO, MPS_MAX_RATIO,
    MPS_RATIO_ENV,
};
use crate::judge::advise::{advise_alone, AdviceInput};

/// Memory a suggested GPU wired limit leaves to macOS: at least this much…
pub const WIRED_KEEP_MIN: u64 = 4 << 30;
/// …and at least this share of memory (an eighth: 112 GiB wired on a
/// 128 GiB Mac, the limit antirez/ds4 #893 ran with).
pub const WIRED_KEEP_DIVISOR: u64 = 8;

/// Room above the need for what the run holds besides it (activations, a
/// KV cache, the framework): a tenth of it, at least 1 GiB.
pub fn margin(needed: u64) -> u64 {
    (needed / 10).max(GIB)
}

/// What a suggested GPU wired limit leaves to macOS on a Mac of `phys`.
pub fn wired_keep(phys: u64) -> u64 {
    (phys / WIRED_KEEP_DIVISOR).max(WIRED_KEEP_MIN)
}

/// `iogpu.wired_limit_mb` for a need: the need and its [`margin`] rounded
/// up to a whole GiB, at most memory less [`wired_keep`]; `Err` with why
/// when even the need alone is above that.
pub fn wired_limit_mb_for(needed: u64, phys: u64) -> Result<u64, String> {
    let most = phys.saturating_sub(wired_keep(phys));
    if needed > most {
        return Err(format!(
            "no safe GPU wired limit: it needs {}, more than memory less the {} macOS keeps ({})",
            gb(needed),
            gb(wired_keep(phys)),
            gb(most)
        ));
    }
    let want = needed.saturating_add(margin(needed));
    let mb = want.div_ceil(GIB).saturating_mul(1024);
    Ok(mb.min(most / MIB))
}

/// The sysctl that sets the GPU wired limit to `mb` MiB on this macOS, and
/// the one that puts back the default: `iogpu.wired_limit_mb` from macOS
/// 14; macOS 13 had `debug.iogpu.wired_limit`, in bytes; before, none.
/// `Err` with why where no form is known.
pub fn wired_sysctl(macos_version: Option<&str>, mb: u64) -> Result<(String, String), String> {
    let bytes = mb.saturating_mul(MIB);
    let Some(v) = macos_version else {
        return Err(format!(
            "the macOS version was not read, so the wired-limit setting is not printed: on macOS 14 and later sudo sysctl iogpu.wired_limit_mb={mb}, on macOS 13 sudo sysctl debug.iogpu.wired_limit={bytes}"
        ));
    };
    let major: Option<u32> = v.trim().split('.').next().and_then(|m| m.parse().ok());
    match major {
        Some(m) if m >= 14 => Ok((
            format!("sudo sysctl iogpu.wired_limit_mb={mb}"),
            "sudo sysctl iogpu.wired_limit_mb=0".into(),
        )),
        Some(13) => Ok((
            format!("sudo sysctl debug.iogpu.wired_limit={bytes}"),
            "sudo sysctl debug.iogpu.wired_limit=0".into(),
        )),
        _ => Err(format!(
            "macOS {} has no GPU wired-limit setting swapsight knows (iogpu.wired_limit_mb is macOS 14 and later; debug.iogpu.wired_limit, in bytes, macOS 13)",
            crate::util::text::clean(v.trim())
        )),
    }
}

/// The settings that lift the bounds the need is over, where one can, with
/// their risk; and notes where none can.
pub fn settings(needed: u64, f: &Figures, bounds: &[Bound]) -> (Vec<Setting>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let over = |id: BoundId| bounds.iter().find(|b| b.id == id && b.over);
    if let Some(b) = bounds
        .iter()
        .find(|b| b.over && b.if_over == IfOver::DoesNotFit && b.framework.is_none())
    {
        notes.push(format!(
            "no setting makes it fit: it needs {}, more than the {} ({})",
            gb(needed),
            b.name,
            gb(b.bytes)
        ));
        return (out, notes);
    }
    let phys = f.system.phys_bytes;
    let gpu_over: Vec<BoundId> = [BoundId::GpuWiredLimit, BoundId::RecommendedWorkingSet]
        .into_iter()
        .filter(|id| over(*id).is_some())
        .collect();
    if !gpu_over.is_empty() {
        let mb = wired_limit_mb_for(needed, phys);
        match mb.and_then(|mb| wired_sysctl(f.macos_version.as_deref(), mb).map(|s| (mb, s))) {
            Ok((mb, (line, reset))) => {
                let bytes = mb.saturating_mul(MIB);
                out.push(Setting {
                    lifts: gpu_over,
                    line,
                    effect: format!(
                        "lets the GPU wire {} ({} and a margin of {}); Metal's recommended working set follows it (antirez/ds4 #893: 112 GiB with iogpu.wired_limit_mb=114688)",
                        gb(bytes),
                        gb(needed),
                        gb(bytes.saturating_sub(needed))
                    ),
                    risk: format!(
                        "leaves {} to macOS and every other app: wiring too much freezes a Mac (16 GB Macs froze with a model wired, exo #1672); it lasts until a reboot, and {reset} puts back the default",
                        gb(phys.saturating_sub(bytes))
                    ),
                });
            }
            Err(why) => notes.push(why),
        }
    }
    let rec = f.system.gpu.and_then(|g| g.recommended_working_set_bytes);
    if let (Some(_), Some(rec)) = (over(BoundId::MpsHighWatermark), rec) {
        match mps_setting(needed, rec, f) {
            Ok(s) => out.push(s),
            Err(why) => notes.push(why),
        }
    }
    if let (Some(_), Some(rec)) = (over(BoundId::MlxMemoryLimit), rec) {
        let want = needed.saturating_add(margin(needed)).min(phys);
        out.push(Setting {
            lifts: vec![BoundId::MlxMemoryLimit],
            line: format!("mx.set_memory_limit({want})"),
            effect: format!("lets MLX hold {} before it waits for memory to free", gb(want)),
            risk: format!(
                "past the recommended working set ({}) Metal pages the GPU's memory, and past free memory the Mac swaps",
                gb(rec)
            ),
        });
    }
    (out, notes)
}

/// `PYTORCH_MPS_HIGH_WATERMARK_RATIO` that lets the MPS pool hold the need
/// and its margin, with the risk judged by `swapsight advise`'s ratio.
fn mps_setting(needed: u64, rec: u64, f: &Figures) -> Result<Setting, String> {
    let rec_f = rec.max(1) as f64;
    let at_least = needed as f64 / rec_f;
    if at_least > MPS_MAX_RATIO {
        return Err(format!(
            "no MPS watermark ratio holds {}: PyTorch takes at most {MPS_MAX_RATIO} × the recommended working set ({})",
            gb(needed),
            gb((MPS_MAX_RATIO * rec_f) as u64)
        ));
    }
    let want = needed.saturating_add(margin(needed)) as f64 / rec_f;
    let ratio = ((want * 100.0).ceil() / 100.0).min(MPS_MAX_RATIO);
    let mut line = format!("{MPS_RATIO_ENV}={ratio:.2}");
    if ratio < MPS_DEFAULT_LOW_RATIO {
        line += &format!(" PYTORCH_MPS_LOW_WATERMARK_RATIO={ratio:.2}");
    }
    let safe = advise_alone(&AdviceInput {
        os: f.os.clone(),
        phys_bytes: f.system.phys_bytes,
        recommended_max_bytes: Some(rec),
        recommended_read_from_metal: true,
        ..AdviceInput::default()
    });
    let risk = if ratio > safe.high_ratio {
        format!(
            "above {:.2}, swapsight advise's ratio for this Mac, the pool can grow past where the Mac swaps instead of raising out of memory",
            safe.high_ratio
        )
    } else {
        format!(
            "within {:.2}, swapsight advise's ratio for this Mac: PyTorch still raises out of memory before the Mac swaps",
            safe.high_ratio
        )
    };
    Ok(Setting {
        lifts: vec![BoundId::MpsHighWatermark],
        line,
        effect: format!(
            "lets the MPS pool hold {} ({ratio:.2} × {}); the low ratio may not exceed the high one",
            gb((ratio * rec_f) as u64),
            gb(rec)
        ),
        risk,
    })
}
