//! What llama.cpp holds that its default estimate leaves out: with flash
//! attention off, a ubatch's attention scores.
//!
//! The estimate prices llama.cpp as llama-server runs it, `-fa auto`, which
//! turns flash attention on where the backend has it (the CPU, Metal,
//! CUDA): the scores are then computed a tile at a time. Off — llama-cpp-
//! python's default (`flash_attn=False`), `-fa off` — each layer's
//! `ggml_mul_mat(k, q)` materialises heads × ubatch × keys in f32 before
//! its softmax. On a GGUF Llama at 16k tokens that held 1.5 × the scores
//! past the flash-attention run (scripts/bench-fit llama.cpp,
//! docs/benchmarks.md), so the note says "at least".

use super::model::Description;
use crate::util::units::{format_bytes, thousands};

/// The note, where the model's heads are known and the context is past a
/// ubatch (below it the scores are a few MiB).
pub(crate) fn scores_note(d: &Description, tokens: u64, ubatch: u64) -> Option<String> {
    let heads = d.heads.as_ref()?.value;
    let rows = tokens.min(ubatch);
    let bytes = u128::from(heads) * u128::from(rows) * u128::from(tokens) * 4;
    let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
    (tokens > ubatch).then(|| {
        format!(
            "llama.cpp with flash attention off (llama-cpp-python's default flash_attn=False, \
             llama-server -fa off) also holds at least {} of attention scores: {heads} heads × \
             {} rows (n_ubatch) × {} keys × f32 4 B; this estimate is llama-server's default, \
             -fa auto, on where the backend has it",
            format_bytes(bytes),
            thousands(rows),
            thousands(tokens),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::model::config::from_config;
    use super::*;

    /// 16 heads, as the GGUF scripts/bench-fit llama.cpp runs (SCALE=8).
    const LLAMA: &str = r#"{"model_type":"llama","hidden_size":1024,"intermediate_size":3584,"num_attention_heads":16,"num_key_value_heads":4,"head_dim":64,"num_hidden_layers":4,"vocab_size":32000}"#;

    #[test]
    fn the_scores_grow_with_the_context_and_are_left_out_below_a_ubatch() {
        let d = from_config(LLAMA.as_bytes(), "config.json").unwrap();
        // 16 × 512 × 16,384 × 4 B = 512 MiB: the run measured 763 MiB more
        // without flash attention than with it.
        let note = scores_note(&d, 16_384, 512).unwrap();
        assert!(
            note.contains("at least 512 MiB of attention scores: 16 heads × 512 rows (n_ubatch) × 16,384 keys"),
            "{note}"
        );
        assert_eq!(scores_note(&d, 512, 512), None);
        assert!(scores_note(&d, u64::MAX, 512).unwrap().contains("at least"));
        let mut headless = d.clone();
        headless.heads = None;
        assert_eq!(scores_note(&headless, 16_384, 512), None);
    }
}
