//! The KV cache per token, per kind of layer, at the KV dtype: full
//! attention keeps K and V of every token; sliding-window layers keep the
//! window; latent attention keeps one compressed vector; linear-attention
//! and state-space layers keep a fixed state.

use super::model::{Description, Field};
use super::plan::{Input, NeedId, NeedLine, Runtime};

/// The KV cache's element type, as bytes per block of elements: ggml's
/// `q8_0` is 32 int8 and an f16 scale (34 bytes per 32), `q4_0` 32 nibbles
/// and a scale (18 per 32); MLX's quantized cache (`kv_bits`,
/// `kv_group_size`) packs `bits` per element and keeps a scale and a bias
/// (2 bytes each) per group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvDtype {
    /// As `--kv-dtype` takes it: `bf16`, `q8_0`, `mlx-q4:64`.
    pub name: String,
    block_elements: u64,
    block_bytes: u64,
}

impl KvDtype {
    /// `--kv-dtype`'s word: `f16`, `bf16`, `f32`, `q8_0`, `q4_0`, or
    /// `mlx-qB[:G]` (B bits, 2 to 8; G the group, 64 by default as in
    /// mlx-lm).
    pub fn parse(s: &str) -> Result<KvDtype, String> {
        let t = s.trim().to_ascii_lowercase();
        let (elements, bytes) = match t.as_str() {
            "f16" | "fp16" | "float16" => (1, 2),
            "bf16" | "bfloat16" => (1, 2),
            "f32" | "fp32" | "float32" => (1, 4),
            "q8_0" => (32, 34),
            "q4_0" => (32, 18),
            _ => return Self::mlx(&t),
        };
        Ok(KvDtype {
            name: t
                .replace("fp", "f")
                .replace("float", "f")
                .replace("bfloat", "bf"),
            block_elements: elements,
            block_bytes: bytes,
        })
    }

    fn mlx(t: &str) -> Result<KvDtype, String> {
        let bad = || {
            format!(
                "unknown KV dtype '{}' (use f16, bf16, f32, q8_0, q4_0, or mlx-q8, mlx-q4:64 for MLX's quantized cache)",
                crate::util::text::clean(t)
            )
        };
        let rest = t.strip_prefix("mlx-q").ok_or_else(bad)?;
        let (bits, group) = rest.split_once(':').unwrap_or((rest, "64"));
        let bits: u64 = bits.parse().map_err(|_| bad())?;
        let group: u64 = group.parse().map_err(|_| bad())?;
        if !(2..=8).contains(&bits) || ![32, 64, 128].contains(&group) {
            return Err(format!(
                "{}: MLX quantizes to 2 to 8 bits in groups of 32, 64 or 128",
                crate::util::text::clean(t)
            ));
        }
        Ok(KvDtype {
            name: format!("mlx-q{bits}:{group}"),
            block_elements: group,
            block_bytes: group * bits / 8 + 4,
        })
    }

    /// Bytes of `elements` elements, rounded up.
    pub fn bytes(&self, elements: u64) -> u64 {
        let b = u128::from(elements) * u128::from(self.block_bytes);
        u64::try_from(b.div_ceil(u128::from(self.block_elements))).unwrap_or(u64::MAX)
    }

