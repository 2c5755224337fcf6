//! A GGUF's metadata as a [`Description`]: llama.cpp's keys
//! (`general.architecture`, then `{arch}.block_count`,
//! `{arch}.attention.head_count_kv`…, ggml's docs/gguf.md "LLM").

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use super::gguf::{file_type_name, read_metadata, GgufError, Value};
use super::{open_regular, Description, Field, LayerKinds, Mla, Recurrent, MAX_GGUF_METADATA};

/// Reads the metadata at the start of the GGUF at `path`, a MiB first and
/// more while it runs on, up to [`MAX_GGUF_METADATA`].
pub fn read(path: &Path, name: &str) -> Result<Description, String> {
    let (file, len) = open_regular(path).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut want: u64 = 1 << 20;
    loop {
        let have = buf.len() as u64;
        (&file)
            .take(want.min(len).saturating_sub(have))
            .read_to_end(&mut buf)
            .map_err(|e| e.to_string())?;
        match read_metadata(&buf) {
            Ok(m) => return Ok(describe(&m, name)),
            Err(GgufError::Bad(why)) => return Err(why),
            Err(GgufError::Truncated) if (buf.len() as u64) < len.min(MAX_GGUF_METADATA) => {
                want = want.saturating_mul(4).min(MAX_GGUF_METADATA);
            }
            Err(GgufError::Truncated) if len <= MAX_GGUF_METADATA => {
                return Err("the file ends inside its metadata".into())
            }
            Err(GgufError::Truncated) => {
                return Err(format!(
                    "metadata larger than {}: not read",
                    crate::util::units::format_limit(MAX_GGUF_METADATA)
                ))
            }
        }
    }
}

/// The description a GGUF's metadata gives; `source` names the file.
pub fn describe(m: &BTreeMap<String, Value>, source: &str) -> Description {
    let arch = match m.get("general.architecture") {
        Some(Value::Text(a)) => crate::util::text::clean(a).into_owned(),
        _ => String::new(),
    };
    let count = |suffix: &str| -> Option<Field<u64>> {
        let key = format!("{arch}.{suffix}");
        let v = m.get(&key)?.count()?;
        Some(Field::new(v, source, key))
    };
    let mut d = Description {
        source: source.to_string(),
        gguf: true,
        architecture: (!arch.is_empty())
            .then(|| Field::new(arch.clone(), source, "general.architecture")),
        layers: count("block_count"),
        heads: count("attention.head_count"),
        hidden: count("embedding_length"),
        intermediate: count("feed_forward_length"),
        max_context: count("context_length"),
        experts: count("expert_count"),
        experts_used: count("expert_used_count"),
        sliding_window: count("attention.sliding_window").filter(|w| w.value > 0),
        ..Description::default()
    };
    d.vocab = count("vocab_size").or_else(|| match m.get("tokenizer.ggml.tokens") {
        Some(Value::Array { len, .. }) => Some(Field::new(
            *len,
            source,
            "tokenizer.ggml.tokens (its length)",
        )),
        _ => None,
    });
    d.kv_heads = count("attention.head_count_kv").or_else(|| d.heads.clone());
    let per_head = match (&d.hidden, &d.heads) {
        (Some(h), Some(n)) if n.value > 0 => Some(Field::new(
            h.value / n.value,
            source,
            format!("{} / {}", h.key, n.key),
        )),
        _ => None,
    };
    d.key_dim = count("attention.key_length").or_else(|| per_head.clone());
    d.value_dim = count("attention.value_length").or(per_head);
    if let Some(Value::Int(t)) = m.get("general.file_type") {
        let t = u64::try_from(*t).unwrap_or(u64::MAX);
        d.quantization = Some(Field::new(file_type_name(t), source, "general.file_type"));
    }
    if let (Some(rank), Some(rope)) = (
        count("attention.kv_lora_rank"),
        count("rope.dimension_count"),
    ) {
        d.mla = Some(Mla {
            kv_lora_rank: rank,
            rope_dim: rope,
            nope_dim: None,
            v_dim: None,
        });
    }
    d.kinds = per_layer_kinds(m, &arch, &d, source).or_else(|| kinds(&arch, &d, source));
    d.recurrent = ssm(&count);
    d
}

