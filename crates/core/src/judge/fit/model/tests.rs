//! The model's files as their formats lay them out, written byte by byte:
//! safetensors (huggingface/safetensors README, "Format"), GGUF (ggml's
//! docs/gguf.md, "File Structure"), and Hugging Face configs of the
//! families whose caches differ.

use super::config::from_config;
use super::gguf::{read_metadata, GgufError, Value};
use super::safetensors::{header_len, sum_header, TensorSum, MAX_HEADER};
use super::*;

/// A safetensors file: the header's length (u64 LE), the JSON, the data.
fn safetensors_file(json: &str, data_len: usize) -> Vec<u8> {
    let mut b = (json.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(json.as_bytes());
    b.extend(std::iter::repeat(0u8).take(data_len));
    b
}

#[test]
fn a_safetensors_header_sums_its_tensors_from_dtype_and_shape() {
    let json = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"F32","shape":[4],"data_offsets":[12,28]},"c":{"dtype":"F4","shape":[3],"data_offsets":[28,30]}}"#;
    let file = safetensors_file(json, 30);
    let n = header_len(&file[..8], file.len() as u64).unwrap();
    assert_eq!(n, json.len() as u64);
    let data = file.len() as u64 - 8 - n;
    let sum = sum_header(&file[8..8 + n as usize], data).unwrap();
    assert_eq!(
        sum,
        TensorSum {
            tensors: 3,
            elements: 13,
            bytes: 30
        }
    );
}

