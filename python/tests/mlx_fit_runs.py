"""Real architectures' configs scaled down, built with random weights and
run through mlx-lm's own model code and prompt cache, for fit's estimate
to be checked against MLX's measured peak (test_fit_mlx.py, and at larger
sizes scripts/bench-fit).

Each model is saved as mlx-lm saves one (``save_model`` + ``save_config``:
config.json and model.safetensors) and loaded back as mlx-lm loads one
(``load_model``), then prefilled as ``generate_step`` does: steps of
``prefill_step_size`` tokens, each evaluating only the cache, the buffer
cache cleared after each, then the last token's logits. The peak is
``mx.get_peak_memory()`` from just before the prompt to the logits.

Run as a script (``python mlx_fit_runs.py FOLDER TOKENS…``) it measures one
saved model in a fresh process and prints ``{"TOKENS": peak}`` as JSON: a
process per model, so that no other model's buffers count. Under a
recording (``swapsight fit FOLDER --context N -- python mlx_fit_runs.py
FOLDER N``) it also writes, after each context, ``mlx.peak`` and what the
weights and the prompt cache held (``swapsight.mlx_sizes``), for fit to
compare the need line by line, and prints its JSON on stderr."""

import json
import os
import sys
from pathlib import Path

#: mlx-lm's generate_step default (prefill_step_size).
PREFILL_STEP = 2048

# Each entry: the architecture's own config.json (model_type, the fields
# mlx-lm's model code reads, its attention layout) with widths, heads,
# layer counts and vocabularies cut down so that 16k tokens of prefill run
# in seconds on a CPU. `scale` multiplies widths and heads (scripts/bench-fit).
def _config(model_type, architecture, widths, heads, layers, **rest):
    """A config.json as the family writes one: ``widths`` (hidden,
    intermediate), ``heads`` (query, KV), f32 (MLX's CPU backend computes
    in it), a 32k vocabulary."""
    return dict(
        model_type=model_type,
        architectures=[architecture],
        hidden_size=widths[0],
        intermediate_size=widths[1],
        num_attention_heads=heads[0],
        num_key_value_heads=heads[1],
        num_hidden_layers=layers,
        vocab_size=32000,
        torch_dtype="float32",
        **rest,
    )


def configs(scale=1, layers=None, heads=None):
    """name -> config.json of each architecture, widths times ``scale``,
    heads times ``heads`` (``scale`` by default), ``layers`` layers where
    given. Two query heads where the architecture allows (four for the GQA
    one): on a CPU the unfused attention of 16k tokens costs ~20 s a head
    and layer."""
    s = scale
    h = scale if heads is None else heads
    return {
        # Llama 3.1: GQA (2:1 here, 4:1 there), untied head.
        "llama": _config(
            "llama", "LlamaForCausalLM", (128 * s, 448 * s), (2 * h, 1 * h), layers or 2,
            head_dim=64, rms_norm_eps=1e-5, rope_theta=500000.0,
            max_position_embeddings=131072, tie_word_embeddings=False,
        ),
        # Gemma 3: sliding-window layers (a rotating cache of the window)
        # and global ones (1:1 here, 5:1 there; the last layer sliding, as
        # in Gemma 3), one KV head, tied embeddings.
        "gemma3": _config(
            "gemma3_text", "Gemma3ForCausalLM", (128 * s, 512 * s), (2 * h, 1 * h), layers or 3,
            head_dim=64, query_pre_attn_scalar=64, sliding_window=512,
            sliding_window_pattern=2, rms_norm_eps=1e-6, rope_theta=1000000.0,
            rope_local_base_freq=10000.0, max_position_embeddings=32768,
        ),
        # Gemma 2: every other layer sliding in its config, but mlx-lm's
        # gemma2 has no rotating cache and computes attention by hand (its
        # soft-capping): every layer keeps every token, on every backend.
        "gemma2": _config(
            "gemma2", "Gemma2ForCausalLM", (128 * s, 512 * s), (2 * h, 1 * h), layers or 2,
            head_dim=64, query_pre_attn_scalar=64, sliding_window=512,
            attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
            rms_norm_eps=1e-6, rope_theta=10000.0, max_position_embeddings=32768,
        ),
        # Qwen2-style GQA with many KV heads (2:1, as Gemma 2 27B's 32:16):
        # the cache grows fastest per token of the four; biased Q/K/V.
        "qwen2": _config(
            "qwen2", "Qwen2ForCausalLM", (128 * s, 344 * s), (4 * h, 2 * h), layers or 2,
            rms_norm_eps=1e-6, rope_theta=1000000.0,
            max_position_embeddings=32768, tie_word_embeddings=False,
        ),
        # Mixtral: 8 experts, 2 routed per token, all resident.
        "mixtral": _config(
            "mixtral", "MixtralForCausalLM", (128 * s, 256 * s), (2 * h, 1 * h), layers or 2,
            num_local_experts=8, num_experts_per_tok=2, rms_norm_eps=1e-5,
            rope_theta=1000000.0, max_position_embeddings=32768,
            tie_word_embeddings=False,
        ),
    }


def build(folder, config):
    """A random-initialised model of ``config``, saved in ``folder`` as
    mlx-lm saves one."""
    import mlx.core as mx
    from mlx_lm.utils import _get_classes, save_config, save_model

    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    mx.eval(model.parameters())
    save_model(Path(folder), model)
    save_config(dict(config), Path(folder) / "config.json")


def measure(folder, contexts, counters=False):
    """MLX's peak (bytes) over a prefill of each of ``contexts`` tokens,
    the model loaded as mlx-lm loads one; with ``counters``, each written
    into the running recording with what the weights and the cache held
    (swapsight imported only then: scripts/bench-fit runs this with
    whatever Python has MLX)."""
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache
    from mlx_lm.utils import load_model

    if counters:
        import swapsight

    model, config = load_model(Path(folder))
    peaks = {}
    for tokens in contexts:
        cache = make_prompt_cache(model)
        prompt = mx.random.randint(0, config["vocab_size"], (tokens,))
        mx.eval(prompt)
        mx.clear_cache()
        mx.reset_peak_memory()
        # generate_step's prefill: all but the last token in steps, only
        # the cache evaluated, then the last token's logits.
        while prompt.size > 1:
            n = min(PREFILL_STEP, prompt.size - 1)
            model(prompt[:n][None], cache=cache)
            mx.eval([c.state for c in cache])
            if counters:
                # A sliding window's cache is longest here, the window and
                # a step, before the next step trims it.
                swapsight.mlx_sizes(cache=cache)
            prompt = prompt[n:]
            mx.clear_cache()
        logits = model(prompt[None], cache=cache)[:, -1, :]
        mx.eval(logits)
        peaks[tokens] = mx.get_peak_memory()
        if counters:
            swapsight.counter("mlx.peak", peaks[tokens])
            swapsight.mlx_sizes(model, cache)
        del cache, logits, prompt
        mx.clear_cache()
    return peaks


if __name__ == "__main__":
    recording = bool(os.environ.get("SWAPSIGHT_MARK"))
    peaks = measure(sys.argv[1], [int(t) for t in sys.argv[2:]], counters=recording)
    # Under fit, stdout is fit's JSON: the counters carry the figures.
    print(json.dumps(peaks), file=sys.stderr if recording else sys.stdout)
