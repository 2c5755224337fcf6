//! Whether swap could grow at all in a run. Without swap a swap budget
//! cannot be broken and a false fit cannot show as swap: memory that does
//! not fit ends in the OOM killer instead. A report that says "swap grew
//! 0 KiB, fits" of such a run says nothing, so it says why.

use serde::Serialize;

use crate::probe::{Scope, SystemSample};

/// Why swap could not grow in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapOff {
    /// The machine had no swap at every sample (Linux `SwapTotal` 0).
    /// macOS makes its swap files as it needs them, so a Mac showing none
    /// yet is never this.
    NoSwap,
    /// The run's cgroup allowed it no swap at every sample from the first
    /// that found the run in it (v2 `memory.swap.max` 0, v1
    /// `memory.memsw.limit_in_bytes` equal to `memory.limit_in_bytes`). A
    /// command that joins its cgroup first thing is judged from there, as
    /// the rest of the report judges it.
    ScopeSwapOff,
}

impl SwapOff {
    /// The reason in words, for the report and the pytest plugin.
    pub fn to_words(self) -> &'static str {
        match self {
            SwapOff::NoSwap => "no swap on this machine (SwapTotal 0)",
            SwapOff::ScopeSwapOff => "the run's cgroup allows it no swap (its swap limit is 0)",
        }
    }
}

/// The fold over a run's samples that finds a [`SwapOff`].
#[derive(Debug, Clone)]
pub(super) struct SwapOffFold {
    /// Only Linux's `SwapTotal` 0 means no swap (see [`SwapOff::NoSwap`]).
    host_can_say: bool,
    samples: usize,
    no_host_swap: bool,
    in_scope: bool,
    no_scope_swap: bool,
}

impl SwapOffFold {
    pub(super) fn new(os: &str) -> Self {
        SwapOffFold {
            host_can_say: os == "linux",
            samples: 0,
            no_host_swap: true,
            in_scope: false,
            no_scope_swap: true,
        }
    }

    pub(super) fn push(&mut self, system: &SystemSample, scope: Option<&Scope>) {
        self.samples += 1;
        self.no_host_swap &= system.swap_total_bytes == 0;
        self.in_scope |= scope.is_some();
        if self.in_scope {
            self.no_scope_swap &= scope.is_some_and(|s| s.swap_limit_bytes == Some(0));
        }
    }

    pub(super) fn finish(&self) -> Option<SwapOff> {
        if self.samples == 0 {
            None
        } else if self.host_can_say && self.no_host_swap {
            Some(SwapOff::NoSwap)
        } else if self.in_scope && self.no_scope_swap {
            Some(SwapOff::ScopeSwapOff)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system(total: u64) -> SystemSample {
        SystemSample {
            swap_total_bytes: total,
            ..SystemSample::default()
        }
    }

    fn scope(swap_limit: Option<u64>) -> Scope {
        Scope {
            limit_bytes: 256 << 20,
            swap_limit_bytes: swap_limit,
            ..Scope::default()
        }
    }

    #[test]
    fn a_linux_machine_without_swap_at_every_sample_says_so() {
        let mut fold = SwapOffFold::new("linux");
        fold.push(&system(0), None);
        fold.push(&system(0), None);
        assert_eq!(fold.finish(), Some(SwapOff::NoSwap));
        fold.push(&system(1 << 30), None);
        assert_eq!(fold.finish(), None, "swap turned on during the run");
    }

    #[test]
    fn a_mac_showing_no_swap_files_yet_can_still_swap() {
        let mut fold = SwapOffFold::new("macos");
        fold.push(&system(0), None);
        assert_eq!(fold.finish(), None);
    }

    #[test]
    fn a_cgroup_with_a_swap_limit_of_0_at_every_sample_says_so() {
        let mut fold = SwapOffFold::new("linux");
        fold.push(&system(8 << 30), Some(&scope(Some(0))));
        assert_eq!(fold.finish(), Some(SwapOff::ScopeSwapOff));
        fold.push(&system(8 << 30), Some(&scope(None)));
        assert_eq!(fold.finish(), None, "a limit lifted during the run");
    }

    #[test]
    fn a_run_that_joins_its_swapless_cgroup_first_thing_is_judged_from_there() {
        let mut fold = SwapOffFold::new("linux");
        fold.push(&system(8 << 30), None);
        assert_eq!(fold.finish(), None);
        fold.push(&system(8 << 30), Some(&scope(Some(0))));
        assert_eq!(fold.finish(), Some(SwapOff::ScopeSwapOff));
        fold.push(&system(8 << 30), None);
        assert_eq!(
            fold.finish(),
            None,
            "out of the cgroup again, it could swap"
        );
    }

    #[test]
    fn no_samples_say_nothing() {
        assert_eq!(SwapOffFold::new("linux").finish(), None);
    }
}
