//! The recordings folder, the one place a UI reads traces from by name — for
//! the menu-bar app and `swapsight serve` alike. A recording is named, never
//! pathed: `[A-Za-z0-9._-]+\.jsonl`, not hidden (no leading `.`), no `..`,
//! no separator; it must be a regular file directly in the folder (a
//! symlink is not followed), so no name a UI sends reaches a file outside
//! it. Also where recordings go and
//! what a new one is called.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;

/// One recording in the folder, as a UI lists it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Recording {
    pub(crate) name: String,
    pub(crate) bytes: u64,
    /// Last modification, Unix time in milliseconds.
    pub modified_ms: u64,
}

/// Why a recording cannot be named, found or listed; the words are a UI's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// The name is not one a recording may have.
    #[error(
        "bad recording name '{}': expected a file name like swapsight-20250101-120000.jsonl \
         (letters, digits, . _ -, ending in .jsonl)",
        .0.escape_default()
    )]
    BadName(String),
    /// No recording of that name is in the folder.
    #[error("no recording named {0}")]
    NotFound(String),
    /// The folder could not be read.
    #[error("cannot list the recordings folder: {0}")]
    List(#[source] std::io::Error),
}

/// Longest name accepted (most file systems stop at 255 bytes).
const MAX_NAME: usize = 255;

/// Whether `name` is a recording name: `[A-Za-z0-9._-]+\.jsonl`, no
/// leading `.`, no `..`.
pub fn valid_name(name: &str) -> bool {
    let stem_ok = name
        .strip_suffix(".jsonl")
        .is_some_and(|stem| !stem.is_empty() && !stem.starts_with('.'));
    stem_ok
        && name.len() <= MAX_NAME
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The path of recording `name` in `dir`: a valid name of a regular file
/// there (not a symlink).
pub fn resolve(dir: &Path, name: &str) -> Result<PathBuf, RecordingError> {
    if !valid_name(name) {
        return Err(RecordingError::BadName(name.to_owned()));
    }
    let path = dir.join(name);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() => Ok(path),
        _ => Err(RecordingError::NotFound(name.to_owned())),
    }
}

/// The recordings in `dir`, newest first; other files are left out, and a
/// folder not made yet holds none.
pub fn list(dir: &Path) -> Result<Vec<Recording>, RecordingError> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(RecordingError::List(e)),
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
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        out.push(Recording {
            name,
            bytes: meta.len(),
            modified_ms,
        });
    }
    out.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(b.name.cmp(&a.name)));
    Ok(out)
}

/// A recording's name in its folder: what a UI shows of a path.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `swapsight-20261129-175645.jsonl` (UTC) in `dir`; `…-175645-2.jsonl`
/// and so on when a trace of that second exists already, so a recording
/// started right after another never overwrites it.
pub fn default_trace_path(dir: &Path, unix_ms: u64) -> PathBuf {
    let secs = unix_ms / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    let stem = format!(
        "swapsight-{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    );
    let mut path = dir.join(format!("{stem}.jsonl"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.jsonl"));
        n += 1;
    }
    path
}

/// Where recordings go by default — the same folder for `serve` and the
/// menu-bar app: `swapsight-recordings` under the data dir (`$XDG_DATA_HOME`
/// or `~/.local/share`; `~/Library/Application Support` on macOS).
pub fn default_recordings_dir() -> PathBuf {
    data_dir().join("swapsight-recordings")
}

/// The data folder under the home folder on macOS (elsewhere
/// `$XDG_DATA_HOME` or `~/.local/share`): tests and tools that lay files
/// out for swapsight name it from here, not by hand.
pub const MACOS_DATA_DIR: &str = "Library/Application Support";

/// The user's data folder: `$XDG_DATA_HOME` (where absolute) or
/// `~/.local/share`; `~/Library/Application Support` on macOS; `.`
/// without a home.
pub fn data_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let data = if cfg!(target_os = "macos") {
        home.map(|h| h.join(MACOS_DATA_DIR))
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .filter(|d| Path::new(d).is_absolute())
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".local/share")))
    };
    data.unwrap_or_else(|| PathBuf::from("."))
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
#[path = "recordings_tests.rs"]
mod tests;