/// A hybrid's layers from its per-layer KV head counts: llama.cpp writes
/// `attention.head_count_kv` as an array, one count per block, 0 for a
/// recurrent (state-space or linear-attention) block (Jamba, Granite 4.0
/// hybrids, Nemotron-H, Falcon-H1, LFM2). Taking the array's largest count
/// for every block would count each recurrent block as attention.
fn per_layer_kinds(
    m: &BTreeMap<String, Value>,
    arch: &str,
    d: &Description,
    source: &str,
) -> Option<Field<LayerKinds>> {
    let key = format!("{arch}.attention.head_count_kv");
    let Some(Value::Array { len, ints }) = m.get(&key) else {
        return None;
    };
    let layers = d.layers.as_ref()?.value;
    // Every block's count read, one per block, else the array says nothing
    // sure of which is which.
    if *len != layers || ints.len() as u64 != layers {
        return None;
    }
    let recurrent = ints.iter().filter(|&&n| n == 0).count() as u64;
    if recurrent == 0 {
        return None;
    }
    let k = LayerKinds {
        full: layers - recurrent,
        linear: recurrent,
        ..LayerKinds::default()
    };
    Some(Field::new(
        k,
        source,
        format!("{key} (per block: {recurrent} of {layers} are 0, recurrent)"),
    ))
}

/// llama.cpp keeps a window for Gemma 2 (every other layer) and Gemma 3
/// (five of six): the patterns its model code sets; other architectures
/// with a `sliding_window` key are counted in full, as llama.cpp keeps
/// them. Mamba's layers are all state.
fn kinds(arch: &str, d: &Description, source: &str) -> Option<Field<LayerKinds>> {
    let layers = d.layers.as_ref()?.value;
    let mut k = LayerKinds::default();
    let (every, how) = match (arch, &d.sliding_window) {
        ("mamba" | "mamba2", _) => {
            k.linear = layers;
            return Some(Field::new(
                k,
                source,
                format!("general.architecture {arch}"),
            ));
        }
        ("gemma2", Some(_)) => (2, "gemma2: every other layer (llama.cpp)"),
        ("gemma3", Some(_)) => (6, "gemma3: one layer in six full (llama.cpp)"),
        _ => {
            k.full = layers;
            return Some(Field::new(k, source, "every layer full attention"));
        }
    };
    k.full = layers / every;
    k.sliding = layers - k.full;
    Some(Field::new(k, source, how))
}

/// A state-space block's fixed state as llama.cpp keeps it: the SSM state,
/// `d_inner × d_state` (Mamba-2: heads × head dim × state, the same
/// product), and the convolution's last `d_conv − 1` inputs, `d_inner`
/// wide, and under Mamba-2 also its B and C, `2 × groups × d_state`
/// (`ssm.group_count`; llama.cpp's `n_embd_r`, src/llama-hparams.cpp).
fn ssm(count: &dyn Fn(&str) -> Option<Field<u64>>) -> Option<Recurrent> {
    let inner = count("ssm.inner_size")?;
    let state = count("ssm.state_size")?;
    let conv = count("ssm.conv_kernel")?;
    let groups = count("ssm.group_count").filter(|g| g.value > 0);
    let bc = match &groups {
        Some(g) => g.value.checked_mul(state.value)?.checked_mul(2)?,
        None => 0,
    };
    let width = inner.value.checked_add(bc)?;
    let conv_words = match &groups {
        Some(g) => format!(
            "({} d_inner + 2 × {} groups × {} state)",
            inner.value, g.value, state.value
        ),
        None => format!("{} d_inner", inner.value),
    };
    let mut inputs = vec![
        inner.input("d_inner"),
        state.input("d_state"),
        conv.input("d_conv"),
    ];
    inputs.extend(groups.as_ref().map(|g| g.input("groups")));
    Some(Recurrent {
        state_elements: inner.value.checked_mul(state.value)?,
        conv_elements: width.checked_mul(conv.value.saturating_sub(1))?,
        formula: format!(
            "{} d_inner × {} state f32 + ({} − 1) × {conv_words}",
            inner.value, state.value, conv.value
        ),
        inputs,
    })
}
