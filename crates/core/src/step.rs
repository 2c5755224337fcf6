//! The step: one sample's way through swapsight, from the sampler's thread
//! to the detector's states, the pressure level and the forecast.
//!
//! - [`sampler`]: asks the probe for a sample every interval, on its own thread.
//! - [`tick`]: everything known after one sample.
//! - [`monitor`]: a sample through the tree, the detector, the pressure and the forecast.
//! - [`tree`]: the watched process tree.
//! - [`detect`]: the false-fit detector.
//! - [`pressure`]: the kernel's memory pressure, host and scope.
//! - [`forecast`]: time to trouble at the current rate.
//! - [`sustain`]: when a climb is sustained (the detector's and the forecast's rule).
//! - [`written`]: swap written, over a run, a phase or a day.
//! - [`caches`]: an allocator's cache that grew while its tensors did not.

pub mod caches;
pub mod detect;
pub mod forecast;
pub mod monitor;
pub mod pressure;
pub mod sampler;
pub mod sustain;
pub mod tick;
pub mod tree;
pub mod written;
