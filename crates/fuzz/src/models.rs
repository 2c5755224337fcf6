//! Inputs for the model target: the files `fit` reads from a model's folder
//! — a `config.json`, a safetensors file's header, a GGUF file's metadata —
//! laid out as their specs lay them (the Hugging Face config of real
//! architectures; huggingface/safetensors "Format"; ggml's docs/gguf.md),
//! then changed by the trace target's mutations: flipped bits, cuts,
//! out-of-range numbers, wrong types, inserted bytes.

use proptest::prelude::*;
use swapsight::synth::gguf::Gguf;

/// Which reader an input is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Config,
    Safetensors,
    Gguf,
}

/// `config.json`s of the architectures `fit` reads differently: full
/// attention, sliding windows (top level and in `text_config`), shared
/// layers, latent attention with experts, linear attention, MLX's
/// quantization, and an old GPT-2 naming.
const CONFIGS: [&str; 7] = [
    r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":131072,"vocab_size":128256,"torch_dtype":"bfloat16","rope_scaling":{"rope_type":"llama3","factor":8.0}}"#,
    r#"{"model_type":"gemma3","text_config":{"model_type":"gemma3_text","num_hidden_layers":62,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"sliding_window":1024,"sliding_window_pattern":6,"max_position_embeddings":131072},"vision_config":{"num_hidden_layers":27}}"#,
    r#"{"text_config":{"num_hidden_layers":6,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":256,"sliding_window":512,"num_kv_shared_layers":2,"layer_types":["sliding_attention","sliding_attention","full_attention","sliding_attention","sliding_attention","full_attention"]}}"#,
    r#"{"model_type":"deepseek_v3","num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"hidden_size":7168,"kv_lora_rank":512,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"n_routed_experts":256,"num_experts_per_tok":8,"vocab_size":129280}"#,
    r#"{"model_type":"qwen3_next","num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"hidden_size":2048,"full_attention_interval":4,"linear_num_value_heads":32,"linear_num_key_heads":16,"linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4,"max_position_embeddings":262144}"#,
    r#"{"model_type":"llama","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"vocab_size":32000,"quantization":{"group_size":64,"bits":4}}"#,
    r#"{"model_type":"gpt2","n_layer":12,"n_head":12,"n_embd":768,"n_positions":1024,"vocab_size":50257}"#,
];

/// A safetensors file: the header's length (u64, little-endian), the
/// header, then `data_len` bytes of data.
fn safetensors(json: &str, data_len: usize) -> Vec<u8> {
    let mut b = (json.len() as u64).to_le_bytes().to_vec();
    b.extend(json.as_bytes());
    b.extend(std::iter::repeat_n(0u8, data_len));
    b
}

/// The inputs the mutants start from, each with its reader.
pub fn seeds() -> Vec<(Kind, Vec<u8>)> {
    let mut out: Vec<(Kind, Vec<u8>)> = CONFIGS
        .iter()
        .map(|c| (Kind::Config, c.as_bytes().to_vec()))
        .collect();
    out.push((
        Kind::Safetensors,
        safetensors(
            r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"F32","shape":[4],"data_offsets":[12,28]},"c":{"dtype":"F4","shape":[3],"data_offsets":[28,30]}}"#,
            30,
        ),
    ));
    out.push((
        Kind::Safetensors,
        safetensors(
            r#"{"w":{"dtype":"U32","shape":[256,32],"data_offsets":[0,32768]},"s":{"dtype":"F16","shape":[256,4],"data_offsets":[32768,34816]}}"#,
            34816,
        ),
    ));
    out.push((Kind::Gguf, swapsight::synth::gguf::llama_31_8b()));
    let mut gemma = Gguf::new(3, 7);
    gemma
        .string("general.architecture", "gemma3")
        .u32("gemma3.block_count", 4)
        .u32s("gemma3.attention.head_count", &[8, 8, 8, 8])
        .u32s("gemma3.attention.head_count_kv", &[4, 4, 2, 4])
        .u32("gemma3.attention.key_length", 256)
        .u32("gemma3.attention.sliding_window", 1024)
        .u32("gemma3.context_length", 32768);
    out.push((Kind::Gguf, gemma.0));
    let mut hybrid = Gguf::new(3, 8);
    hybrid
        .string("general.architecture", "granitehybrid")
        .u32("granitehybrid.block_count", 4)
        .u32s("granitehybrid.attention.head_count_kv", &[0, 0, 0, 4])
        .u32("granitehybrid.embedding_length", 1536)
        .u32("granitehybrid.ssm.conv_kernel", 4)
        .u32("granitehybrid.ssm.state_size", 128)
        .u32("granitehybrid.ssm.group_count", 1)
        .u32("granitehybrid.ssm.inner_size", 3072);
    out.push((Kind::Gguf, hybrid.0));
    out
}

/// A model file's bytes for its reader: a seed with up to 6 of the trace
/// target's mutations, or raw bytes for any reader.
pub fn model_bytes() -> impl Strategy<Value = (Kind, Vec<u8>)> {
    let seeds = seeds();
    let n = seeds.len();
    let mutated = (
        0..n,
        proptest::collection::vec(crate::mutate::mutation(), 0..6),
    )
        .prop_map(move |(s, ms)| {
            let (kind, mut b) = seeds[s].clone();
            for m in &ms {
                m.apply(&mut b);
            }
            (kind, b)
        });
    let raw = (
        proptest::sample::select(&[Kind::Config, Kind::Safetensors, Kind::Gguf][..]),
        proptest::collection::vec(any::<u8>(), 0..512),
    );
    prop_oneof![9 => mutated, 1 => raw]
}
