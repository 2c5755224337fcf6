//! One process's episode: its recent history and the state machine that
//! raises a state once it held for `raise_ms` and clears it once the process
//! looked fine for `clear_ms`, so no flag flaps tick to tick.

use std::collections::VecDeque;

use super::window::{Activity, ProcPoint};
use super::{Assessment, DetectorConfig, Evidence, Flag, State};
use crate::probe::ProcessSample;

/// What the detector remembers of one process.
#[derive(Debug)]
pub(super) struct Track {
    start_time: u64,
    pub(super) name: std::sync::Arc<str>,
    pub(super) history: VecDeque<ProcPoint>,
    /// Debounced state.
    pub(super) state: State,
    /// Worst state since the baseline.
    pub(super) worst: State,
    since_ms: u64,
    /// Instant state that differs from `state`, and since when.
    pending: Option<(State, u64)>,
    pub(super) evidence: Evidence,
    pub(super) activity: Activity,
    pub(super) seen_tick: u64,
    /// When the footprint took the value it has now (the first point of the
    /// run of equal footprints at the end of `history`).
    pub(super) footprint_since: u64,
    /// The footprint of the last point of `history`, kept in the track the
    /// tick touches anyway: the history's last point, written a tick ago,
    /// is out of the cache by the next one (a profile of a steady tick with
    /// 367 processes put half of [`Track::observe`]'s time on that load).
    last_footprint: u64,
}

impl Track {
    pub(super) fn assessment(&self, pid: u32) -> Assessment {
        Assessment {
            pid,
            name: self.name.to_string(),
            state: self.state,
            worst: self.worst,
            evidence: self.evidence.clone(),
            since_ms: self.since_ms,
        }
    }

    pub(super) fn new(p: &ProcessSample, now: u64) -> Track {
        Track {
            start_time: p.start_time,
            name: p.name.clone(),
            history: VecDeque::new(),
            state: State::Fits,
            worst: State::Fits,
            since_ms: now,
            pending: None,
            evidence: Evidence::default(),
            activity: Activity::default(),
            seen_tick: 0,
            footprint_since: now,
            last_footprint: p.footprint_bytes,
        }
    }

    /// Whether the footprint stood still for all of the last `window_ms`:
    /// every point of that window has the footprint of the last one.
    pub(super) fn footprint_flat_for(&self, window_ms: u64, now: u64) -> bool {
        self.footprint_since.saturating_add(window_ms) <= now
    }

    /// Takes this tick's figures of the process into its history (the last
    /// `keep_ms`); a reused pid (another start time) starts afresh.
    pub(super) fn observe(
        &mut self,
        p: &ProcessSample,
        now: u64,
        page_size: u64,
        keep_ms: u64,
        tick: u64,
    ) {
        if self.start_time != p.start_time {
            *self = Track::new(p, now);
        }
        // Mostly the very same text (an idle process's repeated sample):
        // compared by pointer first.
        if !std::sync::Arc::ptr_eq(&self.name, &p.name) && *self.name != *p.name {
            self.name = p.name.clone();
        }
        self.seen_tick = tick;
        if self.history.is_empty() || self.last_footprint != p.footprint_bytes {
            self.footprint_since = now;
        }
        self.last_footprint = p.footprint_bytes;
        self.history.push_back(ProcPoint {
            t_ms: now,
            footprint: p.footprint_bytes,
            pageins: p.pageins,
            swapins: p.swapin_bytes.map(|b| b / page_size).or(p.decompressions),
            swapped: p.swapped_bytes(),
            owned: p.owned_bytes(),
        });
        while self
            .history
            .front()
            .is_some_and(|q| now.saturating_sub(q.t_ms) > keep_ms)
        {
            self.history.pop_front();
        }
    }
}

/// Raises a state that held for `raise_ms`, clears one after `clear_ms` of
/// looking fine; returns the flag when the state changed.
pub(super) fn debounce(
    track: &mut Track,
    pid: u32,
    instant: State,
    evidence: Evidence,
    now: u64,
    cfg: &DetectorConfig,
) -> Option<Flag> {
    if instant == track.state {
        track.pending = None;
        track.evidence = evidence;
        return None;
    }
    let since = match track.pending {
        Some((s, since)) if s == instant => since,
        _ => {
            track.pending = Some((instant, now));
            now
        }
    };
    let needed = if instant == State::Fits {
        cfg.clear_ms
    } else if instant < track.state {
        // A milder non-fits state (false fit → hidden memory) waits like a clear.
        cfg.clear_ms
    } else {
        cfg.raise_ms
    };
    if now.saturating_sub(since) < needed {
        // Not (yet) a change of state, but the figures are current.
        track.evidence = evidence;
        return None;
    }
    let previous = track.state;
    track.state = instant;
    track.worst = track.worst.max(instant);
    track.since_ms = now;
    track.pending = None;
    let message = evidence.describe(instant);
    track.evidence = evidence.clone();
    Some(Flag {
        t_ms: now,
        pid,
        name: track.name.to_string(),
        state: instant,
        previous,
        evidence,
        message,
    })
}
