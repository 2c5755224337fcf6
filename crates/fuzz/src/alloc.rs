//! A counting allocator: the fuzz runner registers it as the global
//! allocator, so that each input's peak heap use can be checked against a
//! bound ("memory grows with what is kept, not with the bytes read").

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes and their peak.
pub struct Counting;

fn grew(n: usize) {
    let now = CURRENT.fetch_add(n, Relaxed).saturating_add(n);
    PEAK.fetch_max(now, Relaxed);
}

fn shrank(n: usize) {
    CURRENT.fetch_sub(n, Relaxed);
}

// SAFETY: every call is forwarded to `System` with the caller's arguments
// unchanged; the counters are only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc_zeroed`'s contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; `ptr` came from this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// Starts a new measurement: the peak is reset to what is live now, which
/// is returned.
pub fn start() -> usize {
    let now = CURRENT.load(Relaxed);
    PEAK.store(now, Relaxed);
    now
}

/// Highest live heap bytes since [`start`].
pub fn peak() -> usize {
    PEAK.load(Relaxed)
}

/// Whether [`Counting`] is the global allocator of this program (a bound
/// checked without it would hold trivially).
pub fn counting() -> bool {
    let before = CURRENT.load(Relaxed);
    let probe = std::hint::black_box(vec![0u8; 4096]);
    let during = CURRENT.load(Relaxed);
    drop(probe);
    during >= before + 4096
}

/// The largest heap growth of one [`measure`]d call since [`take_case_peak`].
static CASE_PEAK: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` (code under test, not a property check) and records the heap it
/// took at its peak, above what was live before.
pub fn measure<T>(f: impl FnOnce() -> T) -> T {
    let base = start();
    let out = f();
    CASE_PEAK.fetch_max(peak().saturating_sub(base), Relaxed);
    out
}

/// The largest heap growth measured since the last call, and a fresh start.
pub fn take_case_peak() -> usize {
    CASE_PEAK.swap(0, Relaxed)
}
