"""docs/fit-plan.schema.json against what ``swapsight fit --json`` prints:
a size, folders laid out as real architectures' (safetensors headers and
config.json), a GGUF, a past run's trace and a model too large, each
validated by the ``jsonschema`` package (Draft 2020-12, strict: a field the
schema does not name fails); and the schema's fields against docs/fit.md's
table, so neither drifts from the other."""

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import jsonschema

from swapsight.__main__ import find_binary

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCHEMA = json.loads((DOCS / "fit-plan.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

LLAMA = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
         "num_attention_heads": 8, "num_hidden_layers": 4, "num_key_value_heads": 2,
         "max_position_embeddings": 32768, "vocab_size": 1000, "torch_dtype": "bfloat16"}
GEMMA3 = {"model_type": "gemma3", "text_config": {
    "model_type": "gemma3_text", "num_hidden_layers": 12, "num_attention_heads": 8,
    "num_key_value_heads": 4, "head_dim": 64, "hidden_size": 512, "vocab_size": 1000,
    "sliding_window": 512, "sliding_window_pattern": 6, "max_position_embeddings": 32768}}
DEEPSEEK = {"model_type": "deepseek_v3", "num_hidden_layers": 4, "num_attention_heads": 8,
            "num_key_value_heads": 8, "hidden_size": 512, "kv_lora_rank": 128,
            "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64,
            "n_routed_experts": 8, "num_experts_per_tok": 2, "vocab_size": 1000}
QWEN3_NEXT = {"model_type": "qwen3_next", "num_hidden_layers": 8, "num_attention_heads": 8,
              "num_key_value_heads": 2, "head_dim": 64, "hidden_size": 512,
              "full_attention_interval": 4, "linear_num_value_heads": 8,
              "linear_num_key_heads": 4, "linear_key_head_dim": 32,
              "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "vocab_size": 1000}


def safetensors(path, n_bytes):
    """A safetensors file of one BF16 tensor of ``n_bytes``: the 8-byte
    header length, the header, the data (sparse)."""
    header = json.dumps({"w": {"dtype": "BF16", "shape": [n_bytes // 2],
                               "data_offsets": [0, n_bytes]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + n_bytes)


def folder(root, config):
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(config))
    safetensors(root / "model.safetensors", 64 << 20)
    return root


def gguf(path):
    """GGUF v3 metadata as ggml's docs/gguf.md lays it out, and no tensors."""
    pairs = [("general.architecture", 8, "llama"), ("llama.block_count", 4, 4),
             ("llama.attention.head_count", 4, 8), ("llama.attention.head_count_kv", 4, 2),
             ("llama.embedding_length", 4, 256), ("llama.context_length", 4, 8192),
             ("general.file_type", 4, 15)]
    b = b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs))
    for key, ty, value in pairs:
        b += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", ty)
        if ty == 8:
            b += struct.pack("<Q", len(value)) + value.encode()
        else:
            b += struct.pack("<I", value)
    path.write_bytes(b + bytes(4096))
    return path


#: A run's counters as swapsight.mlx_sizes() and watch_mlx() write them:
#: MLX's peak, and what its weights and KV cache held within it.
PARTS = ("import os, time\n"
         "m = open(os.environ['SWAPSIGHT_MARK'], 'a')\n"
         "m.write('#counter %d bytes mlx.peak\\n#counter %d bytes mlx.weights\\n"
         "#counter %d bytes mlx.kv\\n')\n"
         "m.close()\n"
         "time.sleep(0.5)\n") % (100 << 20, 64 << 20, 16 << 20)


def fit_json(*args, data=None):
    """``fit ARGS --json`` (``--json`` before a ``-- CMD``), its history
    in ``data`` (XDG_DATA_HOME), never the user's."""
    args = [str(a) for a in args]
    cut = args.index("--") if "--" in args else len(args)
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    out = subprocess.run([find_binary(), "fit", *args[:cut], "--json", *args[cut:]],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode in (0, 1, 2), out.stderr
    answer = json.loads(out.stdout)
    assert answer["exit_code"] == out.returncode
    return answer


def test_every_answer_fit_prints_is_one_the_schema_takes(tmp_path):
    trace = tmp_path / "past.jsonl"
    rec = subprocess.run([find_binary(), "record", "--interval", "100ms", "-o", str(trace),
                          "--", "/bin/sleep", "0.3"], capture_output=True, text=True, timeout=60)
    assert rec.returncode == 0, rec.stderr
    data = tmp_path / "data"
    llama = folder(tmp_path / "llama", LLAMA)
    answers = {
        "size": fit_json("8G", data=data),
        "too large": fit_json("10T", data=data),
        "llama": fit_json(llama, "--context", "8k", data=data),
        "gemma3": fit_json(folder(tmp_path / "gemma3", GEMMA3), "--runtime", "mlx", data=data),
        "deepseek": fit_json(folder(tmp_path / "deepseek", DEEPSEEK), "--runtime", "mlx",
                             data=data),
        "qwen3-next": fit_json(folder(tmp_path / "qwen3next", QWEN3_NEXT), "--parallel", "2",
                               data=data),
        "gguf": fit_json(gguf(tmp_path / "m-Q4_K_M.gguf"), data=data),
        "past run": fit_json("1G", "--from", trace, data=data),
        # A run under fit: the estimate against what it measured, kept in
        # the history, which the next estimate of the model applies.
        "run": fit_json(llama, "--context", "8k", "-o", tmp_path / "run.jsonl", "--",
                        "/bin/sleep", "0.5", data=data),
        "taught": fit_json(llama, "--context", "8k", data=data),
        # A run that said what its weights and KV cache held: the need per
        # line (after "taught": kept out of the history).
        "per line": fit_json(llama, "--context", "8k", "--no-history", "-o",
                             tmp_path / "per-line.jsonl", "--", sys.executable, "-c", PARTS,
                             data=data),
    }
    for what, answer in answers.items():
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in VALIDATOR.iter_errors(answer)]
        assert not errors, (what, errors)
    assert answers["too large"]["verdict"] == "does-not-fit"
    assert answers["size"]["context"] is None and answers["size"]["largest_context"] is None
    assert "past_run" in answers["past run"]
    assert [m["id"] for m in answers["run"]["comparison"]["measured"]] == ["footprint"]
    assert "history" not in answers["llama"] and answers["taught"]["history"]["runs"] == 1
    assert "by_line" not in answers["run"]["comparison"]
    by_line = answers["per line"]["comparison"]["by_line"]
    assert [l["id"] for l in by_line] == ["weights", "kv-cache", "rest"], by_line
    assert by_line[1]["lines"] == ["kv-cache"] and by_line[2]["measured_bytes"] == 20 << 20
    # The enum of need lines is no wider than what fit prints: each kind
    # of line the schema allows came out of one of these models.
    seen = {line["id"] for a in answers.values() for line in a["need"]}
    allowed = set(SCHEMA["properties"]["need"]["items"]["properties"]["id"]["enum"])
    assert seen == allowed, (seen, allowed)
    runtimes = {a["context"]["runtime"] for a in answers.values() if a["context"]}
    assert runtimes == set(SCHEMA["$defs"]["runtime"]["enum"]), runtimes


def test_the_schema_and_the_docs_table_name_the_same_fields():
    text = (DOCS / "fit.md").read_text()
    section = text[text.index("## JSON"):text.index("## From Python")]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert documented == set(SCHEMA["properties"]), (
        documented ^ set(SCHEMA["properties"]))
    assert "docs/fit-plan.schema.json" in section or "fit-plan.schema.json" in section
