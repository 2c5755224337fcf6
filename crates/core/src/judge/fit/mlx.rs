//! What MLX holds while mlx-lm prefills a prompt, past the weights and the
//! KV cache, as measured against mlx-lm's own model code on MLX's CPU
//! backend (python/tests/test_fit_mlx.py) and read from the sources:
//!
//! - `generate_step` (mlx_lm/generate.py) prefills all but the last token
//!   in steps of `prefill_step_size` (2,048) and evaluates only the cache,
//!   so the last layer's attention is never computed while it prefills.
//! - `mx.fast.scaled_dot_product_attention` has no fused kernel on the CPU
//!   backend (mlx/backend/no_gpu/primitives.cpp: `use_fallback` is always
//!   true), nor on Metal for head dims other than 64, 72, 80, 96 and 128
//!   (mlx/backend/metal/scaled_dot_product_attention.cpp): the fallback
//!   (mlx/fast.cpp) materialises the scores, heads × rows × keys in the
//!   model's dtype, and its causal mask, rows × keys booleans.
//! - MLX's evaluation allocates the outputs of up to 10 operations ahead
//!   of the ones running (`MAX_ACTIVE_TASKS`, mlx/transforms.cpp): while a
//!   layer's scores are held, the rest of that layer's activations are
//!   already allocated: the attention's output and its copy, the output
//!   projection, the residual and the norm, the MLP's gate, up and their
//!   product (per routed expert), its down projection.
//! - A sliding-window layer's rotating cache holds the window and the
//!   whole step while it prefills ("the largest size is max_size + S − 1",
//!   `RotatingKVCache._update_concat`, mlx_lm/models/cache.py).
//! - A model with both global and sliding-window layers (gemma3_text,
//!   gpt_oss, cohere2, olmo3, … in mlx_lm/models) makes its masks once per
//!   step, before its layers run: the global one is the string "causal",
//!   the sliding one an array of rows × (the window less one, or the
//!   tokens before the step where fewer, + rows) booleans wherever that
//!   passes the window (`RotatingKVCache.make_mask`, mlx_lm/models/cache.py),
//!   held through every layer of the step.

use super::model::Description;
use super::plan::{Input, NeedId, NeedLine};
use crate::util::units::thousands;

/// mlx-lm's `generate_step` prefills in steps of this many tokens
/// (`prefill_step_size`).
pub(crate) const PREFILL_STEP: u64 = 2048;

/// Head dims Metal's fused prefill attention takes (query and value the
/// same); 192 and 256 have a kernel but MLX runs the unfused path for a
/// prompt (`use_fallback`).
const METAL_FUSED_HEAD_DIMS: [u64; 5] = [64, 72, 80, 96, 128];

/// Architectures whose mlx-lm model code ignores their sliding window:
/// gemma2 (mlx_lm/models/gemma2.py) makes no cache of its own, so
/// `make_prompt_cache` gives every layer a full `KVCache`, and computes
/// attention by hand (its soft-capping) with one mask for every layer.
const WINDOWLESS: [&str; 1] = ["gemma2"];

/// Whether mlx-lm keeps every token of `d`'s sliding layers and computes
/// its attention by hand on every backend.
pub(crate) fn windowless(d: &Description) -> bool {
    d.architecture_is(&WINDOWLESS)
}

/// Tokens a sliding-window layer holds while a prompt of `tokens` is
/// prefilled: the window and one step, less one.
pub(crate) fn sliding_tokens(tokens: u64, window: u64) -> u64 {
    tokens.min(
        window
            .saturating_add(tokens.min(PREFILL_STEP))
            .saturating_sub(1),
    )
}

/// Bytes of one element of the activations: the model's dtype (f32, or
/// half precision otherwise).
pub(crate) fn act_bytes(d: &Description) -> u64 {
    match d.dtype.as_ref().map(|t| t.value.as_str()) {
        Some("f32") => 4,
        _ => 2,
    }
}

/// The widest product of a prefill step's rows and the keys they attend
/// to: `keys` maps the tokens held after a step (the step's included) to
/// the keys a layer attends to.
fn rows_by_keys(tokens: u64, keys: impl Fn(u64) -> u64) -> (u64, u64) {
    let n = tokens.saturating_sub(1);
    let full = n / PREFILL_STEP;
    let rest = n % PREFILL_STEP;
    let mut best = (0, 0);
    if full > 0 {
        let end = full * PREFILL_STEP;
        best = (PREFILL_STEP, keys(end));
    }
    if rest > 0 && u128::from(rest) * u128::from(keys(n)) > u128::from(best.0) * u128::from(best.1)
    {
        best = (rest, keys(n));
    }
    best
}

/// Keys of the sliding layers' mask in a step of `rows` after `before`
/// tokens, or 0 where mlx-lm says "causal" instead of making one: the
/// rotating cache's offset is capped at the window less one, and an array
/// is made only where that and the rows pass the window
/// (`RotatingKVCache.make_mask`).
fn sliding_mask_keys(rows: u64, before: u64, window: u64) -> u64 {
    let keys = before.min(window.saturating_sub(1)).saturating_add(rows);
    if rows > 1 && keys > window {
        keys
    } else {
        0
    }
}