    /// `bf16 2 B`, `q8_0 1.0625 B`: the bytes of one element, as said.
    pub fn said(&self) -> String {
        let per = self.block_bytes as f64 / self.block_elements as f64;
        format!("{} {} B", self.name, trim(per))
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub use crate::util::units::thousands;

fn mul(parts: &[u64]) -> u64 {
    let p = parts
        .iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(u128::from(x)));
    p.and_then(|p| u64::try_from(p).ok()).unwrap_or(u64::MAX)
}

/// What the KV lines take besides the description.
pub struct KvAsk<'a> {
    /// Tokens per sequence, and where that came from.
    pub tokens: (u64, &'a str),
    /// Sequences, and where that came from.
    pub parallel: (u64, &'a str),
    /// The KV dtype, the file or flag it came from, and the field.
    pub dtype: (&'a KvDtype, &'a str, &'a str),
    /// The runtime: it decides how a uniform window and MLA are kept.
    pub runtime: Runtime,
}

impl KvAsk<'_> {
    fn tail(&self, inputs: &mut Vec<Input>, tokens: u64) -> String {
        inputs.push(Input::word(
            "kv_dtype",
            &self.dtype.0.name,
            self.dtype.1,
            self.dtype.2,
        ));
        inputs.push(Input::num("tokens", tokens, self.tokens.1, ""));
        inputs.push(Input::num("parallel", self.parallel.0, self.parallel.1, ""));
        let s = if self.parallel.0 == 1 { "" } else { "s" };
        format!(
            "{} × {} tokens × {} sequence{s}",
            self.dtype.0.said(),
            thousands(tokens),
            self.parallel.0
        )
    }
}

/// The KV lines of `d` at `ask`: one per kind of layer the model has.
pub fn kv_lines(d: &Description, ask: &KvAsk) -> Vec<NeedLine> {
    let mut out = Vec::new();
    let (Some(kinds), Some(kv_heads)) = (&d.kinds, &d.kv_heads) else {
        return out;
    };
    let k = &kinds.value;
    // mlx-lm and llama.cpp keep Mistral 7B v0.1's window in full (their
    // model code has no rotating cache for it); transformers' cache does not.
    // mlx-lm's gemma2 has no rotating cache either: every layer a KVCache.
    let kept_in_full = (k.uniform_window && ask.runtime != Runtime::Torch)
        || (ask.runtime == Runtime::Mlx && super::mlx::windowless(d));
    let full = k.full + if kept_in_full { k.sliding } else { 0 };
    let sliding = if kept_in_full { 0 } else { k.sliding };
    // The layer count's field, and the one that split the layers by kind
    // where they are not all full attention.
    let count_key = d.layers.as_ref().map_or("", |l| l.key.as_str());
    let key = if k.sliding == 0 && k.linear == 0 {
        count_key.to_string()
    } else {
        format!("{count_key}, {}", kinds.key)
    };
    let layers = |n: u64| Field::new(n, &kinds.source, key.clone());
    if full > 0 {
        if let Some(line) = full_line(d, ask, &layers(full), kv_heads, kept_in_full) {
            out.push(line);
        }
    }
    if let (true, Some(w)) = (sliding > 0, &d.sliding_window) {
        let tokens = match ask.runtime {
            Runtime::Mlx => super::mlx::sliding_tokens(ask.tokens.0, w.value),
            _ => ask.tokens.0.min(w.value),
        };
        if let Some(mut line) = attention_line(d, ask, &layers(sliding), kv_heads, tokens) {
            line.id = NeedId::KvCacheSliding;
            line.name = "KV cache (sliding)";
            line.inputs.push(w.input("sliding_window"));
            line.formula += &if ask.runtime == Runtime::Mlx && tokens > w.value {
                format!(
                    " (the window: {}, and one prefill step of {} less one: mlx-lm's rotating cache holds both while it prefills)",
                    thousands(w.value),
                    thousands(super::mlx::PREFILL_STEP)
                )
            } else {
                format!(" (the window: {})", thousands(w.value))
            };
            out.push(line);
        }
    }
    if let (true, Some(r)) = (k.linear > 0, &d.recurrent) {
        let per = mul(&[r.state_elements, 4]).saturating_add(ask.dtype.0.bytes(r.conv_elements));
        let mut inputs = vec![layers(k.linear).input("layers")];
        inputs.extend(r.inputs.iter().cloned());
        inputs.push(Input::num("parallel", ask.parallel.0, ask.parallel.1, ""));
        out.push(NeedLine {
            id: NeedId::RecurrentState,
            name: "recurrent state",
            bytes: mul(&[k.linear, per, ask.parallel.0]),
            formula: format!(
                "{} layers × ({}, the conv at {}) × {} sequence(s), whatever the context",
                k.linear, r.formula, ask.dtype.0.name, ask.parallel.0
            ),
            inputs,
        });
    }
    out
}

fn full_line(
    d: &Description,
    ask: &KvAsk,
    layers: &Field<u64>,
    kv_heads: &Field<u64>,
    kept_in_full: bool,
) -> Option<NeedLine> {
    if let (Some(m), false) = (&d.mla, ask.runtime == Runtime::Torch) {
        let per = ask
            .dtype
            .0
            .bytes(m.kv_lora_rank.value.saturating_add(m.rope_dim.value));
        let mut inputs = vec![
            layers.input("layers"),
            m.kv_lora_rank.input("kv_lora_rank"),
            m.rope_dim.input("qk_rope_head_dim"),
        ];
        let tail = ask.tail(&mut inputs, ask.tokens.0);
        return Some(NeedLine {
            id: NeedId::KvCacheLatent,
            name: "KV cache (latent)",
            bytes: mul(&[layers.value, per, ask.tokens.0, ask.parallel.0]),
            formula: format!(
                "{} layers × ({} latent + {} rope) × {tail}",
                layers.value, m.kv_lora_rank.value, m.rope_dim.value
            ),
            inputs,
        });
    }
    let mut line = attention_line(d, ask, layers, kv_heads, ask.tokens.0)?;
    if kept_in_full {
        line.formula += &format!(
            " ({} keeps every token: its sliding_window is not a rotating cache there)",
            ask.runtime.name()
        );
    }
    Some(line)
}

/// `layers × KV heads × (K + V dims) × dtype × tokens × sequences`; under
/// transformers a latent-attention model's K and V decompressed, per head.
fn attention_line(
    d: &Description,
    ask: &KvAsk,
    layers: &Field<u64>,
    kv_heads: &Field<u64>,
    tokens: u64,
) -> Option<NeedLine> {
    let mut inputs = vec![layers.input("layers"), kv_heads.input("kv_heads")];
    let (dims, said) = match &d.mla {
        Some(m) => {
            let nope = m.nope_dim.as_ref()?;
            let v = m.v_dim.as_ref()?;
            inputs.extend([
                nope.input("qk_nope_head_dim"),
                m.rope_dim.input("qk_rope_head_dim"),
                v.input("v_head_dim"),
            ]);
            let k = nope.value.saturating_add(m.rope_dim.value);
            (
                k.saturating_add(v.value),
                format!("({k} K + {} V) decompressed", v.value),
            )
        }
        None => {
            let k = d.key_dim.as_ref()?;
            let v = d.value_dim.as_ref().unwrap_or(k);
            inputs.push(k.input("head_dim"));
            if v.value != k.value {
                inputs.push(v.input("value_dim"));
                (
                    k.value.saturating_add(v.value),
                    format!("({} K + {} V)", k.value, v.value),
                )
            } else {
                (
                    k.value.saturating_mul(2),
                    format!("{} head dim × 2 (K and V)", k.value),
                )
            }
        }
    };
    let per = ask.dtype.0.bytes(kv_heads.value.saturating_mul(dims));
    let tail = ask.tail(&mut inputs, tokens);
    Some(NeedLine {
        id: NeedId::KvCache,
        name: "KV cache",
        bytes: mul(&[layers.value, per, tokens, ask.parallel.0]),
        formula: format!(
            "{} layers × {} KV heads × {said} × {tail}",
            layers.value, kv_heads.value
        ),
        inputs,
    })
}
