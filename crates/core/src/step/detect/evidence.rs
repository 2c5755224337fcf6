//! Why a state was given: the figures behind a verdict, and the sentence a
//! user reads about them.

use serde::{Deserialize, Serialize};

use super::State;
use crate::util::units::{format_bytes, format_duration};

/// Why a state was given: the figures behind it, at the tick it was judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Evidence {
    /// The process's footprint at the tick.
    pub footprint_bytes: u64,
    /// Physical memory, or the scope's limit where one binds.
    pub phys_bytes: u64,
    /// All readable processes' footprints, with their own swap where the
    /// OS keeps it outside them (Linux `VmSwap`), over physical memory.
    pub footprints_share: f64,
    /// The swap `footprints_share` counts beside the footprints (Linux
    /// `VmSwap` of the readable processes); 0 on macOS, whose footprints
    /// hold their swapped memory already.
    #[serde(skip_serializing_if = "is_zero")]
    pub footprints_swap_bytes: u64,
    /// System swap growth over the window.
    pub swap_growth_window_bytes: i64,
    /// System swap growth since the baseline (detector start or reset).
    pub swap_growth_bytes: i64,
    /// The window the growths and rates are measured over.
    pub window_ms: u64,
    /// Free memory in %, the scope's where a limit binds.
    pub free_pct: f64,
    /// Page-ins per second over the window (macOS file page-ins, Linux
    /// major faults).
    pub pageins_per_s: f64,
    /// Footprint change over the window.
    pub footprint_delta_bytes: i64,
    /// Footprint drop not matched by free memory (hidden memory).
    pub hidden_bytes: u64,
    /// macOS: how far the GPU's in-use memory rose while that footprint
    /// fell, where it rose: where the memory went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_gpu_rise_bytes: Option<u64>,
    /// Whether the process is in the watched tree.
    pub watched: bool,
    /// Swap-ins per second over the window, in pages (macOS
    /// `ledger_swapins`, else `decompressions`); absent where the OS does
    /// not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swapins_per_s: Option<f64>,
    /// Growth of the process's own swapped memory over the window (Linux
    /// `VmSwap`, macOS compressed bytes); absent where the OS does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_swap_delta_bytes: Option<i64>,
    /// Memory the process owns outside its footprint (macOS).
    pub outside_footprint_bytes: u64,
    /// GPU memory of the process (macOS "graphics" ledger tag).
    pub gpu_bytes: u64,
    /// Used memory not explained by readable footprints (system).
    pub unexplained_bytes: i64,
    /// Share of used memory the readable footprints cover (system).
    pub footprint_coverage: f64,
}

impl Evidence {
    /// The evidence in a sentence a user understands.
    pub fn describe(&self, state: State) -> String {
        let fp = format!(
            "footprint {} of {} ({:.0} %)",
            format_bytes(self.footprint_bytes as i64),
            format_bytes(self.phys_bytes as i64),
            pct(self.footprint_bytes, self.phys_bytes)
        );
        let swap = format!(
            "swap grew {} in {}",
            format_bytes(self.swap_growth_window_bytes),
            format_duration(std::time::Duration::from_millis(self.window_ms))
        );
        let mut why = Vec::new();
        if let Some(r) = self.swapins_per_s.filter(|&r| r >= 1.0) {
            why.push(format!("swapping in {r:.0} pages/s"));
        }
        if self.pageins_per_s >= 1.0 {
            why.push(format!("paging in {:.0}/s", self.pageins_per_s));
        }
        if let Some(d) = self.process_swap_delta_bytes.filter(|&d| d > 0) {
            why.push(format!("own swap +{}", format_bytes(d)));
        }
        if self.outside_footprint_bytes > 0 {
            why.push(format!(
                "{} outside the footprint",
                format_bytes(self.outside_footprint_bytes as i64)
            ));
        }
        if self.footprint_delta_bytes > 0 {
            why.push(format!(
                "footprint +{}",
                format_bytes(self.footprint_delta_bytes)
            ));
        }
        if self.watched {
            why.push("watched".to_string());
        }
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" [{}]", why.join(", "))
        };
        let cover = if self.footprint_coverage > 0.0 && self.footprint_coverage < 0.95 {
            format!(
                " (readable footprints cover {:.0} % of used memory; {} not explained by footprints)",
                self.footprint_coverage * 100.0,
                format_bytes(self.unexplained_bytes)
            )
        } else {
            String::new()
        };
        let all = match self.footprints_swap_bytes {
            0 => "all footprints".to_string(),
            s => format!(
                "all footprints, with their {} of swap (VmSwap),",
                format_bytes(s as i64)
            ),
        };
        match state {
            State::FalseFit => format!(
                "{fp} while {swap}; {all} {:.0} % of memory{cover}: false fit{why}",
                self.footprints_share * 100.0
            ),
            State::Overflow => format!(
                "{fp} while {swap}; {all} {:.0} % of memory: overflow{why}",
                self.footprints_share * 100.0
            ),
            State::HiddenMemory if self.hidden_bytes == 0 => format!(
                "{} owned outside the footprint of {}: hidden memory",
                format_bytes(self.outside_footprint_bytes as i64),
                format_bytes(self.footprint_bytes as i64)
            ),
            State::HiddenMemory => match self.hidden_gpu_rise_bytes {
                // The GPU took at least half of what left the footprint.
                Some(rise) if rise.saturating_mul(2) >= self.hidden_bytes => format!(
                    "footprint fell by {} to {} while free memory did not rise to match and the GPU's in-use memory rose by {}: hidden memory, held by the GPU outside footprints",
                    format_bytes(self.hidden_bytes as i64),
                    format_bytes(self.footprint_bytes as i64),
                    format_bytes(rise as i64)
                ),
                _ => format!(
                    "footprint fell by {} to {} while free memory did not rise to match: hidden memory",
                    format_bytes(self.hidden_bytes as i64),
                    format_bytes(self.footprint_bytes as i64)
                ),
            },
            State::Fits => format!(
                "{fp}; swap growth {}: fits",
                format_bytes(self.swap_growth_bytes)
            ),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}
