//! Hugging Face's `config.json`: the fields transformers' and mlx-lm's
//! model classes read for the attention's shape, by the names model
//! families give them. A multimodal config's language model is its
//! `text_config`; what it does not say is looked for at the top.

use serde_json::{Map, Value};

use super::{Description, Field, LayerKinds, Mla, Recurrent};

struct Config<'a> {
    text: Option<&'a Map<String, Value>>,
    top: &'a Map<String, Value>,
    source: &'a str,
}

impl<'a> Config<'a> {
    /// The value of the first of `keys` set (not null), with its key as
    /// written (`text_config.num_hidden_layers`).
    fn get(&self, keys: &[&str]) -> Option<(&'a Value, String)> {
        let scopes = [(self.text, "text_config."), (Some(self.top), "")];
        scopes.into_iter().find_map(|(scope, prefix)| {
            let scope = scope?;
            keys.iter().find_map(|k| {
                scope
                    .get(*k)
                    .filter(|v| !v.is_null())
                    .map(|v| (v, format!("{prefix}{k}")))
            })
        })
    }

    fn count(&self, keys: &[&str]) -> Option<Field<u64>> {
        let (v, key) = self.get(keys)?;
        let n = v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        })?;
        Some(Field::new(n, self.source, key))
    }

    fn word(&self, keys: &[&str]) -> Option<Field<String>> {
        let (v, key) = self.get(keys)?;
        let s = crate::util::text::clean(v.as_str()?).into_owned();
        Some(Field::new(s, self.source, key))
    }
}

/// Reads a `config.json`'s bytes; `source` names the file in the plan.
pub fn from_config(bytes: &[u8], source: &str) -> Result<Description, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let top = v.as_object().ok_or("not a JSON object")?;
    let c = Config {
        text: top.get("text_config").and_then(Value::as_object),
        top,
        source,
    };
    let mut d = Description {
        source: source.to_string(),
        architecture: c.word(&["model_type"]),
        layers: c.count(&["num_hidden_layers", "n_layer", "num_layers", "n_layers"]),
        heads: c.count(&["num_attention_heads", "n_head", "num_heads"]),
        hidden: c.count(&["hidden_size", "n_embd", "d_model"]),
        intermediate: c.count(&["intermediate_size", "ffn_dim", "n_inner"]),
        vocab: c.count(&["vocab_size"]),
        max_context: c.count(&[
            "max_position_embeddings",
            "n_positions",
            "max_seq_len",
            "seq_length",
            "max_sequence_length",
        ]),
        experts: c.count(&["num_local_experts", "num_experts", "n_routed_experts"]),
        experts_used: c.count(&["num_experts_per_tok", "num_experts_per_token", "moe_topk"]),
        dtype: c.word(&["torch_dtype", "dtype"]).map(|f| Field {
            value: short_dtype(&f.value),
            ..f
        }),
        quantization: quantization(&c),
        ..Description::default()
    };
    d.kv_heads = c
        .count(&[
            "num_key_value_heads",
            "num_kv_heads",
            "n_head_kv",
            "multi_query_group_num",
        ])
        .or_else(|| {
            d.heads.clone().map(|h| Field {
                key: format!(
                    "{} (no num_key_value_heads: each head has its own K and V)",
                    h.key
                ),
                ..h
            })
        });
    d.key_dim = c
        .count(&["head_dim"])
        .or_else(|| match (&d.hidden, &d.heads) {
            (Some(h), Some(n)) if n.value > 0 => Some(Field::new(
                h.value / n.value,
                source,
                format!("{} / {}", h.key, n.key),
            )),
            _ => None,
        });
    d.value_dim = d.key_dim.clone();
    let sliding = c
        .get(&["use_sliding_window"])
        .and_then(|(v, _)| v.as_bool())
        != Some(false);
    d.sliding_window = c
        .count(&["sliding_window"])
        .filter(|w| sliding && w.value > 0);
    d.mla = mla(&c);
    d.kinds = kinds(&c, &d);
    d.recurrent = recurrent(&c, &d);
    Ok(d)
}

/// `bfloat16` → `bf16`.
fn short_dtype(s: &str) -> String {
    match s {
        "bfloat16" => "bf16",
        "float16" | "half" => "f16",
        "float32" | "float" => "f32",
        other => other,
    }
    .to_string()
}

/// MLX's `quantization: {bits, group_size}`, or transformers'
/// `quantization_config` (its method and bits).
fn quantization(c: &Config) -> Option<Field<String>> {
    if let Some((q, key)) = c.get(&["quantization"]).filter(|(v, _)| v.is_object()) {
        let bits = q.get("bits").and_then(Value::as_u64)?;
        let group = q.get("group_size").and_then(Value::as_u64).unwrap_or(64);
        return Some(Field::new(
            format!("{bits} bits, group {group} (MLX)"),
            c.source,
            key,
        ));
    }
    let (q, key) = c
        .get(&["quantization_config"])
        .filter(|(v, _)| v.is_object())?;
    let method = q
        .get("quant_method")
        .and_then(Value::as_str)
        .unwrap_or("quantized");
    let bits = q
        .get("bits")
        .or_else(|| q.get("weight_bits"))
        .and_then(Value::as_u64)
        .map_or(String::new(), |b| format!(", {b} bits"));
    let method = crate::util::text::clean(method);
    Some(Field::new(format!("{method}{bits}"), c.source, key))
}

fn mla(c: &Config) -> Option<Mla> {
    Some(Mla {
        kv_lora_rank: c.count(&["kv_lora_rank"]).filter(|r| r.value > 0)?,
        rope_dim: c.count(&["qk_rope_head_dim"])?,
        nope_dim: c.count(&["qk_nope_head_dim"]),
        v_dim: c.count(&["v_head_dim"]),
    })
}

