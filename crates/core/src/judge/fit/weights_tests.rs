//! Counting a model's weights on folders laid out as Hugging Face, diffusers,
//! llama.cpp and HF's cache lay them out, made of sparse files (their length
//! is what counts, so a 4 GiB shard costs no disk).

use std::fs;
use std::path::Path;

use swapsight_testkit::TempDir;

use super::*;

pub(super) const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// A sparse file of `len` bytes at `dir/rel` (folders made as needed).
pub(super) fn sparse(dir: &Path, rel: &str, len: u64) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::File::create(&path).unwrap().set_len(len).unwrap();
}

pub(super) fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// An index whose `weight_map` names `shards` (two tensors each).
pub(super) fn index(shards: &[&str]) -> String {
    let entries: Vec<String> = shards
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            [
                format!("\"model.layers.{i}.mlp.weight\": \"{s}\""),
                format!("\"model.layers.{i}.attn.weight\": \"{s}\""),
            ]
        })
        .collect();
    format!(
        "{{\"metadata\": {{\"total_size\": 1}}, \"weight_map\": {{{}}}}}",
        entries.join(", ")
    )
}

pub(super) const SHARDS: [&str; 3] = [
    "model-00001-of-00003.safetensors",
    "model-00002-of-00003.safetensors",
    "model-00003-of-00003.safetensors",
];

/// An HF model folder: config, tokenizer, three shards and their index.
pub(super) fn hf_folder(dir: &Path) {
    write(dir, "config.json", "{\"model_type\": \"llama\"}");
    write(dir, "tokenizer.json", "{}");
    write(dir, "generation_config.json", "{}");
    sparse(dir, SHARDS[0], 4 * GIB);
    sparse(dir, SHARDS[1], 4 * GIB);
    sparse(dir, SHARDS[2], 2 * GIB + 300 * MIB);
    write(dir, "model.safetensors.index.json", &index(&SHARDS));
}

fn names(w: &Weights) -> Vec<&str> {
    w.files.iter().map(|f| f.path.as_str()).collect()
}

pub(super) fn count(dir: &Path) -> Weights {
    count_weights(dir, WalkLimits::default()).unwrap()
}

#[test]
fn an_hf_folder_counts_its_three_shards_by_their_length() {
    let dir = TempDir::new("fit-hf");
    hf_folder(dir.path());
    let w = count(dir.path());
    assert_eq!(names(&w), SHARDS);
    assert_eq!(w.bytes, 10 * GIB + 300 * MIB);
    assert_eq!(w.indexes, ["model.safetensors.index.json"]);
    assert!(w.left_out.is_empty() && w.missing.is_empty(), "{w:#?}");
    // Sparse: the files hold almost no disk.
    let on_disk = {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(dir.join(SHARDS[0])).unwrap().blocks() * 512
    };
    assert!(on_disk < MIB, "{on_disk} bytes on disk");
}

#[test]
fn an_index_that_names_some_shards_counts_only_those_and_says_which_were_left_out() {
    let dir = TempDir::new("fit-partial");
    hf_folder(dir.path());
    write(
        dir.path(),
        "model.safetensors.index.json",
        &index(&SHARDS[..2]),
    );
    // Mistral's repos carry a single-file copy beside the shards.
    sparse(dir.path(), "consolidated.safetensors", 10 * GIB);
    let w = count(dir.path());
    assert_eq!(names(&w), &SHARDS[..2]);
    assert_eq!(w.bytes, 8 * GIB);
    let left: Vec<(&str, u64, &str)> = w
        .left_out
        .iter()
        .map(|l| (l.path.as_str(), l.bytes, l.why.as_str()))
        .collect();
    assert_eq!(
        left,
        [
            (
                "consolidated.safetensors",
                10 * GIB,
                "not named by model.safetensors.index.json"
            ),
            (
                SHARDS[2],
                2 * GIB + 300 * MIB,
                "not named by model.safetensors.index.json"
            ),
        ]
    );
}

