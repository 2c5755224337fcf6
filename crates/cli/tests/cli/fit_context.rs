//! `swapsight fit` at a context: folders laid out as Llama-3.1-8B's (its
//! config.json, four sparse shards made with set_len), a GGUF whose
//! metadata is written by hand (ggml's docs/gguf.md), a safetensors file
//! with a real header, and the new flags' bad values.

use std::path::Path;

use super::super::util::*;
use super::{consistent, fit, fit_json, sparse, GIB};

const LLAMA_CONFIG: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":131072,"vocab_size":128256,"torch_dtype":"bfloat16"}"#;

const LLAMA_SHARDS: [(&str, u64); 4] = [
    ("model-00001-of-00004.safetensors", 4_976_698_672),
    ("model-00002-of-00004.safetensors", 4_999_802_720),
    ("model-00003-of-00004.safetensors", 4_915_916_176),
    ("model-00004-of-00004.safetensors", 1_168_138_808),
];

/// meta-llama/Llama-3.1-8B-Instruct's layout: config.json, four shards
/// (sparse) and their index.
pub(crate) fn llama_folder(dir: &Path) {
    std::fs::write(dir.join("config.json"), LLAMA_CONFIG).unwrap();
    for (name, len) in LLAMA_SHARDS {
        sparse(dir, name, len);
    }
    let names: Vec<&str> = LLAMA_SHARDS.iter().map(|s| s.0).collect();
    std::fs::write(
        dir.join("model.safetensors.index.json"),
        super::index(&names),
    )
    .unwrap();
}

fn need<'a>(v: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    v["need"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no {id}: {v:#}"))
}

