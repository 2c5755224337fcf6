//! Writing a recorded trace where the user chose, in the format they chose:
//! the JSONL trace itself, CSV, Perfetto (Chrome trace JSON) or a PNG chart.
//! Only glue: every format is `swapsight::export::ExportFormat`'s.
//! Shared by the `export_recording` command and the tray's "Export last
//! recording…" item, which both get the destination from a save dialog.

use std::path::{Path, PathBuf};

pub use swapsight::export::ExportFormat;
use swapsight::export::ExportOptions;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::DialogExt;

use crate::window;

/// Writes the trace at `trace` to `out` as `format`, one of
/// [`ExportFormat::UI`]. The export is made whole before `out` is written,
/// so a trace that cannot be read leaves no file (and exporting a trace as
/// JSONL onto itself keeps it).
pub fn export_to(trace: &Path, format: ExportFormat, out: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::error::Error| {
        let why = e.source().map(|s| format!(": {s}")).unwrap_or_default();
        format!(
            "cannot export {} to {}: {e}{why}",
            trace.display(),
            out.display()
        )
    };
    offered(format)?;
    let mut bytes = Vec::with_capacity(64 * 1024);
    format
        .write_file(trace, &ExportOptions::default(), &mut bytes)
        .map_err(|e| fail(&e))?;
    // Whole or not at all, and never through another user's link.
    swapsight::outpath::locate(out)
        .and_then(|place| place.replace_with(|w: &mut dyn std::io::Write| w.write_all(&bytes)))
        .map_err(|e| fail(&e))
}

/// Whether the app offers `format` (those of [`ExportFormat::UI`]).
pub fn offered(format: ExportFormat) -> Result<(), String> {
    if ExportFormat::UI.contains(&format) {
        Ok(())
    } else {
        Err(format!(
            "cannot export as {format}: expected {}",
            ExportFormat::names(&ExportFormat::UI)
        ))
    }
}

/// The destination with the format's extension when the user typed none.
pub fn with_extension(path: PathBuf, format: ExportFormat) -> PathBuf {
    if path.extension().is_some() {
        path
    } else {
        path.with_extension(format.extension())
    }
}

/// A save dialog for exporting `trace`; with `format` its name and filter
/// come first, otherwise every format is offered. `None` when cancelled.
/// The popover stays up meanwhile ([`window::Dialog`]) and gets the focus
/// back after.
pub async fn ask_save_path<R: Runtime>(
    app: &AppHandle<R>,
    trace: &Path,
    format: Option<ExportFormat>,
) -> Option<PathBuf> {
    let first = format.unwrap_or(ExportFormat::Csv);
    let mut dialog = app
        .dialog()
        .file()
        .set_title("Export the recording")
        .set_file_name(first.file_name_for(trace));
    let mut order = vec![first];
    order.extend(ExportFormat::UI.into_iter().filter(|f| *f != first));
    for f in order {
        dialog = dialog.add_filter(f.label(), &[f.extension()]);
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let open = app.state::<window::Mode>().dialog();
    dialog.save_file(move |p| {
        drop(open);
        let _ = tx.send(p);
    });
    let picked = rx.await.ok().flatten();
    window::refocus(app);
    Some(with_extension(picked?.into_path().ok()?, first))
}