#[test]
fn a_shard_the_index_names_that_is_not_there_is_missing() {
    let dir = TempDir::new("fit-missing");
    hf_folder(dir.path());
    fs::remove_file(dir.join(SHARDS[1])).unwrap();
    let w = count(dir.path());
    assert_eq!(w.missing, [SHARDS[1]]);
    assert_eq!(w.bytes, 6 * GIB + 300 * MIB);
}

#[test]
fn gguf_files_count_and_several_of_them_are_said() {
    let dir = TempDir::new("fit-gguf");
    sparse(
        dir.path(),
        "Llama-3.1-8B-Instruct-Q4_K_M.gguf",
        4_920_734_272,
    );
    let w = count_weights(
        &dir.join("Llama-3.1-8B-Instruct-Q4_K_M.gguf"),
        WalkLimits::default(),
    )
    .unwrap();
    assert_eq!(w.bytes, 4_920_734_272);
    assert_eq!(names(&w), ["Llama-3.1-8B-Instruct-Q4_K_M.gguf"]);
    assert!(w.notes.is_empty(), "{:?}", w.notes);

    sparse(dir.path(), "Llama-3.1-8B-Instruct-Q8_0.gguf", 8_540_770_560);
    let w = count(dir.path());
    assert_eq!(w.bytes, 4_920_734_272 + 8_540_770_560);
    assert!(
        w.notes.iter().any(|n| n.contains("2 GGUF files")),
        "{:?}",
        w.notes
    );
    // The parts of one split GGUF are one model: no note.
    let split = TempDir::new("fit-gguf-split");
    sparse(split.path(), "big-00001-of-00002.gguf", 40 * GIB);
    sparse(split.path(), "big-00002-of-00002.gguf", 30 * GIB);
    let w = count(split.path());
    assert_eq!(w.bytes, 70 * GIB);
    assert!(w.notes.is_empty(), "{:?}", w.notes);
}

#[test]
fn every_weights_ending_counts_and_training_state_does_not() {
    let dir = TempDir::new("fit-kinds");
    for (name, len) in [
        ("a.pt", MIB),
        ("b.PTH", 2 * MIB),
        ("weights.npz", 3 * MIB),
        ("pytorch_model.bin", 4 * MIB),
        ("optimizer.pt", 8 * MIB),
        ("rng_state_0.pth", 16 * MIB),
        ("training_args.bin", 32 * MIB),
        ("notes.txt", 64 * MIB),
    ] {
        sparse(dir.path(), name, len);
    }
    let w = count(dir.path());
    assert_eq!(
        names(&w),
        ["a.pt", "b.PTH", "pytorch_model.bin", "weights.npz"]
    );
    assert_eq!(w.bytes, 10 * MIB);
    let left: Vec<&str> = w.left_out.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(
        left,
        ["optimizer.pt", "rng_state_0.pth", "training_args.bin"]
    );
}

#[test]
fn bin_beside_safetensors_is_left_out_and_so_is_a_copy_in_a_subfolder() {
    // meta-llama/Meta-Llama-3-8B: HF shards at the top, Meta's own
    // checkpoint in original/.
    let dir = TempDir::new("fit-copies");
    hf_folder(dir.path());
    sparse(dir.path(), "pytorch_model.bin", 10 * GIB);
    sparse(dir.path(), "original/consolidated.00.pth", 15 * GIB);
    let w = count(dir.path());
    assert_eq!(names(&w), SHARDS);
    let left: Vec<(&str, &str)> = w
        .left_out
        .iter()
        .map(|l| (l.path.as_str(), l.why.split(':').next().unwrap()))
        .collect();
    assert_eq!(
        left,
        [
            ("pytorch_model.bin", "a .safetensors copy is beside it"),
            (
                "original/consolidated.00.pth",
                "below a folder with weights of its own"
            ),
        ]
    );
}

