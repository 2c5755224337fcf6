//! The model's description, read from its own files before it is loaded:
//! Hugging Face's `config.json` ([`config`]), each safetensors header
//! ([`safetensors`]), a GGUF's metadata ([`gguf`]). The parsing is on
//! bytes and platform-free; this module only opens and reads, bounded:
//! regular files only, opened non-blocking (a FIFO named `config.json`
//! must not hang `fit`), and never more than a cap.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::plan::Input;
use super::Weights;

pub mod config;
pub mod gguf;
mod gguf_describe;
pub use gguf_describe::describe as from_gguf_metadata;
pub mod safetensors;

/// The largest `config.json` read: real ones are a few KB.
pub const MAX_CONFIG: u64 = 4 << 20;
/// The most of a GGUF read for its metadata (a 256k-token vocabulary and
/// its merges take about 10 MiB).
pub const MAX_GGUF_METADATA: u64 = 64 << 20;
/// The most read of all safetensors headers together.
pub const MAX_HEADERS_TOTAL: u64 = 256 << 20;

/// A figure and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Field<T> {
    /// The figure.
    pub value: T,
    /// The file (`config.json`, the GGUF's name).
    pub source: String,
    /// The field in it (`num_key_value_heads`), or how it was derived
    /// (`hidden_size / num_attention_heads`).
    pub key: String,
}

impl<T> Field<T> {
    pub(crate) fn new(value: T, source: &str, key: impl Into<String>) -> Field<T> {
        Field {
            value,
            source: source.to_string(),
            key: key.into(),
        }
    }
}

impl Field<u64> {
    /// As a plan's input.
    pub fn input(&self, name: &'static str) -> Input {
        Input::num(name, self.value, &self.source, &self.key)
    }
}

/// Which layers keep what.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayerKinds {
    /// Full attention: a KV entry per token of the context.
    pub full: u64,
    /// Sliding-window attention: a KV entry per token up to the window.
    pub sliding: u64,
    /// Linear attention or state-space: a fixed state.
    pub linear: u64,
    /// Every attention layer has the window and no pattern says which are
    /// global (Mistral 7B v0.1): runtimes differ on keeping it (kv.rs).
    pub uniform_window: bool,
}

/// Multi-head latent attention (DeepSeek V2/V3): the cache holds a
/// compressed latent and the rotary part of the key per token.
#[derive(Debug, Clone, PartialEq)]
pub struct Mla {
    /// `kv_lora_rank`.
    pub kv_lora_rank: Field<u64>,
    /// `qk_rope_head_dim`.
    pub rope_dim: Field<u64>,
    /// `qk_nope_head_dim` and `v_head_dim`: what a runtime that caches
    /// decompressed K and V holds per head.
    pub nope_dim: Option<Field<u64>>,
    /// `v_head_dim`.
    pub v_dim: Option<Field<u64>>,
}

/// The fixed state of one linear-attention or state-space layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Recurrent {
    /// Elements of the recurrent state (kept in float32 by mlx-lm and
    /// llama.cpp).
    pub state_elements: u64,
    /// Elements of the convolution's window (at the KV dtype).
    pub conv_elements: u64,
    /// The formula in words, with its figures.
    pub formula: String,
    /// Its figures.
    pub inputs: Vec<Input>,
}

/// What a model's files say of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Description {
    /// The file the layers came from.
    pub source: String,
    /// `model_type`, `general.architecture`.
    pub architecture: Option<Field<String>>,
    /// Transformer blocks.
    pub layers: Option<Field<u64>>,
    /// Query heads.
    pub heads: Option<Field<u64>>,
    /// K and V heads (fewer than the query heads under GQA).
    pub kv_heads: Option<Field<u64>>,
    /// Per head, of K.
    pub key_dim: Option<Field<u64>>,
    /// Per head, of V (K's where the file gives one only).
    pub value_dim: Option<Field<u64>>,
    /// The residual stream's width.
    pub hidden: Option<Field<u64>>,
    /// The MLP's inner width.
    pub intermediate: Option<Field<u64>>,
    /// Tokens in the vocabulary: the width of the logits.
    pub vocab: Option<Field<u64>>,
    /// The context the model was trained for.
    pub max_context: Option<Field<u64>>,
    /// Tokens a sliding-window layer keeps.
    pub sliding_window: Option<Field<u64>>,
    /// Which layers keep what, and the field that says so.
    pub kinds: Option<Field<LayerKinds>>,
    /// Multi-head latent attention, where the model has it.
    pub mla: Option<Mla>,
    /// The fixed state of its linear or state-space layers.
    pub recurrent: Option<Recurrent>,
    /// Experts per MoE layer: all are resident.
    pub experts: Option<Field<u64>>,
    /// Experts a token is routed to: read per token, not a memory discount.
    pub experts_used: Option<Field<u64>>,
    /// The weights' (and activations') type: `bf16`, `f16`, `f32`.
    pub dtype: Option<Field<String>>,
    /// Quantized weights, in words (`4 bits, group 64`, `Q4_K_M`).
    pub quantization: Option<Field<String>>,
    /// Read from a GGUF (llama.cpp's format).
    pub gguf: bool,
}

