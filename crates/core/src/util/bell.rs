//! A doorbell: whoever has news rings, and the one loop that acts on it
//! wakes — instead of waking on a timer to look whether anything came.
//!
//! The shell's loop (`record`, `guard`) has several sources of news: a tick
//! from the sampler, marks from the inbox's reader, the command's exit, a
//! signal. Each rings; the loop waits on the bell and then looks at all of
//! them. Rings while nobody waits are kept as one, so news is never missed
//! and a burst costs one wake.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::Duration;

/// The waiting end; see [`bell`].
#[derive(Debug)]
pub struct Bell {
    rings: Receiver<()>,
    /// Held so that the bell never disconnects: with every ringer gone the
    /// wait would otherwise return at once, forever (a busy loop).
    _own: SyncSender<()>,
}

/// The ringing end, cloned for each source of news.
#[derive(Debug, Clone)]
pub struct Ringer(SyncSender<()>);

/// A new bell and a ringer for it.
pub fn bell() -> (Ringer, Bell) {
    let (tx, rx) = mpsc::sync_channel(1);
    (
        Ringer(tx.clone()),
        Bell {
            rings: rx,
            _own: tx,
        },
    )
}

impl Ringer {
    /// Rings; never blocks (a ring already waiting stands for this one).
    pub fn ring(&self) {
        let _ = self.0.try_send(());
    }
}

impl Bell {
    /// Waits until a ring (true) or `timeout` (false); a ring that came
    /// since the last wait returns at once.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.rings.recv_timeout(timeout).is_ok()
    }
}

#[cfg(test)]
#[path = "bell_tests.rs"]
mod tests;
