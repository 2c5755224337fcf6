//! The report's view of time to trouble: the forecaster replayed over a
//! whole run, and for each limit when its forecast first fired, what it
//! said then, and when the limit was really reached.

use serde::Serialize;

use super::{ForecastConfig, Forecaster, Limit};
use crate::probe::{Scope, SwapWall, SystemSample};

/// How a forecast did, for `report`: when it first fired (its time left
/// under the horizon), what it said then, and when the limit was really
/// reached. Fields may be added in later versions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outcome {
    pub(crate) limit: Limit,
    /// When the forecast first fired, ms since the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fired_ms: Option<u64>,
    /// Its estimate then, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_s: Option<f64>,
    /// When the limit was first reached, ms since the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached_ms: Option<u64>,
    /// Swap full on a Mac: the kernel's wall it was forecast at, or
    /// reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall: Option<SwapWall>,
}

impl Outcome {
    /// Time from the forecast firing to the limit being reached.
    pub fn lead_s(&self) -> Option<f64> {
        let (fired, reached) = (self.fired_ms?, self.reached_ms?);
        (reached >= fired).then(|| (reached - fired) as f64 / 1000.0)
    }

    /// How far off the estimate was, as a share of the real time left
    /// (+0.2: it said 20 % more time than there was).
    pub fn error(&self) -> Option<f64> {
        let lead = self.lead_s().filter(|l| *l > 0.0)?;
        Some((self.estimate_s? - lead) / lead)
    }
}

/// Replays the forecaster over a run and notes each limit's [`Outcome`]:
/// the report's view of time to trouble.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    forecaster: Forecaster,
    outcomes: [Option<Outcome>; 3],
}

impl Replay {
    pub(crate) fn new(cfg: ForecastConfig) -> Self {
        Replay {
            forecaster: Forecaster::new(cfg),
            outcomes: [None; 3],
        }
    }

    /// Takes the run's next sample, on the host (no scope).
    pub fn push(&mut self, t_ms: u64, sys: &SystemSample) {
        self.push_in(t_ms, sys, None);
    }

    /// [`Replay::push`] of a sample in `scope` when the run has one.
    pub fn push_in(&mut self, t_ms: u64, sys: &SystemSample, scope: Option<&Scope>) {
        let (forecast, fired) = self.forecaster.step_in(t_ms, sys, scope);
        let blank = |limit| Outcome {
            limit,
            fired_ms: None,
            estimate_s: None,
            reached_ms: None,
            wall: None,
        };
        for limit in fired {
            let o = self.outcomes[limit.index()].get_or_insert_with(|| blank(limit));
            if o.fired_ms.is_none() && o.reached_ms.is_none() {
                o.fired_ms = Some(t_ms);
                o.estimate_s = forecast.get(limit);
                if limit == Limit::SwapFull {
                    o.wall = forecast.swap_full_wall;
                }
            }
        }
        for limit in self.forecaster.reached_in(sys, scope) {
            let o = self.outcomes[limit.index()].get_or_insert_with(|| blank(limit));
            if o.reached_ms.is_none() && limit == Limit::SwapFull && o.wall.is_none() {
                o.wall = self.forecaster.figures(sys, scope).full_wall;
            }
            o.reached_ms.get_or_insert(t_ms);
        }
    }

    /// The limits that fired or were reached, in [`Limit::ALL`] order.
    pub fn finish(self) -> Vec<Outcome> {
        self.outcomes.into_iter().flatten().collect()
    }
}