#[test]
fn a_diffusers_pipeline_counts_its_parts() {
    let dir = TempDir::new("fit-diffusers");
    write(dir.path(), "model_index.json", "{}");
    sparse(
        dir.path(),
        "unet/diffusion_pytorch_model.safetensors",
        3 * GIB,
    );
    sparse(dir.path(), "unet/diffusion_pytorch_model.bin", 3 * GIB);
    sparse(
        dir.path(),
        "vae/diffusion_pytorch_model.safetensors",
        160 * MIB,
    );
    sparse(dir.path(), "text_encoder/model.safetensors", 470 * MIB);
    let w = count(dir.path());
    assert_eq!(
        names(&w),
        [
            "text_encoder/model.safetensors",
            "unet/diffusion_pytorch_model.safetensors",
            "vae/diffusion_pytorch_model.safetensors"
        ]
    );
    assert_eq!(w.bytes, 3 * GIB + 630 * MIB);
    assert_eq!(w.left_out.len(), 1, "{:?}", w.left_out);
}

/// HF's cache: models--org--name/{blobs,refs,snapshots}; each snapshot's
/// files are links into blobs/.
pub(super) fn hf_cache(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("models--org--tiny");
    let rev = "0123456789abcdef0123456789abcdef01234567";
    write(&repo, "refs/main", rev);
    let snap = repo.join("snapshots").join(rev);
    fs::create_dir_all(&snap).unwrap();
    for (i, shard) in SHARDS.iter().enumerate() {
        let blob = format!("{i:064x}");
        sparse(&repo, &format!("blobs/{blob}"), (i as u64 + 1) * GIB);
        std::os::unix::fs::symlink(format!("../../blobs/{blob}"), snap.join(shard)).unwrap();
    }
    write(&repo, "blobs/index", &index(&SHARDS));
    std::os::unix::fs::symlink(
        "../../blobs/index",
        snap.join("model.safetensors.index.json"),
    )
    .unwrap();
    // An older revision that shares the first blob.
    let old = repo.join("snapshots/fedcba9876543210fedcba9876543210fedcba98");
    fs::create_dir_all(&old).unwrap();
    std::os::unix::fs::symlink(
        format!("../../blobs/{:064x}", 0),
        old.join("model.safetensors"),
    )
    .unwrap();
    repo
}

#[test]
fn a_snapshot_of_hf_cache_counts_its_links_by_their_targets() {
    let dir = TempDir::new("fit-cache");
    let repo = hf_cache(dir.path());
    let rev = fs::read_to_string(repo.join("refs/main")).unwrap();
    let w = count(&repo.join("snapshots").join(&rev));
    assert_eq!(names(&w), SHARDS);
    assert_eq!(w.bytes, 6 * GIB);
    assert_eq!(
        w.files[0].link.as_deref(),
        Some(format!("../../blobs/{:064x}", 0).as_str())
    );
    // The cache folder itself: the snapshot refs/main names, only.
    let w = count(&repo);
    assert_eq!(w.bytes, 6 * GIB);
    assert_eq!(w.files[0].path, format!("snapshots/{rev}/{}", SHARDS[0]));
    assert!(
        w.notes[0].starts_with("a Hugging Face cache folder: counted snapshots/"),
        "{:?}",
        w.notes
    );
    // Without refs/main: every snapshot, each blob once.
    fs::remove_file(repo.join("refs/main")).unwrap();
    let w = count(&repo);
    assert_eq!(w.bytes, 6 * GIB, "{w:#?}");
    assert_eq!(w.left_out.len(), 1, "{:?}", w.left_out);
    assert!(
        w.left_out[0].why.starts_with("the same file"),
        "{:?}",
        w.left_out
    );
}

#[test]
fn links_to_folders_are_not_followed_and_a_loop_ends() {
    let dir = TempDir::new("fit-links");
    sparse(dir.path(), "m/model.safetensors", GIB);
    std::os::unix::fs::symlink("..", dir.join("m/up")).unwrap();
    std::os::unix::fs::symlink("/", dir.join("m/root")).unwrap();
    std::os::unix::fs::symlink("nowhere.safetensors", dir.join("m/broken.safetensors")).unwrap();
    let w = count(&dir.join("m"));
    assert_eq!(w.bytes, GIB);
    assert_eq!(names(&w), ["model.safetensors"]);
    assert_eq!(w.left_out.len(), 1);
    assert!(
        w.left_out[0].why.starts_with("cannot be read"),
        "{:?}",
        w.left_out
    );
}

