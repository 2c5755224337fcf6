//! The commands the web view may invoke: each translates one [`Live`] method
//! into JSON — the views of `swapsight::answers` and `Live`, the ones
//! `swapsight serve` answers over HTTP — so `ui/js/transport.js` needs no
//! per-transport code beyond the call itself. Errors are strings a UI shows
//! as they are. Only `open_trace` and `export_recording` exist just here:
//! they ask the user for a file with a native dialog (from Rust, so the web
//! view needs no dialog permission); in a browser the UI lists recordings
//! and downloads exports instead.
//!
//! Every command here needs its own `allow-<name>` permission
//! (`build.rs` declares them in the app manifest, `capabilities/default.json`
//! grants them to the main window).

use std::path::PathBuf;
use std::sync::Arc;

use swapsight::answers::{Done, Pinned, ProcessView, Recording, RecordingInfo};
use swapsight::live::{self, Live, Point, Replay, Snapshot};
use swapsight::report::Report;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_dialog::DialogExt;

use crate::export::{self, ExportFormat};
use crate::window;

/// The live session, as the app manages it.
pub type LiveState<'a> = State<'a, Arc<Live>>;

/// Runs blocking work (file reads, reports) off the async runtime's threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| format!("internal error: {e}"))?
}

/// The latest snapshot; `null` before the first tick.
#[tauri::command]
pub fn snapshot(live: LiveState<'_>) -> Option<Snapshot> {
    live.snapshot()
}

/// Chart history of the last `seconds` (all of it when absent).
#[tauri::command]
pub fn history(live: LiveState<'_>, seconds: Option<u64>) -> Vec<Point> {
    live.history(seconds)
}

#[tauri::command]
pub fn process(live: LiveState<'_>, pid: u32) -> Result<ProcessView, String> {
    live.process(pid)
        .map(|(row, series)| ProcessView { row, series })
        .ok_or_else(|| format!("no process {pid} in the table"))
}

/// Pins `pid` (watch its tree, keep it first) or unpins with `null`.
#[tauri::command]
pub fn pin(live: LiveState<'_>, pid: Option<u32>) -> Result<Pinned, String> {
    live.pin(pid).map_err(|e| e.to_string())?;
    Ok(Pinned { pinned: pid })
}

#[tauri::command]
pub fn reset_baseline(live: LiveState<'_>) -> Done {
    live.reset_baseline();
    Done::OK
}

/// Starts recording the whole machine, watching `pid` (or the pinned one).
/// Off the main thread, as the two below: a trace and a marks folder are
/// created, on a disk that may be busy swapping (a synchronous command
/// runs on the main thread, and the menu bar would wait).
#[tauri::command]
pub async fn start_recording(
    live: LiveState<'_>,
    pid: Option<u32>,
) -> Result<RecordingInfo, String> {
    let live = Arc::clone(&live);
    let path = blocking(move || live.start_recording(pid).map_err(|e| e.to_string())).await?;
    log!("recording to {}", path.display());
    Ok(RecordingInfo::started(&path))
}

/// Stops the recording (its marks reader's last look included).
#[tauri::command]
pub async fn stop_recording(live: LiveState<'_>) -> Result<RecordingInfo, String> {
    let live = Arc::clone(&live);
    let (path, samples) =
        blocking(move || live.stop_recording().map_err(|e| e.to_string())).await?;
    log!("recorded {samples} samples to {}", path.display());
    Ok(RecordingInfo::stopped(&path, samples))
}

/// The recordings folder, newest first.
#[tauri::command]
pub async fn recordings(live: LiveState<'_>) -> Result<Vec<Recording>, String> {
    let live = Arc::clone(&live);
    blocking(move || live.recordings().map_err(|e| e.to_string())).await
}

/// Recording `name` shown as the live view shows a session.
#[tauri::command]
pub async fn replay(live: LiveState<'_>, name: String) -> Result<Replay, String> {
    let live = Arc::clone(&live);
    blocking(move || live.replay_recording(&name).map_err(|e| e.to_string())).await
}

/// The report of recording `name`.
#[tauri::command]
pub async fn report(live: LiveState<'_>, name: String) -> Result<Report, String> {
    let live = Arc::clone(&live);
    blocking(move || live.report_recording(&name).map_err(|e| e.to_string())).await
}

/// Asks for a trace file and replays it; `null` when the user cancels.
#[tauri::command]
pub async fn open_trace<R: Runtime>(
    app: AppHandle<R>,
    live: LiveState<'_>,
) -> Result<Option<Replay>, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    // The popover stays up while the panel has the focus.
    let open = app.state::<window::Mode>().dialog();
    app.dialog()
        .file()
        .set_title("Open a swapsight trace")
        .set_directory(live.recordings_dir())
        .add_filter("swapsight trace", &["jsonl"])
        .pick_file(move |p| {
            drop(open);
            let _ = tx.send(p);
        });
    let picked = rx.await.ok().flatten();
    window::refocus(&app);
    let Some(picked) = picked else {
        return Ok(None);
    };
    let path = picked.into_path().map_err(|e| e.to_string())?;
    log!("replaying {}", path.display());
    blocking(move || live::replay(&path).map(Some).map_err(|e| e.to_string())).await
}

/// Asks where to save recording `name` (the last one when absent) as
/// `format`, then writes it; returns the path written, `null` when the user
/// cancels.
#[tauri::command]
pub async fn export_recording<R: Runtime>(
    app: AppHandle<R>,
    live: LiveState<'_>,
    format: ExportFormat,
    name: Option<String>,
) -> Result<Option<PathBuf>, String> {
    export::offered(format)?;
    let trace = match name {
        Some(n) => live.recording(&n).map_err(|e| e.to_string())?,
        None => live
            .last_recording()
            .ok_or("no recording yet: record one first")?,
    };
    let Some(out) = export::ask_save_path(&app, &trace, Some(format)).await else {
        return Ok(None);
    };
    let format = ExportFormat::from_path(&out)
        .filter(|f| ExportFormat::UI.contains(f))
        .unwrap_or(format);
    let written = out.clone();
    blocking(move || export::export_to(&trace, format, &out)).await?;
    log!("exported {} as {format:?}", written.display());
    Ok(Some(written))
}
