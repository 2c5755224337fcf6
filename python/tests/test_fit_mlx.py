"""fit's estimate against a real run (issue 48 §3): for each architecture
of mlx_fit_runs.py (Llama, Gemma 3's sliding window, Gemma 2's window that
mlx-lm ignores, Qwen2's GQA with many KV heads, Mixtral's experts), a
random-initialised model saved as mlx-lm
saves one, prefilled by mlx-lm's own model code and prompt cache on MLX's
CPU backend at 1k, 4k and 16k tokens under `swapsight fit FOLDER --context N
--runtime mlx --json -- python mlx_fit_runs.py FOLDER N`: the need must be
within ±10 % of `mx.get_peak_memory()`, and line by line (from the counters
the run writes with swapsight.mlx_sizes) the weights within ±2 % of the
model's parameters and the KV cache within ±10 % of the prompt cache.

mlx and mlx-lm come from python/requirements-test.txt: under CI=true a
missing one fails the module; elsewhere it is skipped."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import installed_binary, pinned_import
import mlx_fit_runs

# The runs allocate up to ~1 GiB each: the machine's memory to this module
# alone (conftest.py's quiet_memory).
pytestmark = pytest.mark.usefixtures("quiet_memory")

CONTEXTS = (1024, 4096, 16384)
#: How far the estimate may be off: the whole against mx.get_peak_memory(),
#: the weights and the KV cache against what the run's arrays held
#: (swapsight.mlx_sizes). The rest, the prefill's buffers, is printed only:
#: it is the peak less both, a few MiB whose error in % says little.
TOLERANCES = {"peak": 0.10, "weights": 0.02, "kv-cache": 0.10}


@pytest.fixture(scope="module")
def mlx_lm():
    """mlx-lm's version (conftest.py's pinned_import: failed under CI=true
    when it does not import)."""
    pinned_import("mlx.core", "mlx and mlx-cpu", "'mlx[cpu]'")
    return pinned_import("mlx_lm", "mlx-lm", "mlx-lm").__version__


def estimate(folder, tokens):
    """fit's plan for ``folder`` at ``tokens`` under MLX."""
    done = subprocess.run(
        # --no-history: the estimate itself, whatever runs this user made.
        [installed_binary(), "fit", str(folder), "--context", str(tokens), "--runtime", "mlx", "--json", "--no-history"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def under_fit(folder, tokens, trace):
    """fit's plan for ``folder`` at ``tokens`` under MLX with mlx_fit_runs.py's
    prefill of ``tokens`` run under it (a fresh process): the comparison,
    whole and line by line from the counters the run wrote."""
    env = dict(os.environ)
    env.pop("SWAPSIGHT_MARK", None)
    done = subprocess.run(
        # --no-history: the estimate itself, whatever runs this user made.
        [installed_binary(), "fit", str(folder), "--context", str(tokens), "--runtime", "mlx",
         "--json", "--no-history", "-o", str(trace), "--",
         sys.executable, mlx_fit_runs.__file__, str(folder), str(tokens)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def row(name, tokens, plan):
    """The errors of the whole estimate and of each line, by id, and the
    table's line."""
    c = plan["comparison"]
    peak = next(m for m in c["measured"] if m["id"] == "mlx.peak")
    errs = {"peak": peak["error_pct"] / 100}
    errs.update((l["id"], (l["error_pct"] or 0.0) / 100) for l in c["by_line"])
    lines = " ".join(
        "%s %.1f/%.1f" % (l["id"], l["estimated_bytes"] / 2**20, l["measured_bytes"] / 2**20)
        for l in c["by_line"]
    )
    text = "%-8s %6d %12d %12d %+6.1f %% %+6.1f %% %+6.1f %% %+7.1f %%   (MiB est/measured: %s)" % (
        name, tokens, c["estimated_bytes"], peak["bytes"], 100 * errs["peak"],
        100 * errs.get("weights", float("nan")), 100 * errs.get("kv-cache", float("nan")),
        100 * errs.get("rest", float("nan")), lines)
    return errs, text


@pytest.mark.parametrize("name", list(mlx_fit_runs.configs()))
def test_the_estimate_is_within_ten_percent_of_mlx_s_peak(name, mlx_lm, tmp_path, capsys):
    config = mlx_fit_runs.configs()[name]
    folder = tmp_path / name
    mlx_fit_runs.build(folder, config)
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    lines, off = [], []
    for tokens in CONTEXTS:
        plan = under_fit(folder, tokens, tmp_path / ("%s-%d.jsonl" % (name, tokens)))
        assert plan["context"]["runtime"] == "mlx"
        assert plan["context"]["tokens"] == tokens
        # Each line the run's counters separate: weights, KV cache, the rest.
        assert [l["id"] for l in plan["comparison"]["by_line"]] == ["weights", "kv-cache", "rest"]
        errs, line = row(name, tokens, plan)
        lines.append(line)
        for what, within in TOLERANCES.items():
            if abs(errs[what]) > within:
                off.append("%s off by more than %.0f %%: %s" % (what, 100 * within, line))
    with capsys.disabled():
        print("\n%-8s %6s %12s %12s %8s %8s %8s %9s   (mlx-lm %s)" % (
            "arch", "tokens", "estimate", "measured", "error", "weights", "KV", "rest", mlx_lm))
        print("\n".join(lines))
    assert not off, "fit's estimate is off MLX's figures:\n%s" % "\n".join(off)


def test_the_models_are_saved_as_mlx_lm_saves_them(mlx_lm, tmp_path):
    """config.json as save_config writes it and one model.safetensors with
    the header fit reads: the folder fit is given is mlx-lm's own."""
    folder = tmp_path / "llama"
    mlx_fit_runs.build(folder, mlx_fit_runs.configs()["llama"])
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "llama" and config["num_key_value_heads"] == 1
    plan = estimate(folder, 1024)
    weights = next(l for l in plan["need"] if l["id"] == "weights")
    header = Path(folder / "model.safetensors").read_bytes()
    n = int.from_bytes(header[:8], "little")
    tensors = {k: v for k, v in json.loads(header[8 : 8 + n]).items() if k != "__metadata__"}
    assert weights["bytes"] == sum(v["data_offsets"][1] - v["data_offsets"][0] for v in tensors.values())
