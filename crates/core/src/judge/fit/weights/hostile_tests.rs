//! Folders made to hang or flood the walk: a FIFO where an index or
//! `refs/main` is, a snapshot that links out of the cache, `refs/main` of
//! `.`, an index naming a hundred thousand shards outside its folder.

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use swapsight_testkit::TempDir;

use super::tests::{count, hf_cache, hf_folder, index, sparse, write, GIB, SHARDS};
use super::*;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// The walk of `dir` within 10 s: a FIFO opened for reading blocks until
/// a writer comes, so a hang is a failure, not a stuck test.
fn within_10s(dir: &Path) -> Result<Weights, WeightsError> {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(count_weights(&dir, WalkLimits::default()));
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the walk hung on a FIFO")
}

#[test]
fn a_fifo_as_the_index_is_refused_at_once() {
    let dir = TempDir::new("fit-fifo-index");
    hf_folder(dir.path());
    fs::remove_file(dir.join("model.safetensors.index.json")).unwrap();
    mkfifo(&dir.join("model.safetensors.index.json"));
    let e = within_10s(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("model.safetensors.index.json: cannot be read: a FIFO, not a file"),
        "{e}"
    );
}

#[test]
fn a_fifo_or_a_dot_as_refs_main_is_not_followed() {
    let dir = TempDir::new("fit-fifo-refs");
    let repo = hf_cache(dir.path());
    let refs = repo.join("refs/main");
    fs::remove_file(&refs).unwrap();
    mkfifo(&refs);
    let w = within_10s(&repo).unwrap();
    assert!(
        w.notes
            .iter()
            .any(|n| n == "refs/main not read (a FIFO, not a file)"),
        "{:?}",
        w.notes
    );
    fs::remove_file(&refs).unwrap();
    write(&repo, "refs/main", ".");
    let w = count(&repo);
    assert!(
        w.notes
            .iter()
            .any(|n| n.contains("refs/main names '.', not a snapshot folder")),
        "{:?}",
        w.notes
    );
    // Not snapshots/ itself as the revision: the two are walked as two.
    assert!(
        w.notes.iter().any(|n| n.contains("several snapshots")),
        "{:?}",
        w.notes
    );
}

#[test]
fn a_snapshot_linking_out_of_the_cache_is_not_followed() {
    let dir = TempDir::new("fit-snap-link");
    let repo = hf_cache(dir.path());
    let outside = TempDir::new("fit-snap-outside");
    sparse(outside.path(), "big.safetensors", 100 * GIB);
    let rev = "1111111111111111111111111111111111111111";
    std::os::unix::fs::symlink(outside.path(), repo.join("snapshots").join(rev)).unwrap();
    write(&repo, "refs/main", rev);
    let w = count(&repo);
    assert!(
        w.files.iter().all(|f| !f.path.contains("big")),
        "{:?}",
        w.files
    );
    assert!(
        w.notes
            .iter()
            .any(|n| n.contains(&format!("refs/main names '{rev}'"))),
        "{:?}",
        w.notes
    );
    // snapshots/ itself a link to a folder (`snapshots -> /`).
    let dir = TempDir::new("fit-snapshots-link");
    let repo = dir.join("models--org--evil");
    fs::create_dir_all(repo.join("blobs")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.join("snapshots")).unwrap();
    let e = count_weights(&repo, WalkLimits::default());
    let notes = match &e {
        Ok(w) => w.notes.clone(),
        Err(e) => vec![e.to_string()],
    };
    assert!(matches!(&e, Err(WeightsError::Nothing { .. })), "{notes:?}");
}

#[test]
fn an_index_naming_a_hundred_thousand_shards_outside_says_ten() {
    let dir = TempDir::new("fit-flood");
    hf_folder(dir.path());
    let mut names: Vec<String> = (0..100_000)
        .map(|i| format!("../s{i}.safetensors"))
        .collect();
    names.extend(SHARDS.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    fs::write(dir.join("model.safetensors.index.json"), index(&refs)).unwrap();
    let w = count(dir.path());
    assert_eq!(w.files.len(), SHARDS.len());
    assert_eq!(w.notes.len(), 11, "{:?}", &w.notes[..12.min(w.notes.len())]);
    assert!(
        w.notes[10].contains("names 99990 more shards outside its folder"),
        "{}",
        w.notes[10]
    );
}
