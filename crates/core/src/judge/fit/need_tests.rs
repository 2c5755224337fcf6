//! The need at a context, from configs as the model families write them:
//! the KV cache per kind of layer, at each KV dtype and runtime, and the
//! largest context under each bound.

use super::super::model::config::from_config;
use super::super::{plan, Described, Figures, Model, Verdict};
use super::*;
use crate::probe::SystemSample;

const GIB: u64 = 1 << 30;

const LLAMA_31_8B: &str = r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":131072,"vocab_size":128256,"torch_dtype":"bfloat16"}"#;

/// Llama-3.1-8B-Instruct's four shards: 16,060,522,496 bytes of bf16.
const LLAMA_WEIGHTS: u64 = 16_060_522_496;

/// A 23.5 GiB Linux machine with 22.8 GiB free, as the issue's.
fn linux() -> Figures {
    Figures {
        os: "linux".into(),
        system: SystemSample {
            phys_bytes: 25_198_522_368,
            free_pct: 97.0,
            page_size: 4096,
            ..SystemSample::default()
        },
        ..Figures::default()
    }
}

fn described(config: &str) -> Described {
    Described {
        description: Some(from_config(config.as_bytes(), "config.json").unwrap()),
        ..Described::default()
    }
}

fn weights(bytes: u64) -> Model {
    Model::Size {
        bytes,
        given: "15G".into(),
    }
}

/// The answer for weights of `bytes` described by `d`, on [`linux`].
fn on_linux(d: &Described, bytes: u64, ask: &Ask) -> super::super::Answer {
    plan(weights(bytes), d, None, &linux(), ask)
}

fn line(lines: &[NeedLine], id: NeedId) -> &NeedLine {
    lines
        .iter()
        .find(|l| l.id == id)
        .unwrap_or_else(|| panic!("no {id:?} in {lines:#?}"))
}

fn ask(context: u64, runtime: Runtime) -> Ask {
    Ask {
        context: Some(context),
        runtime: Some(runtime),
        ..Ask::default()
    }
}

#[test]
fn llama_31_8b_at_128k_needs_16_gib_of_kv_cache_and_does_not_fit_in_23_gb() {
    let d = described(LLAMA_31_8B);
    let a = on_linux(&d, LLAMA_WEIGHTS, &ask(131_072, Runtime::Mlx));
    let kv = line(&a.need, NeedId::KvCache);
    assert_eq!(kv.bytes, 16 * GIB);
    assert_eq!(
        kv.formula,
        "32 layers × 8 KV heads × 128 head dim × 2 (K and V) × bf16 2 B × 131,072 tokens × 1 sequence"
    );
    let heads = kv.inputs.iter().find(|i| i.name == "kv_heads").unwrap();
    assert_eq!(
        (heads.source.as_str(), heads.key.as_deref()),
        ("config.json", Some("num_key_value_heads"))
    );
    let dtype = kv.inputs.iter().find(|i| i.name == "kv_dtype").unwrap();
    assert_eq!(
        (dtype.source.as_str(), dtype.key.as_deref()),
        ("config.json", Some("torch_dtype"))
    );
    assert_eq!(a.verdict, Verdict::DoesNotFit, "{}", a.to_text());
    assert_eq!(a.model_bytes, LLAMA_WEIGHTS);
    let sum: u64 = a.need.iter().map(|l| l.bytes).sum();
    assert_eq!(a.needed_bytes, sum);
    // mlx-lm's prefill step of 2,048 tokens, the activations MLX
    // allocates at once (mlx.rs), and the last token's logits.
    let rt = line(&a.need, NeedId::Runtime);
    assert_eq!(
        rt.bytes,
        2048 * (3 * 14336 + 5 * 4096 + 4 * 32 * 128) * 2 + 128_256 * 4
    );

    let a = on_linux(&d, LLAMA_WEIGHTS, &ask(8192, Runtime::Mlx));
    assert_eq!(line(&a.need, NeedId::KvCache).bytes, GIB);
    assert_eq!(a.verdict, Verdict::Fits, "{}", a.to_text());
    let c = a.context.as_ref().unwrap();
    assert_eq!(
        (c.tokens, c.asked, c.kv_dtype.as_str()),
        (8192, true, "bf16")
    );
}

