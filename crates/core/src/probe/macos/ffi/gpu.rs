//! The raw calls behind the GPU's figures: IOKit's `IOAccelerator`
//! services and Metal's default device, each a few plain lines behind a
//! safe function. Every IOKit handle and CoreFoundation object is released
//! when dropped (`IoObject`, `CFRetained`); the numbers come back
//! unconverted, for [`parse::gpu_memory`](super::super::parse::gpu_memory)
//! and [`parse::working_set_bytes`](super::super::parse::working_set_bytes),
//! which the Linux tests cover.

use objc2_core_foundation::{CFDictionary, CFNumber, CFRetained, CFString, CFType};
use objc2_io_kit::{
    io_iterator_t, io_object_t, IOIteratorNext, IOObjectRelease, IORegistryEntryCreateCFProperty,
    IOServiceGetMatchingServices, IOServiceMatching,
};
use objc2_metal::MTLDevice;

/// `kIOMainPortDefault`, which `<IOKit/IOKitLib.h>` defines as
/// `MACH_PORT_NULL` ("the NULL argument indicates 'use the default'").
/// The value is passed rather than the symbol, which exists only from
/// macOS 12 and would keep the binary from loading on older systems.
const MAIN_PORT_DEFAULT: libc::mach_port_t = 0;

/// The `PerformanceStatistics` property of an accelerator service.
const PERFORMANCE_STATISTICS: &str = "PerformanceStatistics";

/// An IOKit handle (an iterator or a service), released when dropped.
struct IoObject(io_object_t);

impl Drop for IoObject {
    fn drop(&mut self) {
        // The result is ignored: nothing can be done about a failure here.
        IOObjectRelease(self.0);
    }
}

/// The registered services of class `IOAccelerator` (and its subclasses,
/// `AGXAccelerator…` on Apple Silicon): `IOServiceGetMatchingServices` of
/// `IOServiceMatching("IOAccelerator")`. `None` when the call fails or
/// nothing matches.
fn accelerators() -> Option<IoObject> {
    // SAFETY: a NUL-terminated class name; the dictionary comes back
    // retained (`CFRetained`).
    let matching = unsafe { IOServiceMatching(c"IOAccelerator".as_ptr()) }?;
    // SAFETY: a mutable dictionary is a dictionary (CFMutableDictionary is
    // its subclass); only the static type changes.
    let matching = unsafe { CFRetained::cast_unchecked::<CFDictionary>(matching) };
    let mut iterator: io_iterator_t = 0;
    // SAFETY: the call consumes the dictionary's one reference (it is moved
    // in) and writes the iterator to a live local.
    let kr =
        unsafe { IOServiceGetMatchingServices(MAIN_PORT_DEFAULT, Some(matching), &mut iterator) };
    (kr == libc::KERN_SUCCESS && iterator != 0).then_some(IoObject(iterator))
}

/// A service's `PerformanceStatistics` dictionary alone:
/// `IORegistryEntryCreateCFProperty` of that one key (a snapshot, released
/// when dropped), not the whole property table (`…CFProperties`, which
/// copied every property of the accelerator each second: ~2 ms against
/// ~0.02 ms for one key, as SiliconScope measured); `None` when the
/// service has no such dictionary (or is gone).
fn performance_statistics(
    service: &IoObject,
) -> Option<CFRetained<CFDictionary<CFString, CFType>>> {
    let key = CFString::from_static_str(PERFORMANCE_STATISTICS);
    // SAFETY: a live registry entry, a CFString key, the default allocator
    // (None), no options; the value comes back retained (`CFRetained`).
    let value = unsafe { IORegistryEntryCreateCFProperty(service.0, Some(&key), None, 0) }?;
    let stats = value.downcast::<CFDictionary>().ok()?;
    // SAFETY: a dictionary of the registry, made with CoreFoundation's type
    // callbacks: looking a CFString up in it is sound whatever its keys
    // are (CFEqual compares across types), and each value is a CF object.
    Some(unsafe { CFRetained::cast_unchecked::<CFDictionary<CFString, CFType>>(stats) })
}

