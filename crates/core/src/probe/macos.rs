//! macOS: everything the probe knows about the Mach and BSD answers, in one
//! folder.
//!
//! - [`parse`] and [`parse_process`]: pure conversions of the kernel's bytes
//!   and integers, system-wide and per process, and
//!   [`cache`]: what the probe keeps between ticks — all compiled and
//!   tested on every OS, so Linux runs cover the macOS arithmetic;
//! - `reader`: the probe itself, `table`: its process list (the guard's
//!   scan too), and `ffi`: their raw calls, each a few
//!   plain lines behind a safe function (macOS only; `scripts/check-macos`
//!   type-checks them).

pub mod cache;
pub mod parse;
pub mod parse_process;

#[cfg(target_os = "macos")]
mod ffi;
#[cfg(target_os = "macos")]
mod reader;
#[cfg(target_os = "macos")]
mod table;

#[cfg(target_os = "macos")]
pub use reader::NativeProbe;

/// The kernel's pressure level now (`kern.memorystatus_vm_pressure_level`);
/// `None` when it does not answer.
#[cfg(target_os = "macos")]
pub fn pressure_level_now() -> Option<crate::probe::pressure::Level> {
    reader::pressure_level().ok()
}
#[cfg(target_os = "macos")]
pub use table::{start_time, TreeScan};
