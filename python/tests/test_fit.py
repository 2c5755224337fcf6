"""swapsight.fit(): the installed package's own ``swapsight fit --json``,
on a folder of sparse files laid out as Hugging Face lays a model out, a
size, a past run's trace and bad input."""

import json
import os
import subprocess

import pytest

import swapsight
from swapsight.__main__ import find_binary

MIB = 1 << 20
GIB = 1 << 30
SHARDS = ["model-0000%d-of-00003.safetensors" % i for i in (1, 2, 3)]


def sparse(path, size):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)


def hf_folder(root, named=SHARDS):
    """config.json, three sparse shards (40 + 40 + 20 MiB) and an index
    naming ``named``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text('{"model_type": "llama"}')
    for shard, size in zip(SHARDS, (40 * MIB, 40 * MIB, 20 * MIB)):
        sparse(root / shard, size)
    weight_map = {"model.layers.%d.mlp.weight" % i: s for i, s in enumerate(named)}
    (root / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map})
    )
    return root


def test_an_hf_folder_of_sparse_shards_fits_with_its_bytes_and_bounds(tmp_path):
    answer = swapsight.fit(hf_folder(tmp_path / "Llama-tiny"))
    assert isinstance(answer, swapsight.FitAnswer)
    assert (answer.verdict, answer.exit_code, answer.fits) == ("fits", 0, True)
    assert answer.model_bytes == answer.needed_bytes == 100 * MIB
    assert [f["path"] for f in answer.raw["model"]["files"]] == SHARDS
    ids = [b.id for b in answer.bounds]
    assert ids[:2] == ["memory", "free-now"], ids
    memory = answer.bounds[0]
    assert isinstance(memory, swapsight.FitBound)
    assert memory.bytes > answer.needed_bytes and not memory.over
    assert memory.if_over == "does-not-fit" and memory.framework is None
    assert str(answer) == answer.summary and answer.summary.startswith("fits: needs 100 MiB")


def test_an_index_naming_two_shards_counts_two(tmp_path):
    answer = swapsight.fit(hf_folder(tmp_path / "partial", named=SHARDS[:2]))
    assert answer.model_bytes == 80 * MIB
    left = answer.raw["model"]["left_out"]
    assert [(l["path"], l["bytes"]) for l in left] == [(SHARDS[2], 20 * MIB)]


def test_sizes_as_text_or_bytes_and_an_answer_that_is_no(tmp_path):
    assert swapsight.fit(4096).model_bytes == 4096
    assert swapsight.fit("512MiB").model_bytes == 512 * MIB
    huge = swapsight.fit("1P")
    assert (huge.verdict, huge.exit_code, huge.fits) == ("does-not-fit", 2, False)
    assert any(b.id == "memory" and b.over for b in huge.bounds)
    assert huge.settings == ()
    assert any(n.startswith("no setting makes it fit") for n in huge.notes), huge.notes
    # The command line's exit code is the same answer.
    done = subprocess.run([find_binary(), "fit", "1P"], capture_output=True)
    assert done.returncode == huge.exit_code


def test_a_past_runs_peak_is_the_need(tmp_path):
    trace = tmp_path / "past.jsonl"
    header = {
        "type": "header", "format": "swapsight-trace", "schema": 1,
        "host": {"os": "linux", "phys_bytes": 25276510208, "page_size": 4096, "hostname": "vm"},
        "interval_ms": 500, "start_unix_ms": 1795977218944,
        "command": ["python3", "generate.py"], "watch_pid": 100, "top_n": 10,
    }

    def sample(t, footprint):
        return {
            "type": "sample", "t_ms": t,
            "sys": {"phys_bytes": 25276510208, "free_pct": 80.0, "swap_used_bytes": 0,
                    "swap_total_bytes": 0, "compressed_bytes": 0, "page_size": 4096},
            "procs": [{"pid": 100, "ppid": 1, "name": "python3", "footprint_bytes": footprint,
                       "pageins": 0, "start_time": 1}],
            "watched": [100],
        }

    lines = [header, sample(0, GIB), sample(500, 3 * GIB), sample(1000, 2 * GIB)]
    trace.write_text("".join(json.dumps(l) + "\n" for l in lines))
    answer = swapsight.fit("4K", from_trace=trace)
    assert answer.needed_bytes == 3 * GIB
    assert answer.model_bytes == 4096
    assert answer.raw["past_run"]["peak_footprint_bytes"] == 3 * GIB


def test_no_answer_raises_the_command_lines_one_line(tmp_path, monkeypatch):
    with pytest.raises(swapsight.Error) as e:
        swapsight.fit("8X")
    assert str(e.value).startswith("swapsight: invalid size '8X': unknown unit 'x'"), e.value
    with pytest.raises(swapsight.Error) as e:
        swapsight.fit(tmp_path / "no-such-model")
    assert "cannot read" in str(e.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a trace\n")
    with pytest.raises(swapsight.Error) as e:
        swapsight.fit("4K", from_trace=bad)
    assert "not a swapsight trace header" in str(e.value)
    # A missing path is said as one, a word as a size (the command line
    # said them the other way round).
    monkeypatch.chdir(tmp_path)
    for path in ("./no/such/dir", "no/such/dir", "~/no-such-model-here", "model.gguf"):
        with pytest.raises(swapsight.Error) as e:
            swapsight.fit(path)
        shown = os.path.expanduser(path)
        assert str(e.value) == "swapsight: cannot read %s: No such file or directory" % shown
    with pytest.raises(swapsight.Error) as e:
        swapsight.fit("lots")
    assert str(e.value) == (
        "swapsight: invalid size 'lots': expected a number with a unit, like 8G or 512M; "
        "no file or folder has that name either"
    )
    # A word that names a file here is that file.
    hf_folder(tmp_path / "lots")
    assert swapsight.fit("lots").model_bytes == 100 * MIB
    # A path starting with "-" is a path, not a flag.
    dash = hf_folder(tmp_path / "-dash")
    monkeypatch.chdir(tmp_path)
    assert swapsight.fit("-dash").model_bytes == 100 * MIB
    with pytest.raises(TypeError):
        swapsight.fit(True)
    assert dash.exists()


LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072,
    "vocab_size": 128256, "torch_dtype": "bfloat16",
}


def test_the_need_grows_with_the_context_asked_as_the_command_says(tmp_path):
    # Llama-3.1-8B's config over 1 GiB of sparse weights: at its 128k
    # context the KV cache alone is 32 × 8 × 128 × 2 × 2 B × 131,072 = 16 GiB.
    root = tmp_path / "llama"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    sparse(root / "model.safetensors", GIB)
    long = swapsight.fit(root, context="128k", runtime="mlx", kv_dtype="bf16", parallel=1)
    assert long.context is not None and long.context["tokens"] == 131072, long.raw
    kv = next(n for n in long.need if n.id == "kv-cache")
    assert isinstance(kv, swapsight.FitNeed)
    assert kv.bytes == 16 * GIB, kv
    assert {"name": "layers", "value": 32, "source": "config.json",
            "key": "num_hidden_layers"} in kv.inputs, kv.inputs
    assert long.needed_bytes >= GIB + 16 * GIB
    # Without a context: a short one, and the largest under each bound.
    short = swapsight.fit(root)
    assert short.context is not None and short.context["asked"] is False
    assert short.largest_context is not None
    assert short.largest_context["model_max_tokens"] == 131072
    assert {b["id"] for b in short.largest_context["bounds"]} >= {"memory", "free-now"}
    with pytest.raises(swapsight.Error, match="context"):
        swapsight.fit(root, context="lots")
    with pytest.raises(TypeError):
        swapsight.fit(root, context=True)  # type: ignore[arg-type]


def history(data, runtime, architecture, ratio):
    """A history of one past run of ``runtime`` and ``architecture`` whose
    peak was ``ratio`` × its estimate, in the data folder ``data`` (Linux:
    $XDG_DATA_HOME; a Mac: $HOME/Library/Application Support)."""
    run = {"at_unix_ms": 1, "model": "m", "context": 4096, "estimated_bytes": 100,
           "measured_bytes": int(100 * ratio), "measured": "mlx.peak", "ratio": ratio}
    text = json.dumps({"about": "test", "version": 1, "groups": [
        {"runtime": runtime, "architecture": architecture, "ratio": ratio, "runs": [run]}]})
    for folder in (data, data / "Library" / "Application Support"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "swapsight-fit-history.json").write_text(text)


def test_no_history_is_the_estimate_from_the_files_alone(tmp_path, monkeypatch):
    root = tmp_path / "llama"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    sparse(root / "model.safetensors", GIB)
    data = tmp_path / "data"
    history(data, "mlx", "llama", 2.0)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("HOME", str(data))
    taught = swapsight.fit(root, runtime="mlx")
    raw = swapsight.fit(root, runtime="mlx", no_history=True)
    assert taught.raw["history"]["runs"] == 1, taught.raw
    assert "history" not in raw.raw, raw.raw
    assert taught.needed_bytes == 2 * raw.needed_bytes
    note = "estimate +100 % from 1 past mlx run of llama models (--no-history to ignore)"
    assert note in taught.notes and note not in raw.notes
    with pytest.raises(TypeError, match="no_history"):
        swapsight.fit(root, no_history="yes")  # type: ignore[arg-type]
