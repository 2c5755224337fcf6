//! The plan's schema: what the need is made of, line by line, each with
//! the figures its formula took and the file each came from; the context
//! it was judged at; and the largest context under each bound.
//!
//! The JSON is read by the CLI's text, Python's `swapsight.fit()` and
//! tools that plan a run, so its names are kept stable and documented in
//! docs/fit.md ("JSON"); [`PLAN_VERSION`] changes when a field changes
//! meaning or goes away (a field added does not change it).

use serde::Serialize;

use super::BoundId;

/// The plan's version: 1 was the weights-only answer (it had no field for
/// its version), 2 itemises the need.
pub const PLAN_VERSION: u32 = 2;

/// Which line of the need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NeedId {
    /// The weights as they sit in memory.
    Weights,
    /// The KV cache of full-attention layers: grows with the context.
    KvCache,
    /// The KV cache of sliding-window layers: grows up to the window.
    KvCacheSliding,
    /// The compressed KV latent of multi-head latent attention (DeepSeek
    /// V2/V3).
    KvCacheLatent,
    /// The fixed state of linear-attention or state-space layers.
    RecurrentState,
    /// What the runtime materialises besides: one prefill chunk's
    /// activations, the logits it keeps.
    Runtime,
    /// The attention scores of one prefill step, where the runtime does
    /// not fuse attention (MLX on its CPU backend).
    AttentionScores,
}

/// One figure a formula took, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Input {
    /// What it is: `layers`, `kv_heads`, `head_dim`, `kv_dtype`, `tokens`.
    pub name: &'static str,
    /// Its value: a number, or a word (`bf16`).
    pub value: serde_json::Value,
    /// Where it came from: a file (`config.json`, a `.gguf`), a flag
    /// (`--context`), or `default` (with why, in the line's formula).
    pub source: String,
    /// The field in that file (`num_key_value_heads`,
    /// `llama.attention.head_count_kv`), where it came from one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Input {
    /// A number from a file's field.
    pub fn num(name: &'static str, value: u64, source: &str, key: &str) -> Input {
        Input {
            name,
            value: value.into(),
            source: source.to_string(),
            key: (!key.is_empty()).then(|| key.to_string()),
        }
    }

    /// A word from a file's field, a flag or a default.
    pub fn word(name: &'static str, value: &str, source: &str, key: &str) -> Input {
        Input {
            name,
            value: value.into(),
            source: source.to_string(),
            key: (!key.is_empty()).then(|| key.to_string()),
        }
    }
}

/// One line of the need: its bytes, the formula with its figures, and the
/// figures with their sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NeedLine {
    /// Which line.
    pub id: NeedId,
    /// Its name as the text says it (`KV cache`).
    pub name: &'static str,
    /// Its bytes at the context judged.
    pub bytes: u64,
    /// The formula with its figures, as the text prints it
    /// (`32 layers × 8 KV heads × 128 × 2 (K and V) × bf16 2 B × 131,072 tokens`).
    pub formula: String,
    /// Each figure the formula took.
    pub inputs: Vec<Input>,
}

/// The runtime whose buffers and cache layout the need assumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// Apple's MLX through mlx-lm (`generate_step`).
    Mlx,
    /// llama.cpp (and what is built on it: Ollama, LM Studio's GGUF engine).
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    /// PyTorch through transformers' `generate`.
    Torch,
}

impl Runtime {
    /// As `--runtime` takes it and the JSON says it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Mlx => "mlx",
            Runtime::LlamaCpp => "llama.cpp",
            Runtime::Torch => "torch",
        }
    }

    /// `--runtime`'s word; `None` for any other.
    pub fn parse(s: &str) -> Option<Runtime> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mlx" | "mlx-lm" => Some(Runtime::Mlx),
            "llama.cpp" | "llamacpp" | "llama-cpp" | "gguf" => Some(Runtime::LlamaCpp),
            "torch" | "pytorch" | "transformers" => Some(Runtime::Torch),
            _ => None,
        }
    }
}

/// The context the need was judged at, and the choices it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Context {
    /// Tokens per sequence.
    pub tokens: u64,
    /// `--context` was given; else a short context, [`SHORT_CONTEXT`] (or
    /// the model's maximum where it is shorter).
    pub asked: bool,
    /// Sequences held at once (`--parallel`).
    pub parallel: u64,
    /// The KV cache's element type (`bf16`, `q8_0`, `mlx-q4:64`).
    pub kv_dtype: String,
    /// Where it came from: `--kv-dtype`, or the default and why.
    pub kv_dtype_source: String,
    /// The runtime assumed.
    pub runtime: Runtime,
    /// Where it came from: `--runtime`, or the default and why.
    pub runtime_source: String,
}

/// The context judged when `--context` is not given: a chat's worth.
pub const SHORT_CONTEXT: u64 = 4096;

/// The largest context that keeps the need under one bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LargestAt {
    /// The bound.
    pub id: BoundId,
    /// Tokens per sequence; `null` where the need is over the bound at no
    /// context at all (the weights alone).
    pub tokens: Option<u64>,
    /// The search stopped at the model's own maximum: more would fit.
    pub at_model_max: bool,
}

/// The largest context under each bound, and the model's own maximum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Largest {
    /// The context the model was trained for, where its files say it.
    pub model_max_tokens: Option<u64>,
    /// Where that came from (`config.json: max_position_embeddings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_max_source: Option<String>,
    /// One per bound in `bounds`, in the same order.
    pub bounds: Vec<LargestAt>,
}
