//! swapsight: footprint beside swap.
//!
//! On Apple Silicon the footprint Activity Monitor shows does not count
//! memory held outside it (by the GPU driver, owned with no footprint, or not
//! yet touched), so a run can look like it fits while swap climbs — the
//! *false fit*. This library holds everything that is not a shell: the
//! platform probes, the sampler, the detector, the trace format, the report
//! and the exports.
//!
//! Data flows one way, and the modules are grouped by the floor they stand
//! on; each floor uses only the floors above it in this list:
//!
//! - [`util`]: sizes and durations, text from outside cleaned, files written
//!   safely — used by every floor.
//! - [`probe`] (read): one sample of the machine and its processes, per OS.
//! - [`step`]: a sample through the sampler's thread, the watched tree, the
//!   detector, the pressure level and the forecast, into a [`Tick`].
//! - [`record`]: ticks into a trace, and the trace read back.
//! - [`judge`]: verdicts on a recorded run (report, compare, advise, guard).
//! - [`show`]: exports, the live session the app and `serve` share, and
//!   `doctor`.
//!
//! Output types — what a shell prints, serves or draws: a report, a
//! comparison's [`RunRow`](judge::compare::RunRow), fit's
//! [`Answer`](judge::fit::Answer), the live session's
//! [`Snapshot`](show::live::Snapshot), [`Notice`](show::live::Notice) and
//! [`Point`](show::live::Point) — have every field `pub` and documented,
//! and are `#[non_exhaustive]`: a shell reads any figure it shows, only the
//! core builds them, and a field added later breaks no shell. Types whose
//! fields keep an invariant (a fold, a sampler) keep them private behind
//! methods.
//!
//! Each module is also re-exported at the crate's root
//! (`swapsight::report` is `swapsight::judge::report`), the paths the shells
//! and tests use.
//!
//! From a sampler to a report:
//!
//! ```no_run
//! use std::path::Path;
//! use swapsight::{probe, report, trace, Sampler, SamplerConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Live: a sampler thread, a tick every 500 ms.
//! let sampler = Sampler::spawn(probe::native()?, SamplerConfig::default());
//! for tick in sampler.subscribe(16).iter().take(4) {
//!     let flagged = tick.flagged.len();
//!     println!("{} processes, {flagged} flagged", tick.sample.processes.len());
//! }
//!
//! // After the fact: a recorded trace judged.
//! let run = trace::read(Path::new("trace.jsonl"))?;
//! let verdict = report::report(&run, None);
//! println!("{}: {}", verdict.verdict.label(), verdict.summary);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod judge;
pub mod probe;
pub mod record;
pub mod show;
pub mod step;
/// Made-up traces and runs for tests, benches and the fuzzer.
#[cfg(any(test, feature = "test-support"))]
pub mod synth;
pub mod util;

pub use judge::{advise, compare, fit, guard, report};
pub use record::{counters, marks, phases, recorder, recordings, session, trace};
pub use show::{answers, doctor, export, live};
pub use step::{caches, detect, forecast, monitor, pressure, sampler, tick, tree, written};
pub use util::{bell, outpath, text, units};

pub use detect::{Detector, DetectorConfig, State};
pub use monitor::Monitor;
pub use probe::{Probe, ProcessSample, Sample, SystemSample};
pub use sampler::{Sampler, SamplerConfig};
pub use tick::Tick;
