//! The push to Prometheus remote write as the app runs it: the same
//! pusher as `swapsight serve --push` (`swapsight_push`), over the app's
//! own session, started at launch when the settings file enables it
//! ([`crate::settings`]), toggled from the tray. Off by default: nothing
//! leaves the machine unless the user named a receiver and turned it on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use swapsight::export::prometheus::DEFAULT_MAX_PROCESSES;
use swapsight::live::Live;
use swapsight_push::{Metrics, Pusher};

use crate::settings;

/// The push's words in the tray's menu before the state.
const LABEL: &str = "Push to Prometheus";

/// The push of the app; managed state.
pub struct Push {
    /// The settings file.
    path: PathBuf,
    running: Mutex<Option<Running>>,
}

struct Running {
    pusher: Pusher,
    metrics: Metrics,
    /// Where it goes, as the menu says it: the URL's host and port.
    host: String,
}

impl Push {
    /// Off, with its settings in the file at `path`.
    pub fn new(path: PathBuf) -> Push {
        Push {
            path,
            running: Mutex::new(None),
        }
    }

    /// The settings file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the push when the file enables it; a bad file is said once
    /// and the push stays off.
    pub fn start_if_enabled(&self, live: &Arc<Live>) {
        match settings::read_push(&self.path) {
            Ok(p) if p.enabled => {
                if let Err(why) = self.start(p, live) {
                    log!("push to Prometheus stays off: {why}");
                }
            }
            Ok(_) => {}
            Err(why) => log!("push to Prometheus stays off: {why}"),
        }
    }

    /// Starts the push the settings say (their `enabled` aside).
    fn start(&self, p: settings::Push, live: &Arc<Live>) -> Result<(), String> {
        let Some(s) = p.settings else {
            return Err(format!("no push.url in {}", self.path.display()));
        };
        // Credentials come from the settings' file only: the app is not
        // started from a shell whose environment the user set.
        let config = s.config(None).map_err(|why| in_settings_words(&why))?;
        let mut pusher = Pusher::new(config);
        let metrics = pusher.metrics();
        let live = Arc::clone(live);
        pusher.start(move || live.prometheus(DEFAULT_MAX_PROCESSES));
        let host = swapsight_push::host_of(&s.url).unwrap_or(s.url);
        let old = self.lock().replace(Running {
            pusher,
            metrics,
            host,
        });
        if let Some(old) = old {
            old.pusher.finish();
        }
        Ok(())
    }

    /// Stops it, sending what the queue holds for up to 5 s (the app is
    /// quitting: the file keeps `enabled` as it is, for the next launch).
    pub fn finish(&self) {
        let running = self.lock().take();
        if let Some(r) = running {
            r.pusher.finish();
        }
    }

    /// Whether it runs now.
    pub fn is_on(&self) -> bool {
        self.lock().is_some()
    }

    /// Turns it on (from the file as it is now: the user may have edited
    /// it) or off, and writes `enabled` back to the file. Stopping sends
    /// what the queue holds for up to 5 s: call it off the main thread.
    pub fn toggle(&self, live: &Arc<Live>) {
        // Taken in a statement of its own: the guard of an `if let`'s
        // scrutinee lives through both branches (edition 2021), and start
        // locks again.
        let running = self.lock().take();
        let on = if let Some(r) = running {
            r.pusher.finish();
            log!("push to Prometheus: off");
            false
        } else {
            match settings::read_push(&self.path).and_then(|p| self.start(p, live)) {
                Ok(()) => true,
                Err(why) => {
                    log!("push to Prometheus stays off: {why}");
                    return;
                }
            }
        };
        if let Err(why) = settings::write_push_enabled(&self.path, on) {
            log!("the push is {}, but {why}", if on { "on" } else { "off" });
        }
    }

    /// The tray's words: off, on (to where) or failing (why).
    pub fn label(&self) -> String {
        match &*self.lock() {
            None => format!("{LABEL}: off"),
            Some(r) => match r.metrics.trouble() {
                None => format!("{LABEL}: on → {}", r.host),
                Some(why) => format!("{LABEL}: failing: {why}"),
            },
        }
    }
}

/// The push crate's words name the CLI's flags; the app's user wrote keys.
fn in_settings_words(why: &str) -> String {
    why.replace("--push-auth-file", "push.auth_file")
        .replace("--push-ca", "push.ca")
}

#[cfg(test)]
#[path = "push_tests.rs"]
mod tests;
