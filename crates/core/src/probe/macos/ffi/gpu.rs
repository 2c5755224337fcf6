//! The raw calls behind the GPU's figures: IOKit's `IOAccelerator`
//! services and Metal's default device, each a few plain lines behind a
//! safe function. Every IOKit handle and CoreFoundation object is released
//! when dropped (`IoObject`, `CFRetained`); the numbers come back
//! unconverted, for [`parse::gpu_memory`](super::super::parse::gpu_memory)
//! and [`parse::working_set_bytes`](super::super::parse::working_set_bytes),
//! which the Linux tests cover.

use std::ptr::{self, NonNull};

use objc2_core_foundation::{
    CFDictionary, CFMutableDictionary, CFNumber, CFRetained, CFString, CFType,
};
use objc2_io_kit::{
    io_iterator_t, io_object_t, IOIteratorNext, IOObjectRelease, IORegistryEntryCreateCFProperties,
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

/// A service's property table: `IORegistryEntryCreateCFProperties` (a
/// snapshot, released when dropped); `None` on failure.
fn properties(service: &IoObject) -> Option<CFRetained<CFDictionary<CFString, CFType>>> {
    let mut table: *mut CFMutableDictionary = ptr::null_mut();
    // SAFETY: `table` is a live out-pointer; a null allocator is the
    // default one; no options are defined.
    let kr = unsafe { IORegistryEntryCreateCFProperties(service.0, &mut table, None, 0) };
    let table = NonNull::new(table).filter(|_| kr == libc::KERN_SUCCESS)?;
    // SAFETY: the call created the dictionary for us (one reference, now
    // owned), with CoreFoundation's type callbacks: its keys are the
    // properties' names (CFString) and its values CF objects. Looking a
    // CFString up in it is sound whatever its keys are (CFEqual compares
    // across types), and each value is a CFType.
    Some(unsafe { CFRetained::from_raw(table.cast()) })
}

/// The whole-number values of `keys` in one service's
/// `PerformanceStatistics` dictionary; a key that is absent or not a
/// `CFNumber` that fits an `i64` is left out.
fn statistics(service: &IoObject, keys: &[&'static str]) -> Vec<(&'static str, i64)> {
    let Some(table) = properties(service) else {
        return Vec::new();
    };
    let Some(stats) = table
        .get(&CFString::from_static_str(PERFORMANCE_STATISTICS))
        .and_then(|v| v.downcast::<CFDictionary>().ok())
    else {
        return Vec::new();
    };
    // SAFETY: as in `properties`: a dictionary of the registry, looked up
    // by CFString, whose values are CF objects.
    let stats = unsafe { CFRetained::cast_unchecked::<CFDictionary<CFString, CFType>>(stats) };
    keys.iter()
        .filter_map(|&key| {
            let value = stats.get(&CFString::from_static_str(key))?;
            Some((key, value.downcast::<CFNumber>().ok()?.as_i64()?))
        })
        .collect()
}

/// `keys` of each accelerator's `PerformanceStatistics`, one list per
/// service (empty when there is none). The same registry reading as
/// cemlyn007/apple-gpu (`apple_gpu/_src.py`) and `ioreg -r -c
/// IOAccelerator`.
pub fn accelerator_statistics(keys: &[&'static str]) -> Vec<Vec<(&'static str, i64)>> {
    let Some(iterator) = accelerators() else {
        return Vec::new();
    };
    let mut all = Vec::new();
    loop {
        let service = IOIteratorNext(iterator.0);
        if service == 0 {
            break;
        }
        let service = IoObject(service);
        all.push(statistics(&service, keys));
    }
    all
}

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
