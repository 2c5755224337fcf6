//! How `serve` stops: on Ctrl-C (SIGINT) or SIGTERM — what systemd's
//! `stop` and launchd's `bootout` send — the server stops taking requests
//! (`serve.rs`), then [`finish`] closes a recording started from the UI, so
//! the trace ends on a whole line and a `recording-stop` event rather than
//! wherever the process was cut. One line on stderr says it stopped, as one
//! said it started: a service manager's log shows each run as a pair.

use swapsight::live::{Live, LiveError};

/// Resolves on the first Ctrl-C (SIGINT) or SIGTERM.
pub(crate) async fn stop_signal() {
    let int = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = int => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = int.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = int.await;
    }
}

/// Finishes a recording in progress and returns the one line that says the
/// server stopped. Taking the session's lock to stop the recorder waits for
/// a sample being written, and no sample is written after it.
pub(crate) fn finish(live: &Live) -> String {
    stopped_line(live.stop_recording())
}

fn stopped_line(recording: Result<(std::path::PathBuf, u64), LiveError>) -> String {
    match recording {
        Ok((path, samples)) => format!(
            "swapsight: stopped; finished the recording {} ({samples} samples)",
            path.display()
        ),
        Err(LiveError::NotRecording) => "swapsight: stopped".into(),
        Err(e) => format!("swapsight: stopped; the recording could not be finished: {e}"),
    }
}

#[cfg(test)]
#[path = "signal_tests.rs"]
mod tests;
