//! Whose swap: what points at one process at one tick, and the rule that
//! turns it into the process's instant state (before debouncing).
//!
//! A new kind of evidence is a field of [`Blame`], read in [`Blame::of`]
//! and weighed in [`Blame::state`]; the system-wide figures it may need
//! (a scope, memory pressure) travel in [`TickFigures`].

use super::window::Activity;
use super::{DetectorConfig, State, TickFigures};
use crate::probe::ProcessSample;
use crate::util::units::signed_diff;

/// What points at one process at one tick: the inputs of [`Blame::state`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Blame {
    /// The OS gave its figures. A process it denied them for is never
    /// flagged: its zeros say nothing.
    pub(super) readable: bool,
    /// System swap climbs (the swap-growth window).
    pub(super) climbing: bool,
    /// Hysteresis: its false fit or overflow is raised and swap still grows
    /// at the sustained rate, even below the window tolerance.
    pub(super) held: bool,
    /// Swapping in at `min_pageins_per_s`: macOS swap-ins where the OS gives
    /// them (file page-ins are not swap), else page-ins (Linux major faults).
    pub(super) swapping_in: bool,
    /// Its own swap grew *and* it owns more than before: a process whose
    /// pages were pushed out by someone else owns no more.
    pub(super) own_swap: bool,
    /// Its footprint fell without free memory rising to match.
    pub(super) dropped_unmatched: bool,
    /// It owns at least the hidden-memory threshold outside its footprint.
    pub(super) out_of_sight: bool,
    /// The watched tree's largest readable member: it carries the tree's blame.
    pub(super) carries_tree: bool,
    /// Its footprint grew by `min_growth_bytes` over the window.
    pub(super) growing: bool,
    /// The tick is judged against the watched tree's scope (a memory
    /// cgroup) and this process is not of the tree: the scope's swap and
    /// limit are not its own, so nothing of it is held against it.
    pub(super) outside_scope: bool,
}

impl Blame {
    /// Reads the evidence against process `p`: its `activity` over the
    /// window, its unmatched footprint drop `hidden_bytes`, its debounced
    /// state `raised`, and the tick's system figures.
    pub(super) fn of(
        p: &ProcessSample,
        activity: &Activity,
        hidden_bytes: u64,
        raised: State,
        is_watched: bool,
        tick: &TickFigures,
        cfg: &DetectorConfig,
    ) -> Blame {
        let min_growth = signed_diff(cfg.min_growth_bytes, 0);
        Blame {
            readable: p.readable,
            climbing: tick.swap.climbing,
            held: matches!(raised, State::FalseFit | State::Overflow) && tick.swap.sustained,
            swapping_in: activity.swapins_per_s.unwrap_or(activity.pageins_per_s)
                >= cfg.min_pageins_per_s,
            own_swap: activity
                .process_swap_delta_bytes
                .is_some_and(|d| d >= min_growth)
                && activity.owned_delta_bytes >= min_growth,
            dropped_unmatched: hidden_bytes > 0,
            out_of_sight: p.outside_footprint_bytes.unwrap_or(0) >= tick.hidden_drop_bytes,
            carries_tree: tick.watched_top == Some(p.pid),
            growing: activity.footprint_delta_bytes >= min_growth,
            outside_scope: tick.scoped && !is_watched,
        }
    }

    /// Evidence that points at a process whatever its size: swapping in,
    /// own swap growing, hidden memory, or carrying the watched tree.
    fn strong(&self) -> bool {
        self.swapping_in
            || self.own_swap
            || self.dropped_unmatched
            || self.out_of_sight
            || self.carries_tree
    }

    /// The instant state. Blamed while swap climbs (or a raised state is
    /// held) on strong evidence, or on a growing footprint when the
    /// footprints fill memory — a compiler growing next to someone else's
    /// swap storm is not it; then `swap_verdict` (overflow or false fit,
    /// [`DetectorConfig::swap_verdict`]) says which. Not blamed, a drop or
    /// memory out of sight is hidden memory; else it fits.
    pub(super) fn state(&self, swap_verdict: State) -> State {
        if self.outside_scope {
            return State::Fits;
        }
        let blamed = self.readable
            && (self.climbing || self.held)
            && (self.strong() || (self.growing && swap_verdict == State::Overflow));
        if blamed {
            swap_verdict
        } else if self.readable && (self.dropped_unmatched || self.out_of_sight) {
            State::HiddenMemory
        } else {
            State::Fits
        }
    }
}
