"""fit's llama.cpp estimate against a real llama.cpp run (scripts/bench-fit
llama.cpp): a Llama-shaped GGUF written by the `gguf` package with random
weights, loaded by llama-cpp-python and prefilled to a context.

  python llama_cpp_fit.py build FILE.gguf SCALE LAYERS
  python llama_cpp_fit.py run FILE.gguf TOKENS fa|no-fa

`build` writes the model; `run` loads it with the weights read into memory
(use_mmap=False: a mapped file's pages are the page cache's, not the
process's footprint, on Linux and macOS alike), a context of TOKENS, and
evaluates a prompt that fills it, in 512-token batches as llama.cpp's
server does, with flash attention on (`fa`: llama-server's default, `-fa
auto`, on a CPU or Metal) or off (`no-fa`: llama-cpp-python's default). It prints the process's peak resident set (VmHWM, Linux) on
stderr as JSON; run under `swapsight fit FILE --context TOKENS --runtime
llama.cpp -- python llama_cpp_fit.py run …` the comparison is fit's own.
"""

import json
import sys

import numpy as np

#: Llama-3-shaped (GQA 4:1, SwiGLU), SCALE × 128 wide: a 1B-class model at
#: SCALE=16, small enough at 4 for a CPU run of 16k tokens in a minute.
HEAD_DIM = 64
VOCAB = 32000


def shape(scale: int, layers: int) -> dict:
    hidden = 128 * scale
    heads = hidden // HEAD_DIM
    return {
        "hidden": hidden,
        "heads": heads,
        "kv_heads": max(1, heads // 4),
        "ffn": hidden * 7 // 2,
        "layers": layers,
        "vocab": VOCAB,
        "context": 131072,
    }


def build(path: str, scale: int, layers: int) -> None:
    import gguf

    s = shape(scale, layers)
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(s["context"])
    w.add_embedding_length(s["hidden"])
    w.add_block_count(s["layers"])
    w.add_feed_forward_length(s["ffn"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv_heads"])
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    # A SentencePiece vocabulary llama.cpp accepts: the three specials, the
    # 256 byte tokens it falls back on, and filler pieces. The prompt is
    # given as token ids, so what the pieces spell does not matter.
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    tokens += ["▁t%d" % i for i in range(s["vocab"] - len(tokens))]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    types += [gguf.TokenType.NORMAL] * (s["vocab"] - len(types))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * s["vocab"])
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    rng = np.random.default_rng(0)

    def f16(*dims: int) -> np.ndarray:
        return (rng.standard_normal(dims, dtype=np.float32) * 0.02).astype(np.float16)

    h, kv = s["hidden"], s["kv_heads"] * HEAD_DIM
    # numpy shapes are ggml's ne reversed: (rows, columns) = (out, in).
    w.add_tensor("token_embd.weight", f16(s["vocab"], h))
    for i in range(s["layers"]):
        w.add_tensor("blk.%d.attn_norm.weight" % i, np.ones(h, dtype=np.float32))
        w.add_tensor("blk.%d.attn_q.weight" % i, f16(h, h))
        w.add_tensor("blk.%d.attn_k.weight" % i, f16(kv, h))
        w.add_tensor("blk.%d.attn_v.weight" % i, f16(kv, h))
        w.add_tensor("blk.%d.attn_output.weight" % i, f16(h, h))
        w.add_tensor("blk.%d.ffn_norm.weight" % i, np.ones(h, dtype=np.float32))
        w.add_tensor("blk.%d.ffn_gate.weight" % i, f16(s["ffn"], h))
        w.add_tensor("blk.%d.ffn_up.weight" % i, f16(s["ffn"], h))
        w.add_tensor("blk.%d.ffn_down.weight" % i, f16(h, s["ffn"]))
    w.add_tensor("output_norm.weight", np.ones(h, dtype=np.float32))
    w.add_tensor("output.weight", f16(s["vocab"], h))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def vm_hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def run(path: str, tokens: int, flash: bool) -> None:
    from llama_cpp import Llama

    llm = Llama(model_path=path, n_ctx=tokens, n_batch=512, n_ubatch=512, use_mmap=False,
                n_threads=2, flash_attn=flash, verbose=False)
    rng = np.random.default_rng(1)
    prompt = [1] + rng.integers(259, VOCAB, tokens - 1).tolist()
    llm.eval(prompt)
    # On stderr: under `swapsight fit --json -- …` stdout is the plan's.
    print(json.dumps({"tokens": tokens, "vm_hwm": vm_hwm()}), file=sys.stderr, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        run(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "fa")
