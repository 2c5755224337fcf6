//! What a loader would read of a model: its weight files, counted by their
//! size on disk (the file's length, so a sparse file counts what it says it
//! holds), with each file left out said and why.
//!
//! The rules, per folder (docs/fit.md has them with examples):
//!
//! - Weights are `*.safetensors`, `*.gguf`, `*.bin`, `*.pt`, `*.pth` and
//!   `*.npz`; training state (`optimizer.pt`, `scheduler.pt`,
//!   `rng_state*.pth`, `training_args.bin`) is not.
//! - An index (`model.safetensors.index.json`, any `*.safetensors.index.json`
//!   or `*.bin.index.json`) decides which files of its kind count: the
//!   shards its `weight_map` names. A shard it does not name is left out; one
//!   it names that is not there is said missing.
//! - `.bin` beside `.safetensors` in the same folder is left out: loaders
//!   (transformers, diffusers) read the safetensors.
//! - A folder with weights of its own leaves out the weights of its
//!   subfolders: they are other copies (Meta's `original/`, `onnx/`,
//!   `openvino/`) or a pipeline's parts beside a single-file checkpoint.
//!   A folder without weights (a diffusers pipeline) counts its subfolders'.
//! - Hidden folders (`.git`, `.cache`) are not looked into.
//! - A link to a file counts by its target's size, once per target (Hugging
//!   Face's cache links `snapshots/<rev>/x.safetensors` to
//!   `../../blobs/<sha>`); a link to a folder is not followed.
//! - A Hugging Face cache folder (`models--org--name`, with `snapshots/`)
//!   counts the snapshot `refs/main` names.
//!
//! The walk is bounded: [`WalkLimits`] caps its depth, the entries it looks
//! at and the size of an index it reads. An entry it cannot read is a note,
//! not an error, except the folder it was given.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::util::text::clean;

mod hf;
mod kinds;
use hf::{hf_cache_snapshot, index_kind, read_index, ByKind};
pub use kinds::WEIGHT_EXTENSIONS;
use kinds::{file_id, is_split_gguf, is_training_state, not_a_file, weights_ext};

/// Notes of one kind said one by one; past it, how many more.
const NOTED: usize = 10;

/// How far the walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimits {
    /// Folders below the one given that are looked into.
    pub max_depth: usize,
    /// Entries (files and folders) looked at in all; past it the walk stops
    /// with an error rather than answer on part of a folder.
    pub max_entries: usize,
    /// Largest index file read: real ones are well under 1 MiB even for
    /// models of hundreds of shards.
    pub max_index_bytes: u64,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_depth: 8,
            max_entries: 100_000,
            max_index_bytes: 32 << 20,
        }
    }
}

/// One file counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WeightFile {
    /// Relative to the path given (the file's name when a file was given).
    pub path: String,
    pub(crate) bytes: u64,
    /// Where a link points, as it is written (`../../blobs/<sha>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// One weights file not counted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    pub(crate) path: String,
    pub(crate) bytes: u64,
    pub(crate) why: String,
}

/// What was counted of a model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Weights {
    /// The path as given.
    pub path: String,
    /// Σ of `files`.
    pub bytes: u64,
    pub(crate) files: Vec<WeightFile>,
    pub(crate) left_out: Vec<LeftOut>,
    /// Shards an index names that are not there: the loader would fail.
    pub missing: Vec<String>,
    /// The index files that decided what counted.
    pub indexes: Vec<String>,
    /// What else the walk says: entries it could not read, folders it did
    /// not look into.
    pub notes: Vec<String>,
}

/// Why a model's weights could not be counted.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// A file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path, cleaned.
        path: String,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The path is something else (a device, a socket).
    #[error("{path} is neither a file nor a folder")]
    NotFileOrFolder {
        /// The path as given, cleaned.
        path: String,
    },
    /// The walk met more entries than [`WalkLimits::max_entries`].
    #[error("{path}: more than {max} files and folders: not a model's folder? (give the model's own folder, a file, or a size)")]
    TooMany {
        /// The path as given, cleaned.
        path: String,
        /// The limit it passed.
        max: usize,
    },
    /// A shard index (`*.index.json`) could not be read or does not parse.
    #[error("{path}: {why}")]
    BadIndex {
        /// The index file, cleaned.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// No weights file was counted.
    #[error("no model weights counted in {path}: {why}")]
    Nothing {
        /// The path as given, cleaned.
        path: String,
        /// What the walk found instead: files left out, or no file of a
        /// weights extension.
        why: String,
    },
}

