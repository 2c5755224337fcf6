//! Linux: everything the probe knows about `/proc`, in one folder.
//!
//! - [`parse`]: pure parsers of the `/proc` files, compiled and tested on
//!   every OS;
//! - [`cgroup`]: the scope of a process — the innermost memory cgroup with a
//!   limit — read from a procfs and cgroupfs mounts given as paths (v1 and
//!   v2), compiled and tested on every OS over fake trees;
//! - `reader`: the probe itself, which only reads (Linux only);
//! - `psi`: the system's memory PSI, read under a procfs root (Linux only);
//! - `fd`: descriptors kept between ticks and the share of the open-file
//!   limit they may take (Linux only);
//! - `tree`: the guard's cheap scan of the process list (Linux only).

pub mod cgroup;
pub mod parse;

#[cfg(target_os = "linux")]
mod fd;
#[cfg(target_os = "linux")]
pub mod psi;
#[cfg(target_os = "linux")]
mod reader;
#[cfg(target_os = "linux")]
mod tree;

#[cfg(target_os = "linux")]
pub use reader::NativeProbe;
#[cfg(target_os = "linux")]
pub use tree::{is_zombie, start_time, TreeScan};
