//! Hugging Face's own files: an index's `weight_map` (which shards a
//! loader reads) and the cache's layout (`models--org--name` with
//! `blobs/`, `refs/main` and `snapshots/<rev>/`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{shown, WeightsError};

/// The indexes of one kind in a folder and the shards they name.
#[derive(Debug, Default)]
pub struct Named {
    pub indexes: Vec<String>,
    pub shards: BTreeSet<String>,
}

/// [`Named`] by the kind of file it governs (`safetensors`, `bin`).
pub type ByKind = BTreeMap<&'static str, Named>;

/// The kind an index file governs: `safetensors` for
/// `model.safetensors.index.json`, `bin` for `pytorch_model.bin.index.json`.
pub fn index_kind(name: &str) -> Option<&'static str> {
    let stem = name.strip_suffix(".index.json")?;
    ["safetensors", "bin"]
        .into_iter()
        .find(|k| stem.ends_with(&format!(".{k}")))
}

/// The shard names an index's `weight_map` holds (its values), read with a
/// size cap.
pub fn read_index(path: &Path, shown_as: &str, cap: u64) -> Result<BTreeSet<String>, WeightsError> {
    let bad = |why: String| WeightsError::BadIndex {
        path: shown_as.to_string(),
        why,
    };
    let (file, _) =
        crate::util::inpath::open_regular(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
    let mut text = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut text)
        .map_err(|e| bad(format!("cannot be read: {e}")))?;
    if text.len() as u64 > cap {
        return Err(bad(format!(
            "larger than {}, more than an index holds: not an index?",
            crate::util::units::format_limit(cap)
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| bad(format!("not JSON ({e}); a loader would fail on it too")))?;
    let map = v
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| bad("has no \"weight_map\" object; a loader would fail on it too".into()))?;
    Ok(map
        .values()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect())
}

/// A folder itself, not a link to one.
fn real_dir(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Where to start in a Hugging Face cache folder (`models--org--name`,
/// holding `snapshots/` and `refs/`): the snapshot `refs/main` names, or
/// the only one; else the folder itself.
pub fn hf_cache_snapshot(path: &Path, notes: &mut Vec<String>) -> (PathBuf, PathBuf) {
    let snapshots = path.join("snapshots");
    if !path.join("blobs").is_dir() || !snapshots.is_dir() {
        return (path.to_path_buf(), PathBuf::new());
    }
    // The cache's snapshots are folders of links to blobs; a snapshot (or
    // snapshots/ itself) that is a link to a folder would take the walk
    // anywhere (`snapshots -> /`), so it is not followed.
    if !real_dir(&snapshots) {
        notes.push("snapshots/ links to a folder elsewhere: not followed".into());
        return (path.to_path_buf(), PathBuf::new());
    }
    let mut main = String::new();
    let refs = path.join("refs").join("main");
    match crate::util::inpath::open_regular(&refs) {
        // A commit hash: 40 hex digits; anything longer is not one.
        Ok((f, _)) => {
            let _ = f.take(256).read_to_string(&mut main);
        }
        Err(e) if fs::symlink_metadata(&refs).is_ok() => {
            notes.push(format!("refs/main not read ({e})"));
        }
        Err(_) => {}
    }
    let main = main.trim();
    let named = (!main.is_empty()
        && !main.contains(['/', '\\'])
        && main != ".."
        && main != "."
        && real_dir(&snapshots.join(main)))
    .then(|| main.to_string());
    if named.is_none() && !main.is_empty() {
        let rev = crate::util::text::clean(main);
        notes.push(format!(
            "refs/main names '{}', not a snapshot folder of this cache: not followed",
            rev.chars().take(80).collect::<String>()
        ));
    }
    let only = || {
        let revs: Vec<_> = fs::read_dir(&snapshots)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .take(2)
            .collect();
        match revs.as_slice() {
            [one] => Some(one.file_name().to_string_lossy().into_owned()),
            _ => None,
        }
    };
    match named
        .map(|r| (r, "refs/main"))
        .or_else(|| only().map(|r| (r, "the only one")))
    {
        Some((rev, which)) => {
            let rel = Path::new("snapshots").join(&rev);
            notes.push(format!(
                "a Hugging Face cache folder: counted {} ({which})",
                shown(&rel)
            ));
            (path.join(&rel), rel)
        }
        None => {
            notes.push(
                "a Hugging Face cache folder with several snapshots and no refs/main: \
                 counted every snapshot's files, each blob once (give one snapshots/<rev> folder for one revision)"
                    .into(),
            );
            (snapshots, PathBuf::from("snapshots"))
        }
    }
}
