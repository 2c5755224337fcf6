//! MLX's scores and activations, as mlx-lm's prefill and MLX's sources
//! make them (the figures test_fit_mlx.py checks against real runs).

use super::super::model::config::from_config;
use super::*;

const SMALL_LLAMA: &str = r#"{"model_type":"llama","hidden_size":256,"intermediate_size":896,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":64,"num_hidden_layers":2,"vocab_size":32000,"torch_dtype":"float32"}"#;

fn described(config: &str) -> Description {
    from_config(config.as_bytes(), "config.json").unwrap()
}

#[test]
fn the_widest_step_is_the_last_full_one_or_the_rest_that_attends_to_all() {
    // 16,383 tokens prefilled: 7 steps of 2,048, then 2,047 attending to
    // all 16,383.
    assert_eq!(rows_by_keys(16_384, |e| e), (2047, 16_383));
    // 4,095 then 2,047: the second step attends to 4,095.
    assert_eq!(rows_by_keys(4096, |e| e), (2047, 4095));
    // 2,049 tokens: one full step; the rest (none) adds nothing.
    assert_eq!(rows_by_keys(2049, |e| e), (2048, 2048));
    assert_eq!(rows_by_keys(1024, |e| e), (1023, 1023));
    assert_eq!(rows_by_keys(1, |e| e), (0, 0));
    // A window of 512: the step and the window less one.
    assert_eq!(
        rows_by_keys(16_384, |e| e.min(512 + 2048 - 1)),
        (2048, 2559)
    );
}

#[test]
fn off_macos_the_scores_of_the_widest_step_and_their_mask_are_held() {
    let d = described(SMALL_LLAMA);
    let l = scores_line(&d, "linux", 16_384, "--context").unwrap();
    assert_eq!(l.bytes, 2047 * 16_383 * (4 * 4 + 1));
    assert!(l
        .formula
        .contains("MLX's CPU backend has no fused attention"));
    // The need test_fit_mlx.py measured: 706,560,069 bytes at 16k.
    let (row, _) = row_elements(&d).unwrap();
    assert_eq!(row, 3 * 896 + 5 * 256 + 4 * 4 * 64);
}

#[test]
fn metal_fuses_a_prompt_s_attention_for_its_head_dims_only() {
    let d = described(SMALL_LLAMA);
    assert!(scores_line(&d, "macos", 16_384, "").is_none());
    let wide = SMALL_LLAMA.replace("\"head_dim\":64", "\"head_dim\":256");
    let l = scores_line(&described(&wide), "macos", 16_384, "").unwrap();
    assert!(l.formula.contains("not 256"), "{}", l.formula);
}

#[test]
fn one_layer_never_attends_while_it_prefills() {
    let one = SMALL_LLAMA.replace("\"num_hidden_layers\":2", "\"num_hidden_layers\":1");
    assert!(scores_line(&described(&one), "linux", 16_384, "").is_none());
}

#[test]
fn routed_experts_multiply_the_mlp_s_rows() {
    let mixtral = r#"{"model_type":"mixtral","hidden_size":256,"intermediate_size":512,"num_attention_heads":4,"num_key_value_heads":1,"num_hidden_layers":2,"num_local_experts":8,"num_experts_per_tok":2,"vocab_size":32000,"torch_dtype":"float32"}"#;
    let (row, said) = row_elements(&described(mixtral)).unwrap();
    assert_eq!(row, 3 * 2 * 512 + 5 * 256 + 4 * 256 + 256);
    assert!(said.contains("2 routed experts"), "{said}");
    assert_eq!(sliding_tokens(16_384, 512), 2559);
    assert_eq!(sliding_tokens(300, 512), 300);
}

#[test]
fn global_and_sliding_layers_hold_the_sliding_mask_beside_the_scores() {
    // Gemma 3 as test_fit_mlx.py builds it: sliding, global, sliding.
    let gemma = r#"{"model_type":"gemma3_text","hidden_size":128,"intermediate_size":512,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":64,"num_hidden_layers":3,"sliding_window":512,"sliding_window_pattern":2,"vocab_size":32000,"torch_dtype":"float32"}"#;
    let d = described(gemma);
    // 16k: the last step's 2,047 rows after 14,336 tokens; the rotating
    // cache's offset is capped at 511.
    let l = scores_line(&d, "linux", 16_384, "").unwrap();
    assert_eq!(l.bytes, 2047 * 16_383 * (2 * 4 + 1) + 2047 * (511 + 2047));
    assert!(
        l.formula
            .contains("the sliding layers' mask, 2,047 rows × 2,558 keys"),
        "{}",
        l.formula
    );
    // 1k: one step from the start, past the window: an array of 1,023².
    let l = scores_line(&d, "linux", 1024, "").unwrap();
    assert_eq!(l.bytes, 1023 * 1023 * (2 * 4 + 1) + 1023 * 1023);
    // Within the window mlx-lm says "causal": no array.
    let l = scores_line(&d, "linux", 300, "").unwrap();
    assert_eq!(l.bytes, 299 * 299 * (2 * 4 + 1));
    assert!(!l.formula.contains("sliding layers' mask"));
    assert_eq!(sliding_mask_keys(2048, 14_336, 512), 2559);
    // Its MLP's GELU is a buffer of its own beside the gate and up.
    let (row, said) = row_elements(&d).unwrap();
    assert_eq!(row, 4 * 512 + 5 * 128 + 4 * 2 * 64);
    assert!(said.starts_with("(4 × 512 intermediate"), "{said}");
    assert_eq!(sliding_mask_keys(512, 0, 512), 0);
    assert_eq!(sliding_mask_keys(1, 4096, 512), 0);
    // Every layer windowed (Mistral 7B v0.1): one mask, already counted.
    let mistral = SMALL_LLAMA
        .replace("\"llama\"", "\"mistral\"")
        .replace("\"head_dim\":64", "\"head_dim\":64,\"sliding_window\":512");
    let l = scores_line(&described(&mistral), "linux", 16_384, "").unwrap();
    assert!(!l.formula.contains("sliding layers' mask"), "{}", l.formula);
}
