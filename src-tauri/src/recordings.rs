//! The recordings folder as the UI sees it: traces listed newest first and
//! named by their plain file name, never by a path the web view could
//! steer outside the folder.

use std::path::{Path, PathBuf};

use serde::Serialize;
use swapsight::live::Live;

/// A trace in the recordings folder.
#[derive(Debug, Serialize, PartialEq)]
pub struct RecordingEntry {
    pub name: String,
    pub bytes: u64,
    pub modified_ms: u64,
}

/// The path of recording `name`: a plain `.jsonl` file name inside the
/// recordings folder, nothing else (no separators, no `..`, no hidden files).
pub fn recording_path(live: &Live, name: &str) -> Result<PathBuf, String> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && name.ends_with(".jsonl");
    if !plain {
        return Err(format!("not a recording name: {name:?}"));
    }
    let path = live.recordings_dir().join(name);
    if !path.is_file() {
        return Err(format!("no recording named {name:?}"));
    }
    Ok(path)
}

/// The recordings folder's traces, newest first.
pub fn list_recordings(dir: &Path) -> Vec<RecordingEntry> {
    let mut v: Vec<RecordingEntry> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let meta = e.metadata().ok()?;
            if !meta.is_file() || !name.ends_with(".jsonl") || name.starts_with('.') {
                return None;
            }
            let modified_ms = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            Some(RecordingEntry {
                name,
                bytes: meta.len(),
                modified_ms,
            })
        })
        .collect();
    v.sort_by(|a, b| {
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| b.name.cmp(&a.name))
    });
    v
}
