"""The ``swapsight`` command this package installed, run from Python:
:class:`Error`, ``compare()`` and ``advise()``. What the CLI says in JSON is
what these functions return: one source for the figures."""

import json
import os
import subprocess
from typing import Any, Dict, Iterable, List, Optional, Sequence, TypedDict, Union

from ._generated import ENV_VAR


class Error(Exception):
    """What swapsight says when it cannot do what was asked: the recording
    cannot start (the folder is not writable, the command is missing), a
    trace cannot be read. The message is the command line's own one line."""


class BudgetExceeded(Error):
    """A ``%%swapsight --budget`` cell's swap grew past its budget: raised
    in the cell (python/swapsight/_magic.py)."""


def _binary() -> str:
    # Imported here, not at the top: `python -m swapsight` runs __main__
    # afresh, and runpy warns when the package imported it first.
    from .__main__ import find_binary, missing_binary_message

    binary = find_binary()
    if binary is None:
        raise Error(missing_binary_message())
    return binary


def _first_line(text: Optional[str]) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _env() -> Dict[str, str]:
    """This environment without a mark path: the recorder makes its own."""
    env = dict(os.environ)
    env.pop(ENV_VAR, None)
    return env


def _run(args: Sequence[Union[str, "os.PathLike[str]"]], what: str) -> str:
    """Runs ``swapsight ARGS``; its stdout, or Error with its one line."""
    try:
        done = subprocess.run(
            [_binary()] + [os.fspath(a) for a in args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise Error("cannot run swapsight %s: %s" % (what, e)) from None
    if done.returncode != 0:
        raise Error(
            _first_line(done.stderr)
            or "swapsight %s failed (exit code %d)" % (what, done.returncode)
        )
    return done.stdout


def _run_json(args: Sequence[Union[str, "os.PathLike[str]"]], what: str) -> Any:
    out = _run(args, what)
    try:
        return json.loads(out)
    except ValueError as e:
        raise Error("swapsight %s printed no JSON: %s" % (what, e)) from None


def compare(
    traces: Iterable[Union[str, "os.PathLike[str]"]], labels: Optional[Iterable[object]] = None
) -> Dict[str, Any]:
    """``swapsight compare TRACE… --format json``: one row per run, as a
    dict (``{"runs": [...], ...}``). ``labels`` names the runs."""
    args: List[str] = ["compare"] + [os.fspath(t) for t in traces]
    for label in labels or ():
        args += ["--label", str(label)]
    result: Dict[str, Any] = _run_json(args + ["--format", "json"], "compare")
    return result


class AdviceRun(TypedDict):
    """What advise() made of a trace's run (``RunCheck`` in
    crates/core/src/judge/advise.rs)."""

    needed_bytes: int
    over_cap_ms: Optional[int]
    swap_grew_ms: Optional[int]
    stopped_before_swap: bool
    words: str


class _Advice(TypedDict):
    applies: bool
    high_ratio: float
    low_ratio: float
    cap_bytes: int
    limit_bytes: int
    recommended_max_bytes: int
    recommended_estimated: bool
    text: str


class Advice(_Advice, total=False):
    """``swapsight advise --json``'s object (``Advice`` in
    crates/core/src/judge/advise.rs): ``run`` only with a trace,
    ``set_here`` only where this shell sets a ratio."""

    run: AdviceRun
    set_here: str


def advise(
    trace: Optional[Union[str, "os.PathLike[str]"]] = None,
    reserve: Optional[Union[str, int]] = None,
    recommended_max: Optional[Union[str, int]] = None,
) -> Advice:
    """``swapsight advise [TRACE] --json``: the PyTorch MPS watermark ratios
    that make a job fail before the Mac swaps, as a dict. ``reserve`` and
    ``recommended_max`` are sizes (``"8G"``) or bytes."""
    args: List[str] = ["advise"]
    if trace is not None:
        args.append(os.fspath(trace))
    if reserve is not None:
        args += ["--reserve", str(reserve)]
    if recommended_max is not None:
        args += ["--recommended-max", str(recommended_max)]
    result: Advice = _run_json(args + ["--json"], "advise")
    return result