#[test]
fn the_largest_context_is_the_last_token_count_under_each_bound() {
    let d = described(LLAMA_31_8B);
    let a = on_linux(&d, LLAMA_WEIGHTS, &Ask::default());
    // Without --context: a short one, and the model's maximum said.
    let c = a.context.as_ref().unwrap();
    assert_eq!((c.tokens, c.asked), (plan::SHORT_CONTEXT, false));
    assert_eq!(c.runtime, Runtime::Torch, "{}", c.runtime_source);
    let largest = a.largest_context.as_ref().unwrap();
    assert_eq!(largest.model_max_tokens, Some(131_072));
    let sizer = Sizer::new(
        &weights(LLAMA_WEIGHTS),
        d.description.as_ref(),
        None,
        &Ask::default(),
        "linux",
    );
    for (at, b) in largest.bounds.iter().zip(&a.bounds) {
        let t = at.tokens.unwrap();
        assert!(!at.at_model_max);
        assert!(
            sizer.total(t) <= b.bytes && sizer.total(t + 1) > b.bytes,
            "{at:?} {b:?}"
        );
    }
    let text = a.to_text();
    assert!(text.contains("context: fits up to "), "{text}");
    assert!(
        text.contains("the model's own maximum is 131,072 (config.json: max_position_embeddings)"),
        "{text}"
    );
    // Past the model's own maximum: said.
    let a = on_linux(&d, GIB, &ask(200_000, Runtime::Mlx));
    assert!(
        a.notes.iter().any(|n| n
            == "200,000 tokens is past the model's own maximum, 131,072 (config.json: max_position_embeddings)"),
        "{:?}",
        a.notes
    );
    // Weights alone over a bound: no context fits under it.
    let a = on_linux(&d, 40 * GIB, &Ask::default());
    assert!(a
        .largest_context
        .unwrap()
        .bounds
        .iter()
        .all(|b| b.tokens.is_none()));
    // A small model fits its whole context (under llama.cpp: MLX's CPU
    // backend would hold 17 GiB of attention scores at 128k).
    let a = on_linux(&d, GIB, &ask(1, Runtime::LlamaCpp));
    let l = a.largest_context.unwrap();
    assert_eq!(
        (l.bounds[0].tokens, l.bounds[0].at_model_max),
        (Some(131_072), true)
    );
}

#[test]
fn sliding_window_layers_stop_growing_at_the_window() {
    let g3 = r#"{"text_config":{"model_type":"gemma3_text","num_hidden_layers":62,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"hidden_size":5376,"sliding_window":1024,"sliding_window_pattern":6,"max_position_embeddings":131072,"torch_dtype":"bfloat16"}}"#;
    let d = described(g3);
    let at = |t| on_linux(&d, GIB, &ask(t, Runtime::Mlx)).need;
    let per_layer_token = 16 * 128 * 2 * 2;
    let (small, large) = (at(512), at(65_536));
    assert_eq!(
        line(&small, NeedId::KvCacheSliding).bytes,
        52 * per_layer_token * 512
    );
    // mlx-lm's rotating cache holds the window and a prefill step.
    assert_eq!(
        line(&large, NeedId::KvCacheSliding).bytes,
        52 * per_layer_token * (1024 + 2048 - 1)
    );
    let torch = on_linux(&d, GIB, &ask(65_536, Runtime::Torch)).need;
    assert_eq!(
        line(&torch, NeedId::KvCacheSliding).bytes,
        52 * per_layer_token * 1024
    );
    assert_eq!(
        line(&large, NeedId::KvCache).bytes,
        10 * per_layer_token * 65_536
    );
    // Mistral 7B v0.1: every layer has the window; mlx-lm keeps it all,
    // transformers' cache keeps the window.
    let mistral = r#"{"model_type":"mistral","num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"hidden_size":4096,"sliding_window":4096,"torch_dtype":"bfloat16"}"#;
    let d = described(mistral);
    let mlx = on_linux(&d, GIB, &ask(32_768, Runtime::Mlx)).need;
    assert_eq!(line(&mlx, NeedId::KvCache).bytes, 32 * 8 * 128 * 4 * 32_768);
    assert!(line(&mlx, NeedId::KvCache)
        .formula
        .contains("keeps every token"));
    let torch = on_linux(&d, GIB, &ask(32_768, Runtime::Torch)).need;
    assert_eq!(
        line(&torch, NeedId::KvCacheSliding).bytes,
        32 * 8 * 128 * 4 * 4096
    );
}