/// The whole-number values of `keys` in one service's
/// `PerformanceStatistics` dictionary; a key that is absent or not a
/// `CFNumber` that fits an `i64` is left out. `None` when the service gave
/// no dictionary.
fn statistics(service: &IoObject, keys: &[&'static str]) -> Option<Vec<(&'static str, i64)>> {
    let stats = performance_statistics(service)?;
    Some(
        keys.iter()
            .filter_map(|&key| {
                let value = stats.get(&CFString::from_static_str(key))?;
                Some((key, value.downcast::<CFNumber>().ok()?.as_i64()?))
            })
            .collect(),
    )
}

/// The accelerator services, found once and kept between reads (each an
/// IOKit handle, released when dropped): the registry is searched again
/// only when a kept service gives no statistics (a GPU gone or restarted)
/// or none was found.
#[derive(Default)]
pub struct Accelerators {
    services: Vec<IoObject>,
}

impl Accelerators {
    /// `keys` of each accelerator's `PerformanceStatistics`, one list per
    /// service (empty when there is none). The same registry reading as
    /// cemlyn007/apple-gpu (`apple_gpu/_src.py`) and `ioreg -r -c
    /// IOAccelerator`.
    pub fn statistics(&mut self, keys: &[&'static str]) -> Vec<Vec<(&'static str, i64)>> {
        if let Some(all) = self.read(keys) {
            return all;
        }
        self.services = find_accelerators();
        self.read(keys).unwrap_or_default()
    }

    /// Each kept service's statistics; `None` when there is no service or
    /// one of them gave none.
    fn read(&self, keys: &[&'static str]) -> Option<Vec<Vec<(&'static str, i64)>>> {
        if self.services.is_empty() {
            return None;
        }
        self.services.iter().map(|s| statistics(s, keys)).collect()
    }
}

/// Every service `accelerators()` matches, each kept.
fn find_accelerators() -> Vec<IoObject> {
    let Some(iterator) = accelerators() else {
        return Vec::new();
    };
    let mut all = Vec::new();
    loop {
        let service = IOIteratorNext(iterator.0);
        if service == 0 {
            break;
        }
        all.push(IoObject(service));
    }
    all
}

// Without CoreGraphics linked, `MTLCreateSystemDefaultDevice` returns nil in
// a process that does not draw — the CLI and the wheel's binary; the app
// links it through AppKit (Apple's docs of the function; objc2-metal's
// crate docs).
#[link(name = "CoreGraphics", kind = "framework")]
extern "C" {}

/// Metal's `recommendedMaxWorkingSetSize` of `MTLCreateSystemDefaultDevice()`
/// (the device is released on return); `None` without a Metal device.
///
/// Only for Apple Silicon: on an Intel Mac with two GPUs, creating the
/// default device switches the machine to the discrete one (Apple's note
/// on `MTLCreateSystemDefaultDevice`), which a monitor must not do. An
/// autorelease pool holds whatever Metal autoreleases, since the probe
/// runs on threads that have none.
pub fn recommended_working_set() -> Option<u64> {
    objc2::rc::autoreleasepool(|_| {
        let device = objc2_metal::MTLCreateSystemDefaultDevice()?;
        Some(device.recommendedMaxWorkingSetSize())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::macos::parse::GPU_KEYS;

    /// On a Mac the accelerators are found once and kept: a second read
    /// reads the same services (the same handles), one list each.
    #[test]
    fn the_services_are_found_once_and_kept() {
        let mut a = Accelerators::default();
        let first = a.statistics(&GPU_KEYS);
        let kept: Vec<io_object_t> = a.services.iter().map(|s| s.0).collect();
        let second = a.statistics(&GPU_KEYS);
        assert_eq!(first.len(), second.len());
        assert_eq!(first.len(), kept.len());
        assert_eq!(kept, a.services.iter().map(|s| s.0).collect::<Vec<_>>());
    }
}
