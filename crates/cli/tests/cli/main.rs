//! Integration tests of the `swapsight` binary. One test binary; modules by
//! subcommand; `util` holds the harness (temp dirs, command builder, real
//! swap + memory cgroup).

mod util;

mod record;
mod report;
mod realswap;
mod guard;
mod export;
mod serve;
