//! swapsight: footprint beside swap.
//!
//! On Apple Silicon the footprint Activity Monitor shows does not count
//! memory held outside it (by the GPU driver, owned with no footprint, or not
//! yet touched), so a run can look like it fits while swap climbs — the
//! *false fit*. This library holds everything that is not a shell: the
//! platform probes, the sampler, the detector, the trace format, the report
//! and the exports. Data flows one way: probe → sampler → detector (through
//! [`monitor::Monitor`]) → sinks.

pub mod advise;
pub mod answers;
pub mod compare;
pub mod detect;
pub mod doctor;
pub mod export;
pub mod forecast;
pub mod guard;
pub mod live;
pub mod marks;
pub mod monitor;
pub mod outpath;
pub mod phases;
pub mod pressure;
pub mod probe;
pub mod recorder;
pub mod recordings;
pub mod report;
pub mod sampler;
pub mod session;
/// Made-up traces and runs for tests, benches and the fuzzer.
#[cfg(any(test, feature = "test-support"))]
pub mod synth;
pub mod text;
pub mod tick;
pub mod trace;
pub mod tree;
pub mod units;

pub use detect::{Detector, DetectorConfig, State};
pub use monitor::Monitor;
pub use probe::{Probe, ProcessSample, Sample, SystemSample};
pub use sampler::{Sampler, SamplerConfig};
pub use tick::Tick;
