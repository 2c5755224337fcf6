//! Integration tests of the `swapsight` binary. One test binary; modules by
//! subcommand; `util` holds the harness (temp dirs, command builder, real
//! swap + memory cgroup).

mod util;

mod export;
mod guard;
mod hardening;
mod names;
#[cfg(target_os = "linux")]
mod prometheus;
#[cfg(target_os = "linux")]
mod realswap;
mod record;
mod report;
mod serve;