#[test]
fn mlx_lm_keeps_every_token_of_gemma_2_and_computes_its_attention_by_hand() {
    // Gemma 2 9B: every other layer sliding (4,096) in its config; head
    // dim 256. transformers' hybrid cache keeps the window; mlx-lm's gemma2
    // makes no cache of its own: a full KVCache per layer.
    let g2 = r#"{"model_type":"gemma2","num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"hidden_size":3584,"intermediate_size":14336,"sliding_window":4096,"max_position_embeddings":8192,"vocab_size":256000,"torch_dtype":"bfloat16"}"#;
    let d = described(g2);
    let per_layer_token = 8 * 256 * 2 * 2;
    let mlx = on_linux(&d, GIB, &ask(8192, Runtime::Mlx)).need;
    assert_eq!(
        line(&mlx, NeedId::KvCache).bytes,
        42 * per_layer_token * 8192
    );
    assert!(!mlx.iter().any(|l| l.id == NeedId::KvCacheSliding));
    assert!(line(&mlx, NeedId::KvCache)
        .formula
        .contains("keeps every token"));
    let torch = on_linux(&d, GIB, &ask(8192, Runtime::Torch)).need;
    assert_eq!(
        line(&torch, NeedId::KvCache).bytes,
        21 * per_layer_token * 8192
    );
    assert_eq!(
        line(&torch, NeedId::KvCacheSliding).bytes,
        21 * per_layer_token * 4096
    );
    // Its scores by hand on Metal too, whatever the head dim (Gemma 2
    // 27B's is 128, one Metal fuses for sdpa); one mask for all layers.
    let g2_27b = g2.replace("\"head_dim\":256", "\"head_dim\":128");
    let d = from_config(g2_27b.as_bytes(), "config.json").unwrap();
    let l = super::super::mlx::scores_line(&d, "macos", 8192, "").unwrap();
    assert!(
        l.formula.contains("gemma2 computes attention by hand"),
        "{}",
        l.formula
    );
    assert!(!l.formula.contains("sliding layers' mask"), "{}", l.formula);
    assert_eq!(l.bytes, 2047 * 8191 * (16 * 2 + 1));
}

