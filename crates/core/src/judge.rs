//! The judge: verdicts on recorded runs and the decisions built on them.
//!
//! - [`report`]: the verdict on a run: fits, overflow, false fit or hidden memory.
//! - [`compare`]: runs side by side.
//! - [`advise`]: the one setting that turns a slide into swap into a clean error.
//! - [`fit`]: will a model fit, before loading: its weights against each bound.
//! - [`guard`]: the guard's decisions: wait for free memory, stop on a budget.

pub mod advise;
pub mod compare;
pub mod fit;
pub mod guard;
pub mod report;
