//! Writing a recorded trace where the user chose, in the format they chose:
//! the JSONL trace itself, CSV, Perfetto (Chrome trace JSON) or a PNG chart.
//! Only glue: every format but the plain copy is `swapsight::export`'s.
//! Shared by the `export_recording` command and the tray's "Export last
//! recording…" item, which both get the destination from a save dialog.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use swapsight::export::{self, plot};
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::DialogExt;

use crate::window;

/// An export format, named as `swapsight serve`'s `?format=` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// The trace itself (a copy).
    Jsonl,
    Csv,
    Perfetto,
    Png,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 4] = [
        ExportFormat::Jsonl,
        ExportFormat::Csv,
        ExportFormat::Perfetto,
        ExportFormat::Png,
    ];

    /// File extension of the format (Perfetto reads `.json`).
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Csv => "csv",
            ExportFormat::Perfetto => "json",
            ExportFormat::Png => "png",
        }
    }

    /// Name of the format in a save dialog's filter list.
    pub fn label(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "swapsight trace (JSON Lines)",
            ExportFormat::Csv => "CSV",
            ExportFormat::Perfetto => "Perfetto / Chrome trace",
            ExportFormat::Png => "PNG chart",
        }
    }

    /// The format a chosen file name asks for, by its extension.
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        ExportFormat::ALL.into_iter().find(|f| f.extension() == ext)
    }

    /// `trace.jsonl` → `trace.csv` (or `trace.json`, `trace.png`).
    pub fn file_name_for(self, trace: &Path) -> String {
        let stem = trace
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("swapsight");
        format!("{stem}.{}", self.extension())
    }
}

/// Writes the trace at `trace` to `out` as `format`.
pub fn export_to(trace: &Path, format: ExportFormat, out: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "cannot export {} to {}: {e}",
            trace.display(),
            out.display()
        )
    };
    if format == ExportFormat::Jsonl {
        if trace != out {
            std::fs::copy(trace, out).map_err(|e| fail(&e))?;
        }
        return Ok(());
    }
    let t = swapsight::trace::read(trace).map_err(|e| fail(&e))?;
    let file = std::fs::File::create(out).map_err(|e| fail(&e))?;
    let mut w = std::io::BufWriter::new(file);
    match format {
        ExportFormat::Csv => {
            export::write(&t, export::Format::Csv, &mut w).map_err(|e| fail(&e))?
        }
        ExportFormat::Perfetto => {
            export::write(&t, export::Format::Perfetto, &mut w).map_err(|e| fail(&e))?
        }
        ExportFormat::Png => {
            let report = swapsight::report::report(&t, None);
            let bytes =
                plot::png(&t, &report, &plot::PlotOptions::default()).map_err(|e| fail(&e))?;
            w.write_all(&bytes).map_err(|e| fail(&e))?;
        }
        ExportFormat::Jsonl => unreachable!("copied above"),
    }
    w.flush().map_err(|e| fail(&e))
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
    order.extend(ExportFormat::ALL.into_iter().filter(|f| *f != first));
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
