//! The recordings folder, the only place the API reads traces from. A
//! recording is named, never pathed: `[A-Za-z0-9._-]+\.jsonl`, no `..`, no
//! separator; the file must be a regular file directly in the folder (a
//! symlink is not followed), so no request reaches a path outside it.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;

use super::api::{ApiError, ApiResult};

/// One recording in the folder.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Recording {
    pub name: String,
    pub bytes: u64,
    /// Last modification, Unix time in milliseconds.
    pub modified_ms: u64,
}

/// Longest name accepted (most file systems stop at 255 bytes).
const MAX_NAME: usize = 255;

/// Whether `name` is a recording name: `[A-Za-z0-9._-]+\.jsonl`, no `..`.
pub fn valid_name(name: &str) -> bool {
    let stem_ok = name
        .strip_suffix(".jsonl")
        .is_some_and(|stem| !stem.is_empty());
    stem_ok
        && name.len() <= MAX_NAME
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The path of recording `name` in `dir`: 400 for a bad name, 404 when no
/// such regular file is there.
pub fn resolve(dir: &Path, name: &str) -> ApiResult<PathBuf> {
    if !valid_name(name) {
        return Err(ApiError::bad_request(format!(
            "bad recording name '{}': expected a file name like swapsight-20250101-120000.jsonl \
             (letters, digits, . _ -, ending in .jsonl)",
            name.escape_default()
        )));
    }
    let path = dir.join(name);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() => Ok(path),
        _ => Err(ApiError::not_found(format!("no recording named {name}"))),
    }
}

/// The recordings in `dir`, newest first; other files are left out.
pub fn list(dir: &Path) -> std::io::Result<Vec<Recording>> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !valid_name(&name) {
            continue;
        }
        // DirEntry::metadata does not follow symlinks.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.file_type().is_file() {
            continue;
        }
        let modified_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as u64);
        out.push(Recording {
            name,
            bytes: meta.len(),
            modified_ms,
        });
    }
    out.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(b.name.cmp(&a.name)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn recording_names() {
        for ok in [
            "swapsight-20250101-120000.jsonl",
            "a.jsonl",
            "A_b-c.d.jsonl",
        ] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "../etc/passwd",
            "..jsonl",
            "a/b.jsonl",
            "a\\b.jsonl",
            "x.txt",
            ".jsonl",
            "a..b.jsonl",
            "a b.jsonl",
            "a.jsonl\0",
            "é.jsonl",
            "a.JSONL",
            "",
            "/etc/x.jsonl",
        ] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        assert!(!valid_name(&format!("{}.jsonl", "a".repeat(251))));
        assert!(valid_name(&format!("{}.jsonl", "a".repeat(249))));
    }
}