fn shown(p: &Path) -> String {
    clean(&p.to_string_lossy()).into_owned()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WeightsError + '_ {
    move |source| WeightsError::Io {
        path: shown(path),
        source,
    }
}

/// Counts the weights at `path`: a file (counted whatever its name) or a
/// folder (walked by the rules above).
pub fn count_weights(path: &Path, limits: WalkLimits) -> Result<Weights, WeightsError> {
    let meta = fs::metadata(path).map_err(io(path))?;
    let mut walk = Walk {
        limits,
        entries: 0,
        seen: HashSet::new(),
        out: Weights {
            path: shown(path),
            ..Weights::default()
        },
    };
    if meta.is_file() {
        let name = path
            .file_name()
            .map_or_else(|| shown(path), |n| shown(Path::new(n)));
        if weights_ext(&name).is_none() {
            walk.out.notes.push(format!(
                "{name} has no weights ending swapsight knows ({}): counted as given",
                WEIGHT_EXTENSIONS.map(|e| format!("*.{e}")).join(", ")
            ));
        }
        let link = fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.file_type().is_symlink())
            .and_then(|_| fs::read_link(path).ok())
            .map(|t| shown(&t));
        walk.out.bytes = meta.len();
        walk.out.files.push(WeightFile {
            path: name,
            bytes: meta.len(),
            link,
        });
        return Ok(walk.out);
    }
    if !meta.is_dir() {
        return Err(WeightsError::NotFileOrFolder { path: shown(path) });
    }
    let (start, prefix) = hf_cache_snapshot(path, &mut walk.out.notes);
    walk.folder(&start, &prefix, 0, false)?;
    let out = walk.out;
    if out.files.is_empty() {
        let why = match out.left_out.first() {
            Some(l) => format!(
                "{} weights file(s) left out ({}: {})",
                out.left_out.len(),
                l.path,
                l.why
            ),
            None => format!(
                "no {} file",
                WEIGHT_EXTENSIONS.map(|e| format!("*.{e}")).join(", ")
            ),
        };
        return Err(WeightsError::Nothing {
            path: out.path,
            why,
        });
    }
    Ok(out)
}

struct Walk {
    limits: WalkLimits,
    entries: usize,
    seen: HashSet<(u64, u64)>,
    out: Weights,
}

/// A file with a weights ending found in a folder.
struct Found {
    name: String,
    ext: &'static str,
    bytes: u64,
    id: Option<(u64, u64)>,
    link: Option<String>,
}

/// What one folder holds, read once.
#[derive(Default)]
struct Listing {
    found: Vec<Found>,
    indexes: Vec<(String, &'static str, PathBuf)>,
    subfolders: Vec<(String, PathBuf)>,
}

impl Walk {
    fn note(&mut self, s: String) {
        self.out.notes.push(s);
    }