/// A FIFO under a weights file's name is said to be one, and never
/// opened (a read would wait for a writer), not "links to a folder".
#[test]
fn a_fifo_named_as_weights_is_said_to_be_one_and_not_read() {
    let dir = TempDir::new("fit-fifo");
    sparse(dir.path(), "m/model-00001-of-00002.safetensors", GIB);
    let fifo = dir.join("m/model-00002-of-00002.safetensors");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only makes the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let w = count(&dir.join("m"));
    assert_eq!(w.bytes, GIB);
    assert_eq!(names(&w), ["model-00001-of-00002.safetensors"]);
    assert!(
        w.notes
            .iter()
            .any(|n| n == "model-00002-of-00002.safetensors is a FIFO, not a file: not read"),
        "{:?}",
        w.notes
    );
    assert!(
        !w.notes.iter().any(|n| n.contains("folder")),
        "{:?}",
        w.notes
    );
}

#[test]
fn the_walk_stops_at_its_caps_and_hidden_folders_are_skipped() {
    let dir = TempDir::new("fit-caps");
    sparse(dir.path(), "a/b/c/d/model.safetensors", GIB);
    sparse(dir.path(), ".git/lfs/objects/x.safetensors", 9 * GIB);
    let limits = WalkLimits {
        max_depth: 2,
        ..WalkLimits::default()
    };
    let err = count_weights(dir.path(), limits).unwrap_err();
    assert!(
        err.to_string().starts_with("no model weights counted in"),
        "{err}"
    );
    let w = count(dir.path());
    assert_eq!(w.bytes, GIB);
    assert!(
        w.notes.iter().any(|n| n == ".git not looked into (hidden)"),
        "{:?}",
        w.notes
    );

    for i in 0..20 {
        write(dir.path(), &format!("many/{i}.txt"), "");
    }
    let limits = WalkLimits {
        max_entries: 10,
        ..WalkLimits::default()
    };
    let err = count_weights(dir.path(), limits).unwrap_err();
    assert!(
        matches!(err, WeightsError::TooMany { max: 10, .. }),
        "{err}"
    );
}

#[test]
fn a_bad_or_huge_index_is_an_error_that_names_it() {
    let dir = TempDir::new("fit-bad-index");
    hf_folder(dir.path());
    write(
        dir.path(),
        "model.safetensors.index.json",
        "{\"weight_map\": ",
    );
    let err = count_weights(dir.path(), WalkLimits::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("model.safetensors.index.json: not JSON ("),
        "{text}"
    );
    write(
        dir.path(),
        "model.safetensors.index.json",
        "{\"metadata\": {}}",
    );
    let text = count_weights(dir.path(), WalkLimits::default())
        .unwrap_err()
        .to_string();
    assert!(text.contains("has no \"weight_map\" object"), "{text}");
    write(dir.path(), "model.safetensors.index.json", &index(&SHARDS));
    let limits = WalkLimits {
        max_index_bytes: 100,
        ..WalkLimits::default()
    };
    let text = count_weights(dir.path(), limits).unwrap_err().to_string();
    assert!(text.contains("larger than"), "{text}");
}

#[test]
fn a_file_given_counts_whatever_its_name_and_a_missing_path_is_an_error() {
    let dir = TempDir::new("fit-file");
    sparse(dir.path(), "model.mlx", 3 * GIB);
    let w = count_weights(&dir.join("model.mlx"), WalkLimits::default()).unwrap();
    assert_eq!(w.bytes, 3 * GIB);
    assert!(w.notes[0].contains("counted as given"), "{:?}", w.notes);
    let err = count_weights(&dir.join("nope"), WalkLimits::default()).unwrap_err();
    assert!(err.to_string().starts_with("cannot read "), "{err}");
    let empty = TempDir::new("fit-empty");
    write(empty.path(), "config.json", "{}");
    let err = count_weights(empty.path(), WalkLimits::default()).unwrap_err();
    assert!(err.to_string().contains("no *.safetensors"), "{err}");
}