#[test]
fn a_hostile_safetensors_header_is_refused_with_why() {
    // A sparse file made by truncate: all zeros.
    assert!(header_len(&[0; 8], 1 << 30)
        .unwrap_err()
        .contains("header length 0"));
    let huge = (MAX_HEADER + 1).to_le_bytes();
    assert!(header_len(&huge, u64::MAX).unwrap_err().contains("cap"));
    assert!(header_len(&100u64.to_le_bytes(), 50)
        .unwrap_err()
        .contains("past the end"));
    assert!(header_len(&[1, 2], 50).unwrap_err().contains("shorter"));
    let one = |dtype: &str, shape: &str, begin: u64, end: u64| {
        format!(r#"{{"a":{{"dtype":"{dtype}","shape":{shape},"data_offsets":[{begin},{end}]}}}}"#)
    };
    let cases = [
        (one("BF16", "[2,3]", 0, 10), "do not hold 12 bytes"),
        (one("BF16", "[2,3]", 12, 0), "do not hold"),
        (one("BF16", "[2,3]", 100, 112), "past the file's"),
        (one("F32", "[4294967296,4294967296,2]", 0, 8), "overflows"),
        (one("Q9", "[1]", 0, 1), "unknown dtype Q9"),
        (one("F32", "[-1]", 0, 1), "not a count"),
        ("[1,2]".into(), "not a JSON object"),
        (r#"{"a":"#.into(), "not JSON"),
    ];
    for (json, why) in cases {
        let e = sum_header(json.as_bytes(), 64).unwrap_err();
        assert!(e.contains(why), "{json}: {e}");
    }
}

use crate::synth::gguf::Gguf;

fn llama_gguf() -> Vec<u8> {
    crate::synth::gguf::llama_31_8b()
}

#[test]
fn a_gguf_says_its_layers_heads_context_and_file_type() {
    let m = read_metadata(&llama_gguf()).unwrap();
    assert_eq!(m["llama.block_count"], Value::Int(32));
    let d = gguf_describe::describe(&m, "m.gguf");
    assert_eq!(d.layers.as_ref().unwrap().value, 32);
    assert_eq!(d.layers.as_ref().unwrap().key, "llama.block_count");
    assert_eq!(d.kv_heads.as_ref().unwrap().value, 8);
    assert_eq!(d.key_dim.as_ref().unwrap().value, 128);
    assert_eq!(d.max_context.as_ref().unwrap().value, 131072);
    assert_eq!(d.vocab.as_ref().unwrap().value, 3);
    assert_eq!(d.quantization.as_ref().unwrap().value, "Q4_K_M");
    assert_eq!(d.kinds.as_ref().unwrap().value.full, 32);
    assert!(d.gguf);
}

#[test]
fn a_hostile_gguf_ends_the_read_not_the_process() {
    let full = llama_gguf();
    // Every prefix is "read more", never a panic or a wrong answer.
    for cut in 0..full.len() {
        assert_eq!(
            read_metadata(&full[..cut]),
            Err(GgufError::Truncated),
            "cut at {cut}"
        );
    }
    // An array claiming 2^60 strings: refused before any is read.
    let mut g = Gguf::new(3, 1);
    g.key("tokenizer.ggml.tokens", 9);
    g.0.extend(8u32.to_le_bytes());
    g.0.extend((1u64 << 60).to_le_bytes());
    assert_eq!(read_metadata(&g.0), Err(GgufError::Truncated));
    // A string claiming u64::MAX bytes.
    let mut g = Gguf::new(3, 1);
    g.0.extend(u64::MAX.to_le_bytes());
    assert_eq!(read_metadata(&g.0), Err(GgufError::Truncated));
    // Arrays of arrays of arrays…
    let mut g = Gguf::new(3, 1);
    g.key("deep", 9);
    for _ in 0..8 {
        g.0.extend(9u32.to_le_bytes());
        g.0.extend(1u64.to_le_bytes());
    }
    g.0.extend([0; 64]);
    assert!(matches!(read_metadata(&g.0), Err(GgufError::Bad(w)) if w.contains("nested")));
    let bad = |b: &[u8]| match read_metadata(b) {
        Err(GgufError::Bad(w)) => w,
        other => panic!("{other:?}"),
    };
    assert!(bad(b"GGML\x03\0\0\0").contains("magic"));
    assert!(bad(&Gguf::new(1, 0).0).contains("version 1"));
    let mut be = b"GGUF".to_vec();
    be.extend(3u32.to_be_bytes());
    assert!(bad(&be).contains("big-endian"));
    let mut g = Gguf::new(3, 1);
    g.key("x", 13);
    assert!(bad(&g.0).contains("unknown value type 13"));
}

const LLAMA_31_8B: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":131072,"vocab_size":128256,"torch_dtype":"bfloat16","rope_scaling":{"rope_type":"llama3","factor":8.0}}"#;

#[test]
fn a_llama_config_gives_the_kv_caches_figures() {
    let d = from_config(LLAMA_31_8B.as_bytes(), "config.json").unwrap();
    assert_eq!(d.layers.as_ref().unwrap().value, 32);
    assert_eq!(d.kv_heads.as_ref().unwrap().key, "num_key_value_heads");
    assert_eq!(d.key_dim.as_ref().unwrap().value, 128);
    assert_eq!(d.dtype.as_ref().unwrap().value, "bf16");
    assert_eq!(d.max_context.as_ref().unwrap().value, 131072);
    assert_eq!(
        d.kinds.as_ref().unwrap().value,
        LayerKinds {
            full: 32,
            ..LayerKinds::default()
        }
    );
    // Without head_dim or num_key_value_heads (GPT-2 era configs).
    let old = r#"{"model_type":"gpt2","n_layer":12,"n_head":12,"n_embd":768,"n_positions":1024}"#;
    let d = from_config(old.as_bytes(), "config.json").unwrap();
    assert_eq!(d.kv_heads.as_ref().unwrap().value, 12);
    assert_eq!(d.key_dim.as_ref().unwrap().value, 64);
    assert_eq!(d.key_dim.as_ref().unwrap().key, "n_embd / n_head");
}

#[test]
fn sliding_window_layers_follow_the_familys_pattern() {
    // Gemma 3 (a multimodal config: the language model is text_config).
    let g3 = r#"{"model_type":"gemma3","text_config":{"model_type":"gemma3_text","num_hidden_layers":62,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"sliding_window":1024,"sliding_window_pattern":6,"max_position_embeddings":131072},"vision_config":{"num_hidden_layers":27}}"#;
    let d = from_config(g3.as_bytes(), "config.json").unwrap();
    let k = d.kinds.unwrap();
    assert_eq!((k.value.full, k.value.sliding), (10, 52));
    assert_eq!(k.key, "text_config.sliding_window_pattern");
    assert_eq!(d.layers.unwrap().key, "text_config.num_hidden_layers");
    let g2 = r#"{"model_type":"gemma2","num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"sliding_window":4096}"#;
    let k = from_config(g2.as_bytes(), "config.json")
        .unwrap()
        .kinds
        .unwrap();
    assert_eq!((k.value.full, k.value.sliding), (21, 21));
    let mistral = r#"{"model_type":"mistral","num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"hidden_size":4096,"sliding_window":4096}"#;
    let k = from_config(mistral.as_bytes(), "config.json")
        .unwrap()
        .kinds
        .unwrap();
    assert!(k.value.uniform_window && k.value.sliding == 32);
    // Qwen2 with the window switched off: every layer full.
    let qwen = r#"{"model_type":"qwen2","num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"hidden_size":3584,"sliding_window":131072,"use_sliding_window":false}"#;
    let k = from_config(qwen.as_bytes(), "config.json")
        .unwrap()
        .kinds
        .unwrap();
    assert_eq!((k.value.full, k.value.sliding), (28, 0));
    // Gemma 3n: layer_types, the last shared layers counted once.
    let g3n = r#"{"text_config":{"num_hidden_layers":6,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":256,"sliding_window":512,"num_kv_shared_layers":2,"layer_types":["sliding_attention","sliding_attention","full_attention","sliding_attention","sliding_attention","full_attention"]}}"#;
    let k = from_config(g3n.as_bytes(), "config.json")
        .unwrap()
        .kinds
        .unwrap();
    assert_eq!((k.value.full, k.value.sliding), (1, 3));
}

#[test]
fn latent_and_linear_attention_are_read_where_the_config_has_them() {
    let v3 = r#"{"model_type":"deepseek_v3","num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"hidden_size":7168,"kv_lora_rank":512,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"n_routed_experts":256,"num_experts_per_tok":8}"#;
    let d = from_config(v3.as_bytes(), "config.json").unwrap();
    let mla = d.mla.unwrap();
    assert_eq!((mla.kv_lora_rank.value, mla.rope_dim.value), (512, 64));
    assert_eq!(
        (d.experts.unwrap().value, d.experts_used.unwrap().value),
        (256, 8)
    );
    let next = r#"{"model_type":"qwen3_next","num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"hidden_size":2048,"full_attention_interval":4,"linear_num_value_heads":32,"linear_num_key_heads":16,"linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4}"#;
    let d = from_config(next.as_bytes(), "config.json").unwrap();
    let k = d.kinds.unwrap().value;
    assert_eq!((k.full, k.linear), (12, 36));
    let r = d.recurrent.unwrap();
    assert_eq!(r.state_elements, 32 * 128 * 128);
    assert_eq!(r.conv_elements, 3 * (2 * 16 * 128 + 32 * 128));
    let mlx = r#"{"model_type":"llama","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"quantization":{"group_size":64,"bits":4}}"#;
    let q = from_config(mlx.as_bytes(), "config.json")
        .unwrap()
        .quantization
        .unwrap();
    assert_eq!(
        (q.value.as_str(), q.key.as_str()),
        ("4 bits, group 64 (MLX)", "quantization")
    );
    assert!(from_config(b"[]", "config.json")
        .unwrap_err()
        .contains("not a JSON object"));
}

#[cfg(unix)]
#[test]
fn a_fifo_by_a_models_file_name_is_refused_not_waited_on() {
    let dir = std::env::temp_dir().join(format!("swapsight-fit-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("config.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = read_capped(&fifo, MAX_CONFIG).unwrap_err();
    assert!(e.contains("a FIFO, not a file"), "{e}");
    assert!(read_capped(&dir, MAX_CONFIG)
        .unwrap_err()
        .contains("a folder"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hybrids_per_layer_kv_heads_say_which_blocks_are_recurrent() {
    // As llama.cpp writes Granite 4.0-H (granitehybrid): head_count_kv one
    // per block, 0 for a Mamba-2 block, and the ssm keys with a group count.
    let mut g = Gguf::new(3, 9);
    g.string("general.architecture", "granitehybrid")
        .u32("granitehybrid.block_count", 8)
        .u32("granitehybrid.attention.head_count", 12)
        .u32s(
            "granitehybrid.attention.head_count_kv",
            &[0, 0, 0, 4, 0, 0, 0, 4],
        )
        .u32("granitehybrid.embedding_length", 1536)
        .u32("granitehybrid.ssm.conv_kernel", 4)
        .u32("granitehybrid.ssm.state_size", 128)
        .u32("granitehybrid.ssm.group_count", 1)
        .u32("granitehybrid.ssm.inner_size", 3072);
    let d = gguf_describe::describe(&read_metadata(&g.0).unwrap(), "h.gguf");
    let kinds = d.kinds.as_ref().unwrap();
    assert_eq!((kinds.value.full, kinds.value.linear), (2, 6), "{kinds:?}");
    assert!(kinds.key.contains("6 of 8 are 0"), "{}", kinds.key);
    assert_eq!(d.kv_heads.as_ref().unwrap().value, 4);
    let r = d.recurrent.as_ref().unwrap();
    // llama.cpp's n_embd_s and n_embd_r (src/llama-hparams.cpp).
    assert_eq!(r.state_elements, 3072 * 128);
    assert_eq!(r.conv_elements, 3 * (3072 + 2 * 128));
    assert!(
        r.formula.contains("2 × 1 groups × 128 state"),
        "{}",
        r.formula
    );
    // Counts that do not match the blocks say nothing sure: every block is
    // taken as attention, as before.
    let mut g = Gguf::new(3, 3);
    g.string("general.architecture", "granitehybrid")
        .u32("granitehybrid.block_count", 8)
        .u32s("granitehybrid.attention.head_count_kv", &[0, 4]);
    let d = gguf_describe::describe(&read_metadata(&g.0).unwrap(), "h.gguf");
    assert_eq!(d.kinds.as_ref().unwrap().value.full, 8);
}