    fn list(
        &mut self,
        dir: &Path,
        rel: &Path,
        depth: usize,
    ) -> Result<Option<Listing>, WeightsError> {
        let read = match fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) if depth == 0 => return Err(io(dir)(e)),
            Err(e) => {
                self.note(format!("cannot read {}: {e} (not counted)", shown(rel)));
                return Ok(None);
            }
        };
        let mut l = Listing::default();
        for entry in read {
            self.entries += 1;
            if self.entries > self.limits.max_entries {
                return Err(WeightsError::TooMany {
                    path: self.out.path.clone(),
                    max: self.limits.max_entries,
                });
            }
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    self.note(format!("cannot read an entry of {}: {e}", shown(rel)));
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let here = rel.join(&name);
            let Ok(kind) = entry.file_type() else {
                self.note(format!("cannot read {} (not counted)", shown(&here)));
                continue;
            };
            if kind.is_dir() {
                if name.starts_with('.') {
                    self.note(format!("{} not looked into (hidden)", shown(&here)));
                } else {
                    l.subfolders.push((name, path));
                }
                continue;
            }
            if let Some(k) = index_kind(&name) {
                l.indexes.push((name, k, path));
                continue;
            }
            let Some(ext) = weights_ext(&name) else {
                continue;
            };
            let link = kind
                .is_symlink()
                .then(|| fs::read_link(&path).map_or_else(|_| "?".into(), |t| shown(&t)));
            match fs::metadata(&path) {
                Ok(m) if m.is_file() => l.found.push(Found {
                    name,
                    ext,
                    bytes: m.len(),
                    id: file_id(&m),
                    link,
                }),
                Ok(m) if m.is_dir() => {
                    self.note(format!("{} links to a folder: not followed", shown(&here)))
                }
                Ok(m) => self.note(format!(
                    "{} is {}, not a file: not read",
                    shown(&here),
                    not_a_file(&m.file_type())
                )),
                Err(e) => self.out.left_out.push(LeftOut {
                    path: shown(&here),
                    bytes: 0,
                    why: format!("cannot be read: {e}"),
                }),
            }
        }
        l.found.sort_by(|a, b| a.name.cmp(&b.name));
        l.indexes.sort();
        l.subfolders.sort();
        Ok(Some(l))
    }

    /// The shards each index names, by the kind it governs.
    fn read_indexes(&mut self, l: &Listing, rel: &Path) -> Result<ByKind, WeightsError> {
        let mut named = ByKind::new();
        for (name, kind, path) in &l.indexes {
            let shown_index = shown(&rel.join(name));
            let shards = read_index(path, &shown_index, self.limits.max_index_bytes)?;
            let entry = named.entry(kind).or_default();
            entry.indexes.push(name.clone());
            let mut outside = 0usize;
            for s in shards {
                if s.contains(['/', '\\']) || s == ".." {
                    // A hostile index can name a million: the first few
                    // are said, the rest counted.
                    outside += 1;
                    if outside <= NOTED {
                        self.note(format!(
                            "{shown_index} names {}, outside its folder: not counted",
                            clean(&s)
                        ));
                    }
                } else {
                    entry.shards.insert(s);
                }
            }
            if outside > NOTED {
                self.note(format!(
                    "{shown_index} names {} more shards outside its folder: not counted",
                    outside - NOTED
                ));
            }
            self.out.indexes.push(shown_index);
        }
        Ok(named)
    }

    fn folder(
        &mut self,
        dir: &Path,
        rel: &Path,
        depth: usize,
        weights_above: bool,
    ) -> Result<(), WeightsError> {
        let Some(l) = self.list(dir, rel, depth)? else {
            return Ok(());
        };
        let named = self.read_indexes(&l, rel)?;
        let has_safetensors = l.found.iter().any(|f| {
            f.ext == "safetensors"
                && named
                    .get("safetensors")
                    .map_or(true, |n| n.shards.contains(&f.name))
        });
        let mut counted_here = 0;
        let mut ggufs = 0;
        for f in &l.found {
            let path = shown(&rel.join(&f.name));
            let why = if is_training_state(&f.name) {
                Some("a trainer's state, not weights".to_string())
            } else if weights_above {
                Some("below a folder with weights of its own: another copy (original/, onnx/…) or a pipeline's part beside a single-file checkpoint; give its own folder to count it".to_string())
            } else if let Some(n) = named.get(f.ext).filter(|n| !n.shards.contains(&f.name)) {
                Some(format!("not named by {}", n.indexes.join(", ")))
            } else if f.ext == "bin" && has_safetensors {
                Some("a .safetensors copy is beside it: loaders read that one".to_string())
            } else if f.id.is_some_and(|id| !self.seen.insert(id)) {
                Some("the same file as one counted already (a link to it)".to_string())
            } else {
                None
            };
            match why {
                Some(why) => self.out.left_out.push(LeftOut {
                    path,
                    bytes: f.bytes,
                    why,
                }),
                None => {
                    counted_here += 1;
                    if f.ext == "gguf" && !is_split_gguf(&f.name) {
                        ggufs += 1;
                    }
                    self.out.bytes = self.out.bytes.saturating_add(f.bytes);
                    self.out.files.push(WeightFile {
                        path,
                        bytes: f.bytes,
                        link: f.link.clone(),
                    });
                }
            }
        }
        if ggufs > 1 {
            self.note(format!(
                "{ggufs} GGUF files in {}: counted them all, but a loader reads one (give its path)",
                if rel.as_os_str().is_empty() { "this folder".into() } else { shown(rel) }
            ));
        }
        for n in named.into_values() {
            for s in n.shards {
                if !l.found.iter().any(|f| f.name == s) {
                    self.out.missing.push(shown(&rel.join(&s)));
                }
            }
        }
        for (name, path) in &l.subfolders {
            let sub = rel.join(name);
            if depth + 1 > self.limits.max_depth {
                self.note(format!(
                    "{} is more than {} folders deep: not looked into",
                    shown(&sub),
                    self.limits.max_depth
                ));
                continue;
            }
            self.folder(path, &sub, depth + 1, weights_above || counted_here > 0)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "weights_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "weights/hostile_tests.rs"]
mod hostile_tests;
