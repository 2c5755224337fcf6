//! macOS: the kernel's memory pressure the moment it changes, not at the
//! next tick. A `DISPATCH_SOURCE_TYPE_MEMORYPRESSURE` source (libdispatch,
//! through the `dispatch2` crate; XNU `doc/vm/memorystatus_notify.md`) fires
//! on every change of level; its data is the `DISPATCH_MEMORYPRESSURE_*`
//! flag of the new level, the value `kern.memorystatus_vm_pressure_level`
//! answers, read by the same rule (`Level::from_dispatch`). The app then
//! redraws the title and notifies at once; the sampler's next tick carries
//! the same level in its figures.

use std::ffi::c_void;
use std::sync::OnceLock;

use dispatch2::{
    _dispatch_source_type_memorypressure, dispatch_source_memorypressure_flags_t as Flags,
    DispatchObject, DispatchQueue, DispatchQueueGlobalPriority, DispatchRetained, DispatchSource,
    GlobalQueueIdentifier,
};
use swapsight::pressure::Level;

type OnLevel = Box<dyn Fn(Level) + Send + Sync>;

/// The source, kept for the life of the app (dropping it would cancel it).
static SOURCE: OnceLock<DispatchRetained<DispatchSource>> = OnceLock::new();
static ON_LEVEL: OnceLock<OnLevel> = OnceLock::new();

/// The level of the events pending on the source: one flag is that level;
/// flags libdispatch merged are read as the kernel's level now, the latest
/// (`Level::from_dispatch_data`).
fn level_of(data: usize) -> Option<Level> {
    Level::from_dispatch_data(data, swapsight::probe::macos::pressure_level_now)
}

extern "C" fn on_event(_context: *mut c_void) {
    let (Some(source), Some(on_level)) = (SOURCE.get(), ON_LEVEL.get()) else {
        return;
    };
    if let Some(level) = level_of(source.data()) {
        on_level(level);
    }
}

/// Calls `on_level` on a global queue whenever the kernel's pressure level
/// changes. Once per process; later calls do nothing.
pub fn watch_pressure(on_level: impl Fn(Level) + Send + Sync + 'static) {
    if ON_LEVEL.set(Box::new(on_level)).is_err() {
        return;
    }
    let mask = Flags::DISPATCH_MEMORYPRESSURE_NORMAL.0
        | Flags::DISPATCH_MEMORYPRESSURE_WARN.0
        | Flags::DISPATCH_MEMORYPRESSURE_CRITICAL.0;
    let queue = DispatchQueue::global_queue(GlobalQueueIdentifier::Priority(
        DispatchQueueGlobalPriority::Default,
    ));
    // SAFETY: the type is libdispatch's own memory-pressure source type,
    // with handle 0 and a mask of its own flags, as dispatch_source_create(3)
    // asks of it; the queue is a live global queue.
    let source = unsafe {
        DispatchSource::new(
            (&raw const _dispatch_source_type_memorypressure).cast_mut(),
            0,
            mask as usize,
            Some(&queue),
        )
    };
    source.set_event_handler_f(on_event);
    // Sources start suspended: kept first, so that the handler finds it.
    if SOURCE.set(source).is_ok() {
        if let Some(source) = SOURCE.get() {
            source.resume();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pending_flag_reads_as_its_level() {
        assert_eq!(level_of(0x1), Some(Level::Normal));
        assert_eq!(level_of(0x2), Some(Level::Warning));
        assert_eq!(level_of(0x4), Some(Level::Critical));
        assert_eq!(level_of(0x10), None);
        // Merged flags: the kernel's level now, one of those three.
        assert!(level_of(0x4 | 0x1).is_some());
    }
}
