//! Generates the Tauri context and the app's own permission set: with an app
//! manifest each command needs an explicit `allow-<command>` permission in
//! `capabilities/`, so the web view can call nothing it was not granted.

/// Every `#[tauri::command]` in `src/cmd.rs`.
const COMMANDS: &[&str] = &[
    "snapshot",
    "history",
    "process",
    "pin",
    "reset_baseline",
    "start_recording",
    "stop_recording",
    "recordings",
    "replay",
    "report",
    "open_trace",
    "export_recording",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri-build failed: {e:#}");
    }
}