impl Description {
    /// Whether its architecture (`model_type`, `general.architecture`) is
    /// one of `any_of`.
    pub(crate) fn architecture_is(&self, any_of: &[&str]) -> bool {
        self.architecture
            .as_ref()
            .is_some_and(|a| any_of.contains(&a.value.as_str()))
    }
}

pub use crate::util::inpath::open_regular;

/// Up to `cap` bytes of a regular file from its start; `Err` with why.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let (file, len) = open_regular(path).map_err(|e| e.to_string())?;
    if len > cap {
        return Err(format!(
            "larger than {}: not read",
            crate::util::units::format_limit(cap)
        ));
    }
    let mut out = Vec::new();
    file.take(cap)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Where the counted file `rel` is, from the path given.
fn counted(root: &Path, rel: &str) -> PathBuf {
    if root.is_file() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// The description of the weights counted at `root`: a GGUF's metadata
/// where one was counted, else the `config.json` beside the first file
/// counted; with notes on what could not be read. One that does not say
/// the model's layers is none: nothing grows with the context then.
pub fn describe(root: &Path, w: &Weights) -> (Option<Description>, Vec<String>) {
    let (d, mut notes) = describe_any(root, w);
    match d {
        Some(d)
            if d.layers.is_none()
                || d.kv_heads.is_none()
                || (d.key_dim.is_none() && d.mla.is_none()) =>
        {
            notes.push(format!(
                "{} does not say the model's layers, KV heads and head dim: the KV cache is not counted",
                d.source
            ));
            (None, notes)
        }
        d => (d, notes),
    }
}

fn describe_any(root: &Path, w: &Weights) -> (Option<Description>, Vec<String>) {
    let mut notes = Vec::new();
    let Some(first) = w.files.first() else {
        return (None, notes);
    };
    if let Some(g) = w.files.iter().find(|f| f.path.ends_with(".gguf")) {
        let path = counted(root, &g.path);
        let name = shown_name(&path);
        return match gguf_describe::read(&path, &name) {
            Ok(d) => (Some(d), notes),
            Err(why) => {
                notes.push(format!(
                    "{name}: metadata not read ({why}): the KV cache is not counted"
                ));
                (None, notes)
            }
        };
    }
    let dir = counted(root, &first.path)
        .parent()
        .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
    let config = dir.join("config.json");
    if fs::symlink_metadata(&config).is_err() {
        notes.push(
            "no config.json beside the weights: the KV cache is not counted (give --context with a folder that has one)".into(),
        );
        return (None, notes);
    }
    match read_capped(&config, MAX_CONFIG).and_then(|b| config::from_config(&b, "config.json")) {
        Ok(d) => (Some(d), notes),
        Err(why) => {
            notes.push(format!(
                "config.json not read ({why}): the KV cache is not counted"
            ));
            (None, notes)
        }
    }
}

fn shown_name(path: &Path) -> String {
    path.file_name()
        .map(|n| crate::util::text::clean(&n.to_string_lossy()).into_owned())
        .unwrap_or_default()
}

/// Σ of the safetensors headers of the files counted at `root`, where
/// every one of them reads; else why the first did not.
pub fn sum_safetensors(
    root: &Path,
    w: &Weights,
) -> Result<Option<(safetensors::TensorSum, usize)>, String> {
    let mut total = safetensors::TensorSum::default();
    let mut files = 0;
    let mut read: u64 = 0;
    for f in w.files.iter().filter(|f| f.path.ends_with(".safetensors")) {
        let path = counted(root, &f.path);
        let shown = crate::util::text::clean(&f.path).into_owned();
        let one = (|| {
            let (file, len) = open_regular(&path).map_err(|e| e.to_string())?;
            let mut first = Vec::new();
            (&file)
                .take(8)
                .read_to_end(&mut first)
                .map_err(|e| e.to_string())?;
            let n = safetensors::header_len(&first, len)?;
            read = read.saturating_add(n);
            if read > MAX_HEADERS_TOTAL {
                return Err(format!(
                    "more than {} of headers in all: not read",
                    crate::util::units::format_limit(MAX_HEADERS_TOTAL)
                ));
            }
            let mut json = Vec::new();
            (&file)
                .take(n)
                .read_to_end(&mut json)
                .map_err(|e| e.to_string())?;
            safetensors::sum_header(&json, len - 8 - n)
        })();
        let s = one.map_err(|why| format!("{shown}: {why}"))?;
        total.tensors = total.tensors.saturating_add(s.tensors);
        total.elements = total.elements.saturating_add(s.elements);
        total.bytes = total.bytes.saturating_add(s.bytes);
        files += 1;
    }
    Ok((files > 0).then_some((total, files)))
}

#[cfg(test)]
mod tests;
