"""swapsight from Python: mark a pipeline's phases in a swapsight recording.

    import swapsight

    with swapsight.phase("load"):
        pipe = load()

    @swapsight.phase("denoise")
    def denoise(latents): ...

Run the pipeline under ``swapsight record -o run.jsonl -- python gen.py``
(the ``swapsight`` command comes with this package; ``python -m swapsight``
runs it too) and ``swapsight report run.jsonl`` prints one row per phase.
``swapsight.counter(name, value)`` writes a named figure (bytes by default)
into the recording, and ``swapsight.watch_torch()`` and
``swapsight.watch_mlx()`` sample the PyTorch allocator's and MLX's figures
there, and ``swapsight.mlx_sizes(model, cache)`` what an MLX model's weights
and KV cache hold (for ``swapsight fit`` to compare its need line by line).
``with swapsight.record("run.jsonl") as rec:`` records this process from
inside it and sets ``rec.report``. Without a running recording every call is
a cheap no-op that never raises (a watch's interval outside 0.1 to 3600 s is
a ValueError all the same, and a model without ``parameters()`` given to
``mlx_sizes`` a TypeError).
In a notebook, ``%load_ext swapsight`` gives the ``%%swapsight`` cell magic
(a live line while the cell runs, its report when it ends; ``--torch`` and
``--mlx`` watch the frameworks too); in tests,
``pytest --swapsight`` turns on the plugin installed with this package
(``@pytest.mark.swap_budget("1 GiB")``, ``footprint_limit``, ``no_false_fit``).
Every name: docs/python.md.
"""

from typing import Any

from ._chart import Chart
from ._cli import BudgetExceeded, Error, advise, compare
from ._counter import counter
from ._fit import FitAnswer, FitBound, FitNeed, FitSetting, fit
from ._generated import ENV_VAR, MAX_NAME_CHARS
from ._mlx_sizes import mlx_sizes
from ._names import clean_name
from ._phase import Phase, end_phase, mark, phase
from ._record import record
from ._report import Report
from ._watch import MlxWatch, TorchWatch, watch_mlx, watch_torch


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("swapsight")
    except Exception:  # not installed (run from a source tree)
        return "0+unknown"


__version__ = _version()

__all__ = [
    "BudgetExceeded",
    "Chart",
    "ENV_VAR",
    "Error",
    "FitAnswer",
    "FitBound",
    "FitNeed",
    "FitSetting",
    "MAX_NAME_CHARS",
    "MlxWatch",
    "Phase",
    "Report",
    "TorchWatch",
    "__version__",
    "advise",
    "clean_name",
    "compare",
    "counter",
    "end_phase",
    "fit",
    "mark",
    "mlx_sizes",
    "phase",
    "record",
    "watch_mlx",
    "watch_torch",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext swapsight``: the ``%%swapsight`` cell magic and
    ``%swapsight_last`` (docs/python.md)."""
    from ._magic import load_ipython_extension as load

    load(ipython)
