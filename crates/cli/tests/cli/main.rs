//! Integration tests of the `swapsight` binary. One test binary; modules by
//! subcommand; `util` holds the harness (temp dirs, command builder, real
//! swap + memory cgroup).

mod util;

mod advise;
mod compare;
mod doctor;
mod export;
mod fit;
mod guard;
mod hardening;
#[cfg(target_os = "linux")]
mod hidden_real;
mod large;
mod layout;
mod marks;
mod mcp;
mod names;
#[cfg(target_os = "linux")]
mod phases_real;
#[cfg(target_os = "linux")]
mod planted;
#[cfg(target_os = "linux")]
mod pressure_real;
#[cfg(target_os = "linux")]
mod prometheus;
#[cfg(target_os = "linux")]
mod push;
#[cfg(target_os = "linux")]
mod realswap;
mod record;
mod recording_flags;
mod report;
#[cfg(target_os = "linux")]
mod scope;
mod serve;
mod workflows;