#[test]
fn llama_31_8b_at_its_128k_context_needs_16_gib_of_kv_cache() {
    let dir = TempDir::new("fit-llama");
    llama_folder(dir.path());
    let path = dir.path().to_str().unwrap();
    let (code, v) = fit_json(&[path, "--context", "131072", "--runtime", "mlx"]);
    consistent(code, &v);
    assert_eq!(v["version"], 2);
    let kv = need(&v, "kv-cache");
    assert_eq!(kv["bytes"], 16 * GIB, "{v:#}");
    let input = |name: &str| {
        kv["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        input("layers"),
        serde_json::json!({"name": "layers", "value": 32, "source": "config.json", "key": "num_hidden_layers"})
    );
    assert_eq!(input("kv_heads")["key"], "num_key_value_heads");
    assert_eq!(input("tokens")["source"], "--context");
    let weights: u64 = LLAMA_SHARDS.iter().map(|s| s.1).sum();
    assert_eq!(need(&v, "weights")["bytes"], weights);
    assert_eq!(v["model_bytes"], weights);
    let sum: u64 = v["need"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(v["needed_bytes"], sum);
    assert!(sum > 31 * GIB, "weights + 16 GiB of KV cache: {v:#}");
    assert_eq!(v["context"]["tokens"], 131072);
    assert_eq!(v["context"]["runtime"], "mlx");

    let out = fit(&[path, "--context", "8k", "--runtime", "mlx"]);
    let text = stdout_of(&out);
    assert!(
        text.contains("  KV cache               1.0 GiB = 32 layers × 8 KV heads × 128 head dim × 2 (K and V) × bf16 2 B × 8,192 tokens × 1 sequence (config.json)\n"),
        "{text}"
    );
    assert!(text.contains(" at 8,192 tokens"), "{text}");
    eprintln!("--- swapsight fit on Llama-3.1-8B's layout at 8k ---\n{text}");
}

#[test]
fn without_a_context_it_judges_a_short_one_and_says_the_largest_under_each_bound() {
    let dir = TempDir::new("fit-llama-largest");
    llama_folder(dir.path());
    let path = dir.path().to_str().unwrap();
    let (code, v) = fit_json(&[path]);
    consistent(code, &v);
    assert_eq!(v["context"]["asked"], false);
    assert_eq!(v["context"]["tokens"], 4096);
    let largest = &v["largest_context"];
    assert_eq!(largest["model_max_tokens"], 131072);
    assert_eq!(
        largest["model_max_source"],
        "config.json: max_position_embeddings"
    );
    let bounds = v["bounds"].as_array().unwrap();
    let at = largest["bounds"].as_array().unwrap();
    assert_eq!(at.len(), bounds.len());
    for (a, b) in at.iter().zip(bounds) {
        assert_eq!(a["id"], b["id"]);
        // The need at the largest context is within the bound, one token
        // more is over it (unless the model's maximum stopped the search).
        let t = a["tokens"].as_u64().unwrap();
        let at_t = fit_json(&[path, "--context", &t.to_string()]).1;
        let bound = b["bytes"].as_u64().unwrap();
        assert!(at_t["needed_bytes"].as_u64().unwrap() <= bound, "{a} {b}");
        if a["at_model_max"] == false {
            let past = fit_json(&[path, "--context", &(t + 1).to_string()]).1;
            assert!(past["needed_bytes"].as_u64().unwrap() > bound, "{a} {b}");
        }
    }
    let text = stdout_of(&fit(&[path]));
    assert!(text.contains("\ncontext: fits "), "{text}");
    assert!(
        text.contains("the model's own maximum is 131,072 (config.json: max_position_embeddings)"),
        "{text}"
    );
    eprintln!("--- swapsight fit on Llama-3.1-8B's layout, no --context ---\n{text}");
}

/// A GGUF v3 file's metadata as docs/gguf.md lays it out: `GGUF`, version,
/// tensor count, pair count, then each key (u64 length + bytes), its type
/// (4: uint32, 8: string) and value; the rest of the file sparse.
fn gguf(path: &Path, arch: &str, counts: &[(&str, u32)], len: u64) {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend((counts.len() as u64 + 1).to_le_bytes());
    let key = |b: &mut Vec<u8>, k: &str, ty: u32| {
        b.extend((k.len() as u64).to_le_bytes());
        b.extend(k.as_bytes());
        b.extend(ty.to_le_bytes());
    };
    key(&mut b, "general.architecture", 8);
    b.extend((arch.len() as u64).to_le_bytes());
    b.extend(arch.as_bytes());
    for (k, v) in counts {
        key(&mut b, k, 4);
        b.extend(v.to_le_bytes());
    }
    std::fs::write(path, &b).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn a_gguf_is_sized_from_its_metadata_for_llama_cpp() {
    let dir = TempDir::new("fit-gguf-meta");
    let path = dir.join("llama-Q4_K_M.gguf");
    gguf(
        &path,
        "llama",
        &[
            ("llama.block_count", 32),
            ("llama.attention.head_count", 32),
            ("llama.attention.head_count_kv", 8),
            ("llama.embedding_length", 4096),
            ("llama.context_length", 131072),
            ("general.file_type", 15),
        ],
        4_920_000_000,
    );
    let (code, v) = fit_json(&[
        path.to_str().unwrap(),
        "--context",
        "8192",
        "--parallel",
        "2",
    ]);
    consistent(code, &v);
    assert_eq!(v["context"]["runtime"], "llama.cpp");
    assert_eq!(v["context"]["kv_dtype"], "f16");
    let kv = need(&v, "kv-cache");
    assert_eq!(kv["bytes"], 2 * GIB, "f16 × 2 sequences: {v:#}");
    let heads = kv["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "kv_heads")
        .unwrap();
    assert_eq!(heads["source"], "llama-Q4_K_M.gguf");
    assert_eq!(heads["key"], "llama.attention.head_count_kv");
    assert!(need(&v, "weights")["formula"]
        .as_str()
        .unwrap()
        .contains("Q4_K_M"));
    let (_, v) = fit_json(&[
        path.to_str().unwrap(),
        "--context",
        "8192",
        "--kv-dtype",
        "q8_0",
    ]);
    assert_eq!(need(&v, "kv-cache")["bytes"], GIB / 32 * 17);
}

#[test]
fn a_real_safetensors_header_sizes_the_weights_by_their_tensors() {
    let dir = TempDir::new("fit-st-header");
    std::fs::write(dir.join("config.json"), LLAMA_CONFIG).unwrap();
    let json = r#"{"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[1024,1024],"data_offsets":[0,2097152]}}"#;
    let mut b = (json.len() as u64).to_le_bytes().to_vec();
    b.extend(json.as_bytes());
    let path = dir.join("model.safetensors");
    std::fs::write(&path, &b).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(b.len() as u64 + 2_097_152).unwrap();
    let (code, v) = fit_json(&[dir.path().to_str().unwrap()]);
    consistent(code, &v);
    let w = need(&v, "weights");
    assert_eq!(w["bytes"], 2_097_152);
    assert!(
        w["formula"]
            .as_str()
            .unwrap()
            .starts_with("1 tensors' dtype × shape in 1 safetensors header"),
        "{w:#}"
    );
}

#[test]
fn bad_context_flags_are_bad_arguments() {
    for args in [
        ["4G", "--context", "0"],
        ["4G", "--context", "lots"],
        ["4G", "--context", "-5"],
        ["4G", "--kv-dtype", "q5_k"],
        ["4G", "--runtime", "vllm"],
        ["4G", "--parallel", "0"],
    ] {
        let out = fit(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr_of(&out));
        assert_eq!(
            stderr_of(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr_of(&out)
        );
    }
    // A size has no layers: the context is said to be left out.
    let (code, v) = fit_json(&["4G", "--context", "8192"]);
    assert_eq!(code, Some(0));
    assert!(v["context"].is_null() && v["largest_context"].is_null());
    assert!(
        v["notes"]
            .to_string()
            .contains("judged on its weights alone"),
        "{v:#}"
    );
}
