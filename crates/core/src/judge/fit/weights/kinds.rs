//! What a path's name and kind say: a weights file by its ending, a
//! trainer's state that shares one, a part of a split GGUF, a path that is
//! no file at all, and a file's identity (reached twice, counted once).

use std::fs;

/// The file name endings counted as weights.
pub const WEIGHT_EXTENSIONS: [&str; 6] = ["safetensors", "gguf", "bin", "pt", "pth", "npz"];

/// Files with a weights ending that hold a trainer's state, not weights.
const TRAINING_STATE: [&str; 6] = [
    "optimizer.pt",
    "optimizer.bin",
    "scheduler.pt",
    "scheduler.bin",
    "training_args.bin",
    "rng_state",
];

pub(crate) use crate::util::inpath::not_a_file;

/// The weights ending of `name` (lower case), if it has one.
pub(super) fn weights_ext(name: &str) -> Option<&'static str> {
    let (_, ext) = name.rsplit_once('.')?;
    WEIGHT_EXTENSIONS
        .into_iter()
        .find(|e| e.eq_ignore_ascii_case(ext))
}

pub(super) fn is_training_state(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    TRAINING_STATE
        .iter()
        .any(|t| lower == *t || (t.ends_with("rng_state") && lower.starts_with(t)))
}

/// `model-00001-of-00003.gguf`: a part of a split GGUF.
pub(super) fn is_split_gguf(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".gguf") else {
        return false;
    };
    let parts: Vec<&str> = stem.rsplitn(4, '-').collect();
    matches!(parts.as_slice(), [total, "of", part, _]
        if total.len() == 5 && part.len() == 5
            && total.bytes().chain(part.bytes()).all(|b| b.is_ascii_digit()))
}

/// A file's identity, so that a file reached twice (a link and its target,
/// two links to one blob) counts once.
#[cfg(unix)]
pub(super) fn file_id(m: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(super) fn file_id(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}