#[test]
fn latent_attention_caches_the_latent_and_linear_layers_a_fixed_state() {
    let v3 = r#"{"model_type":"deepseek_v3","num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"hidden_size":7168,"kv_lora_rank":512,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"n_routed_experts":256,"num_experts_per_tok":8,"torch_dtype":"bfloat16"}"#;
    let d = described(v3);
    let mlx = on_linux(&d, GIB, &ask(4096, Runtime::Mlx));
    let latent = line(&mlx.need, NeedId::KvCacheLatent);
    assert_eq!(latent.bytes, 61 * (512 + 64) * 2 * 4096);
    assert!(line(&mlx.need, NeedId::Weights)
        .formula
        .contains("all 256 experts resident, 8 read per token"));
    let torch = on_linux(&d, GIB, &ask(4096, Runtime::Torch));
    assert_eq!(
        line(&torch.need, NeedId::KvCache).bytes,
        61 * 128 * (192 + 128) * 2 * 4096
    );
    let next = r#"{"model_type":"qwen3_next","num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"hidden_size":2048,"full_attention_interval":4,"linear_num_value_heads":32,"linear_num_key_heads":16,"linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4,"torch_dtype":"bfloat16"}"#;
    let d = described(next);
    let at = |t| on_linux(&d, GIB, &ask(t, Runtime::Mlx)).need;
    let state = 36 * (32 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 32 * 128) * 2);
    assert_eq!(line(&at(1024), NeedId::RecurrentState).bytes, state);
    assert_eq!(line(&at(262_144), NeedId::RecurrentState).bytes, state);
    assert_eq!(
        line(&at(1024), NeedId::KvCache).bytes,
        12 * 2 * 256 * 2 * 2 * 1024
    );
}

#[test]
fn the_kv_dtype_and_parallel_sequences_scale_the_cache() {
    let d = described(LLAMA_31_8B);
    let kv = |dtype: &str, parallel| {
        let a = Ask {
            context: Some(8192),
            parallel: Some(parallel),
            kv_dtype: Some(KvDtype::parse(dtype).unwrap()),
            runtime: Some(Runtime::LlamaCpp),
            history: None,
        };
        line(&on_linux(&d, GIB, &a).need, NeedId::KvCache).bytes
    };
    let elements = 32 * 8 * 256 * 8192u64;
    assert_eq!(kv("f16", 1), elements * 2);
    assert_eq!(kv("f16", 4), elements * 8);
    assert_eq!(kv("f32", 1), elements * 4);
    assert_eq!(kv("q8_0", 1), elements / 32 * 34);
    assert_eq!(kv("q4_0", 1), elements / 32 * 18);
    assert_eq!(kv("mlx-q4", 1), elements / 64 * 36);
    assert_eq!(kv("mlx-q8:32", 1), elements / 32 * 36);
    assert_eq!(
        KvDtype::parse("mlx-q4:64").unwrap().said(),
        "mlx-q4:64 0.5625 B"
    );
    for bad in ["q5_k", "mlx-q9", "mlx-q4:48", "int8"] {
        assert!(KvDtype::parse(bad).is_err(), "{bad}");
    }
    // llama.cpp's default cache is f16, whatever the model's dtype.
    let a = on_linux(&d, GIB, &ask(8192, Runtime::LlamaCpp));
    let c = a.context.unwrap();
    assert_eq!(
        (c.kv_dtype.as_str(), c.runtime_source.as_str()),
        ("f16", "--runtime")
    );
}

#[test]
fn the_runtime_defaults_to_the_models_format_then_the_os() {
    let d = described(LLAMA_31_8B);
    let runtime = |os: &str, gguf: bool| {
        let mut desc = d.description.clone().unwrap();
        desc.gguf = gguf;
        let f = Figures {
            os: os.into(),
            ..linux()
        };
        let dd = Described {
            description: Some(desc),
            ..Described::default()
        };
        plan(weights(GIB), &dd, None, &f, &Ask::default())
            .context
            .unwrap()
            .runtime
    };
    assert_eq!(runtime("macos", false), Runtime::Mlx);
    assert_eq!(runtime("linux", false), Runtime::Torch);
    assert_eq!(runtime("macos", true), Runtime::LlamaCpp);
    // A size has no layers: no context, no KV line.
    let a = plan(
        weights(GIB),
        &Described::default(),
        None,
        &linux(),
        &ask(8192, Runtime::Mlx),
    );
    assert!(a.context.is_none() && a.need.len() == 1);
    assert!(a
        .notes
        .iter()
        .any(|n| n.contains("judged on its weights alone")));
}