/// Which layers keep what: `layer_types` where the config lists them (less
/// the last `num_kv_shared_layers`, which reuse an earlier layer's cache),
/// else the family's pattern.
fn kinds(c: &Config, d: &Description) -> Option<Field<LayerKinds>> {
    let layers = d.layers.as_ref()?.value;
    let mut k = LayerKinds::default();
    if let Some((Value::Array(types), key)) = c.get(&["layer_types"]) {
        let shared = c.count(&["num_kv_shared_layers"]).map_or(0, |s| s.value);
        let own = (types.len() as u64).saturating_sub(shared);
        for t in types.iter().take(own as usize) {
            match t.as_str().unwrap_or("") {
                "sliding_attention" => k.sliding += 1,
                "linear_attention" | "mamba" | "mamba2" | "ssm" | "conv" => k.linear += 1,
                _ => k.full += 1,
            }
        }
        if d.sliding_window.is_none() {
            k.full += std::mem::take(&mut k.sliding);
        }
        let how = if shared > 0 {
            format!("{key} less num_kv_shared_layers {shared}")
        } else {
            key
        };
        return Some(Field::new(k, c.source, how));
    }
    if let Some(every) = c
        .count(&["full_attention_interval"])
        .filter(|n| n.value > 0)
    {
        k.full = layers / every.value;
        k.linear = layers - k.full;
        return Some(Field::new(k, c.source, every.key));
    }
    if let Some((period, key)) = c.count(&["attn_layer_period"]).map(|p| (p.value, p.key)) {
        let offset = c.count(&["attn_layer_offset"]).map_or(0, |o| o.value);
        k.full = (0..layers)
            .filter(|i| period > 0 && i % period == offset)
            .count() as u64;
        k.linear = layers - k.full;
        return Some(Field::new(k, c.source, format!("{key}, attn_layer_offset")));
    }
    let arch = d.architecture.as_ref().map_or("", |a| a.value.as_str());
    if arch == "mamba" {
        k.linear = layers;
        return Some(Field::new(k, c.source, "model_type mamba"));
    }
    if d.sliding_window.is_none() {
        k.full = layers;
        return Some(Field::new(k, c.source, "every layer full attention"));
    }
    let pattern = c
        .count(&["sliding_window_pattern"])
        .filter(|p| p.value > 0)
        .map(|p| (p.value, p.key))
        .or_else(|| (arch == "gemma2").then(|| (2, "model_type gemma2: every other layer".into())));
    match pattern {
        Some((p, key)) => {
            k.full = layers / p;
            k.sliding = layers - k.full;
            Some(Field::new(k, c.source, key))
        }
        None => {
            k.sliding = layers;
            k.uniform_window = true;
            Some(Field::new(k, c.source, "sliding_window on every layer"))
        }
    }
}

/// The state of a linear-attention layer (Qwen3-Next's gated DeltaNet:
/// value heads × key dim × value dim, and a convolution over the last
/// kernel − 1 inputs of Q, K and V) or of a Mamba layer (d_inner × d_state,
/// and a convolution over d_inner).
fn recurrent(c: &Config, d: &Description) -> Option<Recurrent> {
    if d.kinds.as_ref()?.value.linear == 0 {
        return None;
    }
    if let (Some(nv), Some(dk), Some(dv)) = (
        c.count(&["linear_num_value_heads"]),
        c.count(&["linear_key_head_dim"]),
        c.count(&["linear_value_head_dim"]),
    ) {
        let nk = c
            .count(&["linear_num_key_heads"])
            .unwrap_or_else(|| nv.clone());
        let kernel =
            c.count(&["linear_conv_kernel_dim"])
                .unwrap_or(Field::new(4, c.source, "default 4"));
        let state = nv.value.checked_mul(dk.value)?.checked_mul(dv.value)?;
        let conv = kernel.value.saturating_sub(1).checked_mul(
            nk.value
                .checked_mul(dk.value)?
                .checked_mul(2)?
                .checked_add(nv.value.checked_mul(dv.value)?)?,
        )?;
        return Some(Recurrent {
            state_elements: state,
            conv_elements: conv,
            formula: format!(
                "{} value heads × {} × {} f32 + ({} − 1) × (2 × {} × {} + {} × {})",
                nv.value, dk.value, dv.value, kernel.value, nk.value, dk.value, nv.value, dv.value
            ),
            inputs: vec![
                nv.input("value_heads"),
                dk.input("key_head_dim"),
                dv.input("value_head_dim"),
                nk.input("key_heads"),
                kernel.input("conv_kernel"),
            ],
        });
    }
    let hidden = d.hidden.clone()?;
    let d_state = c.count(&["mamba_d_state", "state_size"])?;
    let d_conv = c
        .count(&["mamba_d_conv", "conv_kernel"])
        .unwrap_or(Field::new(4, c.source, "default 4"));
    let expand =
        c.count(&["mamba_expand", "expand"])
            .unwrap_or(Field::new(2, c.source, "default 2"));
    let inner = hidden.value.checked_mul(expand.value)?;
    Some(Recurrent {
        state_elements: inner.checked_mul(d_state.value)?,
        conv_elements: inner.checked_mul(d_conv.value.saturating_sub(1))?,
        formula: format!(
            "{} × {} (d_inner) × {} state f32 + ({} − 1) × {} d_inner",
            expand.value, hidden.value, d_state.value, d_conv.value, inner
        ),
        inputs: vec![
            hidden.input("hidden"),
            expand.input("expand"),
            d_state.input("d_state"),
            d_conv.input("d_conv"),
        ],
    })
}
