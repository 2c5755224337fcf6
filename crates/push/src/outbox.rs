//! The push's queue, as pure logic: moments waiting to be sent, oldest
//! first, bounded in samples; what an answer does to them; when to try
//! again. No clock, no randomness and no I/O here: the time and the jitter
//! come in as arguments, so the tests step through outages without
//! sleeping.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Samples one request carries at most (a moment with more goes alone):
/// Prometheus' own remote write sends 2000 at most by default
/// (`max_samples_per_send`), which every receiver takes.
pub const MAX_SAMPLES_PER_REQUEST: usize = 2000;

/// The first retry's delay; each failure doubles it, up to [`BACKOFF_MAX`].
pub const BACKOFF_FIRST: Duration = Duration::from_millis(500);
/// The longest wait between two tries.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The exposition text of one moment, as the push found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    /// Its place in the queue: each moment's is one more than the last.
    pub seq: u64,
    /// Wall-clock time of the snapshot, Unix milliseconds.
    pub at_ms: i64,
    /// The exposition (parsed only when sent: text is several times
    /// smaller than the parsed labels, and the queue may hold hours).
    pub text: String,
    /// Its samples: the lines that are not comments.
    pub samples: usize,
}

/// Samples in an exposition text: each line that is neither blank nor a
/// comment holds one.
pub fn samples_in(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count()
}

/// What the receiver's answer means for the moments it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Taken (2xx).
    Sent,
    /// Refused for what the batch holds (a 4xx other than 401, 403, 408
    /// and 429: out-of-order or too-old samples, a bad label): sending
    /// it again would be refused again, so it is dropped and counted and
    /// the queue moves on.
    Rejected,
    /// Refused for who sent it (401, 403): the credentials, not the
    /// batch. Kept and tried again with backoff, so that fixing them on
    /// the receiver's side loses nothing the queue still holds.
    Unauthorized,
    /// Not taken for now (no connection, a timeout, 5xx, 408, 429):
    /// tried again with backoff.
    Retry,
}

/// The verdict of an HTTP status.
pub fn verdict(status: u16) -> Verdict {
    match status {
        200..=299 => Verdict::Sent,
        401 | 403 => Verdict::Unauthorized,
        408 | 429 => Verdict::Retry,
        400..=499 => Verdict::Rejected,
        _ => Verdict::Retry,
    }
}

/// The wait before the next try after `failures` failed tries in a row
/// (1 or more): [`BACKOFF_FIRST`] doubled each time up to [`BACKOFF_MAX`],
/// then jittered down by up to half by `unit` (0 to 1, drawn by the
/// caller), so pushers that lost the same receiver do not come back to it
/// in step.
pub fn backoff(failures: u32, unit: f64) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    let full = BACKOFF_FIRST
        .saturating_mul(1 << doublings)
        .min(BACKOFF_MAX);
    full.mul_f64(1.0 - 0.5 * unit.clamp(0.0, 1.0))
}

/// What the push has done since it started: its own series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Samples the receiver took.
    pub sent: u64,
    /// Samples dropped, oldest first, to keep the queue in its bound.
    pub dropped_overflow: u64,
    /// Samples the receiver refused (4xx) and that were dropped.
    pub dropped_rejected: u64,
    /// Requests that failed and were tried again.
    pub retried: u64,
}

/// What [`Outbox::settle`] did, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// Moments taken off the queue (sent or dropped).
    pub moments: usize,
    /// Their samples.
    pub samples: usize,
    /// Failed tries in a row now (0 after a success or a rejection).
    pub failures: u32,
}

/// The queue: moments oldest first, at most `cap` samples in all (one
/// moment is kept whatever its size), and when to try next.
#[derive(Debug)]
pub struct Outbox {
    queue: VecDeque<Moment>,
    held: usize,
    cap: usize,
    next_seq: u64,
    failures: u32,
    retry_at: Option<Instant>,
    counts: Counts,
}

impl Outbox {
    /// An empty queue of at most `cap` samples.
    pub fn new(cap: usize) -> Self {
        Outbox {
            queue: VecDeque::new(),
            held: 0,
            cap,
            next_seq: 0,
            failures: 0,
            retry_at: None,
            counts: Counts::default(),
        }
    }

    /// Puts a moment at the back, then drops the oldest ones while the
    /// queue holds more than its bound; the samples dropped now.
    pub fn add(&mut self, at_ms: i64, text: String) -> usize {
        let samples = samples_in(&text);
        self.queue.push_back(Moment {
            seq: self.next_seq,
            at_ms,
            text,
            samples,
        });
        self.next_seq += 1;
        self.held += samples;
        let mut dropped = 0;
        while self.held > self.cap && self.queue.len() > 1 {
            if let Some(old) = self.queue.pop_front() {
                self.held -= old.samples;
                dropped += old.samples;
            }
        }
        self.counts.dropped_overflow += dropped as u64;
        dropped
    }

    /// Samples held now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Whether a request should go now: something is queued and no
    /// backoff is running.
    pub fn due(&self, now: Instant) -> bool {
        !self.queue.is_empty() && self.retry_at.is_none_or(|t| now >= t)
    }

    /// When a backoff under way ends, if one is.
    pub fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// The next request's moments: the oldest, and the ones after it while
    /// they fit in [`MAX_SAMPLES_PER_REQUEST`].
    pub fn next_batch(&self) -> Vec<Moment> {
        let mut total = 0;
        let mut out = Vec::new();
        for m in &self.queue {
            if !out.is_empty() && total + m.samples > MAX_SAMPLES_PER_REQUEST {
                break;
            }
            total += m.samples;
            out.push(m.clone());
        }
        out
    }

    /// Applies the answer to the batch whose newest moment was `last_seq`
    /// (moments the bound dropped meanwhile are gone already): sent or
    /// rejected, its moments leave the queue; otherwise they stay and the
    /// next try waits [`backoff`] from `now`, jittered by `unit`.
    pub fn settle(&mut self, last_seq: u64, verdict: Verdict, now: Instant, unit: f64) -> Settled {
        let mut moments = 0;
        let mut samples = 0;
        match verdict {
            Verdict::Sent | Verdict::Rejected => {
                while self.queue.front().is_some_and(|m| m.seq <= last_seq) {
                    if let Some(m) = self.queue.pop_front() {
                        self.held -= m.samples;
                        moments += 1;
                        samples += m.samples;
                    }
                }
                if verdict == Verdict::Sent {
                    self.counts.sent += samples as u64;
                } else {
                    self.counts.dropped_rejected += samples as u64;
                }
                self.failures = 0;
                self.retry_at = None;
            }
            Verdict::Unauthorized | Verdict::Retry => {
                self.failures = self.failures.saturating_add(1);
                self.counts.retried += 1;
                self.retry_at = Some(now + backoff(self.failures, unit));
            }
        }
        Settled {
            moments,
            samples,
            failures: self.failures,
        }
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
