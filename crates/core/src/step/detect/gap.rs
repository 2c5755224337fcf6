//! Memory not explained by footprints, per tick.

use serde::{Deserialize, Serialize};

use crate::probe::{ProcessSample, Sample, SystemSample};
use crate::util::units::signed_diff;

/// Memory not explained by footprints: used memory against the sum of the
/// footprints the OS let us read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FootprintGap {
    /// Memory in use ([`SystemSample::used_bytes`]).
    pub used_bytes: u64,
    /// Sum of the readable processes' footprints.
    pub footprints_bytes: u64,
    /// What the readable processes hold, resident or swapped: their
    /// footprints plus their own swap where the OS keeps it outside the
    /// footprint (Linux `VmSwap`; a macOS footprint already counts its
    /// compressed memory, in RAM or swapped out). The footprints' share of
    /// memory, which tells overflow from false fit, is taken of this, so it
    /// means on Linux what it means on a Mac: a filler whose resident pages
    /// the kernel pushes to swap still holds them.
    pub held_bytes: u64,
    /// `used_bytes − footprints_bytes`: memory no readable footprint
    /// explains — the kernel, drivers and GPU, other users' processes,
    /// memory outside footprints. Negative when footprints hold much
    /// compressed or swapped memory (counted in a macOS footprint at its
    /// full size, though it occupies less RAM or none).
    pub unexplained_bytes: i64,
    /// `footprints_bytes / used_bytes`, 0 when nothing is used.
    pub coverage: f64,
    /// Processes listed without figures (other users' on macOS).
    pub unreadable: u32,
    /// Sum of the memory readable processes own outside their footprints.
    pub outside_footprint_bytes: u64,
    /// Sum of the readable processes' GPU memory.
    pub gpu_bytes: u64,
    /// macOS: wired memory (kernel and drivers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wired_bytes: Option<u64>,
    /// macOS: physical memory the compressor occupies.
    pub compressor_bytes: u64,
    /// macOS: system memory the GPU's allocations hold now (IOAccelerator
    /// "In use system memory", [`crate::probe::GpuMemory`]); absent where
    /// the OS gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_in_use_bytes: Option<u64>,
}

impl FootprintGap {
    /// The swap `held_bytes` counts beside the footprints (Linux `VmSwap`).
    pub fn footprints_swap_bytes(&self) -> u64 {
        self.held_bytes.saturating_sub(self.footprints_bytes)
    }

    /// GPU memory in use that no footprint counts: the GPU's in-use memory
    /// less the graphics memory the readable footprints already hold (their
    /// `ledger_tag_graphics` parts, [`FootprintGap::gpu_bytes`]). Absent
    /// without the GPU's figure.
    pub fn gpu_outside_footprints(&self) -> Option<u64> {
        Some(self.gpu_in_use_bytes?.saturating_sub(self.gpu_bytes))
    }

    /// How much of the memory footprints do not explain the GPU holds: the
    /// smaller of the two. Absent without the GPU's figure.
    pub fn held_by_gpu(&self) -> Option<u64> {
        let unexplained = u64::try_from(self.unexplained_bytes.max(0)).unwrap_or(0);
        Some(self.gpu_outside_footprints()?.min(unexplained))
    }
}

/// What one tick is judged against: the host, or the run's scope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// The memory, free memory and swap the run has: the scope's where a
    /// memory cgroup limits it ([`crate::probe::Scope::as_system`]), else
    /// the host's.
    pub system: SystemSample,
    /// Used memory against the footprints of the processes that live in it.
    pub gap: FootprintGap,
}

/// The one rule for what a tick is judged against, which the detector,
/// `report` and the views share. Without a scope: the host and every
/// process. With one: the scope's limit is the memory, its usage the used
/// memory, its swap the swap, and the footprints counted are those of the
/// processes it holds — the watched tree (`watched`), whose root the scope
/// was read for, or every process when nothing is watched (swapsight's own
/// scope: in a container, what it sees is what the container holds).
pub fn judged(sample: &Sample, watched: &dyn Fn(u32) -> bool, any_watched: bool) -> Judged {
    let system = sample.system.judged_in(sample.scope.as_ref());
    // Inside a scope, only the processes it holds count.
    let scoped = sample.scope.is_some() && any_watched;
    let inside = sample
        .processes
        .iter()
        .filter(|p| !scoped || watched(p.pid));
    Judged {
        system,
        gap: footprint_gap(&system, inside),
    }
}

/// The footprint gap of one tick. Pure, so the UI, report and detector show
/// the same figure.
pub fn footprint_gap<'a>(
    system: &SystemSample,
    processes: impl IntoIterator<Item = &'a ProcessSample>,
) -> FootprintGap {
    let mut gap = FootprintGap {
        used_bytes: system.used_bytes(),
        wired_bytes: system.wired_bytes,
        compressor_bytes: system.compressed_bytes,
        gpu_in_use_bytes: system.gpu.and_then(|g| g.in_use_bytes),
        ..FootprintGap::default()
    };
    for p in processes {
        // pid 0 is kernel_task (readable by root only): its ledger holds the
        // kernel's memory, which `wired_bytes` already shows beside the gap;
        // counting it as a footprint would hide it from the gap.
        if p.pid == 0 {
            continue;
        }
        if !p.readable {
            gap.unreadable = gap.unreadable.saturating_add(1);
            continue;
        }
        gap.footprints_bytes = gap.footprints_bytes.saturating_add(p.footprint_bytes);
        gap.held_bytes = gap.held_bytes.saturating_add(p.owned_bytes());
        gap.outside_footprint_bytes = gap
            .outside_footprint_bytes
            .saturating_add(p.outside_footprint_bytes.unwrap_or(0));
        gap.gpu_bytes = gap.gpu_bytes.saturating_add(p.gpu_bytes.unwrap_or(0));
    }
    gap.unexplained_bytes = signed_diff(gap.used_bytes, gap.footprints_bytes);
    gap.coverage = if gap.used_bytes == 0 {
        0.0
    } else {
        gap.footprints_bytes as f64 / gap.used_bytes as f64
    };
    gap
}
