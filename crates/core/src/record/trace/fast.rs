//! The fast way to read a sample line, the bulk of every trace.

use serde::Deserialize;

use super::records::{Record, TraceSample};
use crate::probe::Sample;
use crate::step::forecast::Forecast;

/// A sample line's fields at one level, as the writer lays them out.
/// serde reads this straight from the text, where [`Record`] (internally
/// tagged) and [`TraceSample`] (flattened) first copy every value into an
/// intermediate tree: about half the cost of reading a large trace.
#[derive(Deserialize)]
struct SampleLine {
    #[serde(rename = "type")]
    _kind: serde::de::IgnoredAny,
    t_ms: u64,
    #[serde(rename = "sys")]
    system: crate::probe::SystemSample,
    #[serde(rename = "procs")]
    processes: Vec<crate::probe::ProcessSample>,
    #[serde(default)]
    watched: Vec<u32>,
    #[serde(default)]
    forecast: Option<Forecast>,
    #[serde(default)]
    scope: Option<crate::probe::Scope>,
}

/// How the writer starts every sample line.
const SAMPLE_START: &[u8] = br#"{"type":"sample","#;

/// The record of a line the writer wrote as a sample (its first field says
/// so), read the fast way; `None` sends every other line, and any this way
/// does not read, to the general reader, which says what is wrong.
pub(super) fn fast_sample(text: &[u8]) -> Option<Record> {
    if !text.starts_with(SAMPLE_START) {
        return None;
    }
    let line: SampleLine = serde_json::from_slice(text).ok()?;
    Some(Record::Sample(TraceSample {
        sample: Sample {
            t_ms: line.t_ms,
            system: line.system,
            processes: line.processes,
            scope: line.scope,
        },
        watched: line.watched,
        forecast: line.forecast,
    }))
}