/// Why the attention runs unfused, or `None` where Metal fuses it.
fn unfused(d: &Description, os: &str) -> Option<String> {
    if windowless(d) {
        return Some("mlx-lm's gemma2 computes attention by hand, for its soft-capping".into());
    }
    if os != "macos" {
        return Some("MLX's CPU backend has no fused attention".into());
    }
    let k = d.key_dim.as_ref()?.value;
    let v = d.value_dim.as_ref().map_or(k, |v| v.value);
    (k != v || !METAL_FUSED_HEAD_DIMS.contains(&k)).then(|| {
        format!("Metal fuses a prompt's attention for head dims 64, 72, 80, 96 and 128, not {k}")
    })
}

/// The attention scores and mask of the widest prefill step, where MLX
/// runs attention unfused; `None` where it fuses it, or where no layer
/// but the last attends (mlx-lm never computes that one's while it
/// prefills).
pub(crate) fn scores_line(
    d: &Description,
    os: &str,
    tokens: u64,
    source: &str,
) -> Option<NeedLine> {
    let why = unfused(d, os)?;
    let heads = d.heads.as_ref()?;
    let kinds = &d.kinds.as_ref()?.value;
    if kinds.full + kinds.sliding < 2 && kinds.linear == 0 {
        return None;
    }
    let full = kinds.full > 0 || (kinds.uniform_window && kinds.sliding > 0);
    let mixed = kinds.full > 0 && kinds.sliding > 0 && !kinds.uniform_window && !windowless(d);
    let (rows, keys, said) = match (&d.sliding_window, full) {
        (Some(w), false) => {
            let (r, k) = rows_by_keys(tokens, |end| {
                end.min(
                    w.value
                        .saturating_add(PREFILL_STEP.min(end))
                        .saturating_sub(1),
                )
            });
            (
                r,
                k,
                format!(" (the window {} and the step)", thousands(w.value)),
            )
        }
        _ => {
            let (r, k) = rows_by_keys(tokens, |end| end);
            (r, k, String::new())
        }
    };
    let act = act_bytes(d);
    let cells = u128::from(rows) * u128::from(keys);
    let window_mask = match (&d.sliding_window, mixed) {
        (Some(w), true) => sliding_mask_keys(rows, keys.saturating_sub(rows), w.value),
        _ => 0,
    };
    let mask_cells = u128::from(rows) * u128::from(window_mask);
    let bytes = cells * (u128::from(heads.value) * u128::from(act) + 1) + mask_cells;
    let mask_said = if window_mask > 0 {
        format!(
            " + the sliding layers' mask, {} rows × {} keys, 1 B a cell",
            thousands(rows),
            thousands(window_mask)
        )
    } else {
        String::new()
    };
    Some(NeedLine {
        id: NeedId::AttentionScores,
        name: "attention scores",
        bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
        formula: format!(
            "{} heads × {} rows × {} keys{said} × {act} B + the causal mask, 1 B a cell{mask_said}: \
             {why} (the widest prefill step of {} tokens; one layer's at a time)",
            heads.value,
            thousands(rows),
            thousands(keys),
            thousands(PREFILL_STEP),
        ),
        inputs: vec![
            heads.input("heads"),
            Input::num("rows", rows, source, ""),
            Input::num("keys", keys, source, ""),
        ],
    })
}

/// Families whose MLP is `gelu(gate_proj(x)) * up_proj(x)` in mlx-lm
/// (gemma.py, gemma2.py, gemma3_text.py): the GELU is compiled on its own,
/// so its output is a buffer beside the gate and up, where Llama's fused
/// `swiglu` writes over one of them (measured: a Gemma MLP's peak over 2,047
/// rows is one intermediate-wide array more than Llama's).
const GELU_APART: [&str; 4] = ["gemma", "gemma2", "gemma3", "gemma3_text"];

fn gelu_apart(d: &Description) -> bool {
    d.architecture_is(&GELU_APART)
}

/// Elements of one prefill row's activations allocated at once: the MLP's
/// gate, up and their product (per routed expert; and the GELU's own
/// output where it is apart) and its down
/// projection's output per expert, the residual stream's five (attention
/// output projection, sum, norm, MLP sum, the next norm) and four of the
/// attention's width (queries, scaled queries, the output and its copy).
pub(crate) fn row_elements(d: &Description) -> Option<(u64, String)> {
    let hidden = d.hidden.as_ref()?.value;
    let inter = d.intermediate.as_ref().map_or(hidden, |i| i.value);
    let routed = d.experts_used.as_ref().map_or(1, |u| u.value.max(1));
    let q = match (&d.heads, &d.key_dim) {
        (Some(h), Some(k)) => h.value.saturating_mul(k.value),
        _ => hidden,
    };
    let per_expert = if gelu_apart(d) { 4u64 } else { 3 };
    let mlp = per_expert.saturating_mul(routed).saturating_mul(inter);
    let extra = (routed - 1).saturating_mul(hidden);
    let total = mlp
        .saturating_add(5u64.saturating_mul(hidden))
        .saturating_add(4u64.saturating_mul(q))
        .saturating_add(extra);
    let experts = if routed > 1 {
        format!("{routed} routed experts × ")
    } else {
        String::new()
    };
    let said = format!(
        "({per_expert} × {experts}{} intermediate + 5 × {} hidden + 4 × {} attention width{})",
        thousands(inter),
        thousands(hidden),
        thousands(q),
        if extra > 0 {
            format!(" + {} more routed hidden", thousands(extra))
        } else {
            String::new()
        }
    );
    Some((total, said))
}

#[cfg(test)]
#[path = "mlx_tests.rs"]
mod tests;
