"""``swapsight.fit()``: will a model fit, before loading it — the package's
own ``swapsight fit --json`` (docs/fit.md), as a :class:`FitAnswer`."""

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

from ._cli import Error, _binary, _env, _first_line

#: ``swapsight fit``'s answers, as its JSON writes them (``Verdict`` in
#: crates/core/src/judge/fit.rs), by exit code.
FitVerdict = Literal["fits", "fits-only-by-swapping", "does-not-fit"]
FIT_VERDICTS: Tuple[FitVerdict, ...] = ("fits", "fits-only-by-swapping", "does-not-fit")

#: The exit codes of ``swapsight fit`` that are answers: fits, fits only by
#: swapping, does not fit. Its failures (3 bad arguments, 4 no answer) are
#: raised as :class:`Error`.
ANSWER_CODES = (0, 1, 2)


@dataclass(frozen=True)
class FitBound:
    """One bound the machine puts on memory, with its figure and source."""

    #: ``memory``, ``cgroup-limit``, ``free-now``, ``cgroup-free-now``,
    #: ``gpu-wired-limit``, ``recommended-working-set``,
    #: ``mps-high-watermark`` or ``mlx-memory-limit``.
    id: str
    name: str
    bytes: int
    source: str
    #: The need is above it.
    over: bool
    #: ``does-not-fit``, ``swaps`` or ``raises``.
    if_over: str
    #: ``pytorch-mps`` or ``mlx`` for the bounds of one framework (not in
    #: the verdict); None for every job's.
    framework: Optional[str] = None


@dataclass(frozen=True)
class FitSetting:
    """A setting that would lift a bound the need is over, with its risk."""

    lifts: Tuple[str, ...]
    line: str
    effect: str
    risk: str


@dataclass(frozen=True)
class FitNeed:
    """One line of what the run needs (fit's JSON ``need``): ``id``
    (``weights``, ``kv-cache``, ``runtime``, ``past-run``), ``name``, its
    ``bytes`` at the context judged, the ``formula`` with its figures, and
    each figure's ``inputs`` (``name``, ``value``, ``source``: the file or
    flag it came from, ``key``: its field there)."""

    id: str
    name: str
    bytes: int
    formula: str
    inputs: Tuple[Dict[str, Any], ...]


@dataclass(frozen=True)
class FitAnswer:
    """``swapsight fit``'s answer. ``verdict`` is ``fits``,
    ``fits-only-by-swapping`` or ``does-not-fit``; ``exit_code`` 0, 1 or 2,
    as the command exits. ``raw`` is the whole JSON object (the counted
    files, a past run's figures)."""

    verdict: "FitVerdict"
    exit_code: int
    model_bytes: int
    needed_bytes: int
    summary: str
    bounds: Tuple[FitBound, ...]
    skipped: Tuple[Dict[str, str], ...]
    settings: Tuple[FitSetting, ...]
    notes: Tuple[str, ...]
    raw: Dict[str, Any] = field(repr=False, compare=False)
    #: The need, line by line: the weights, the KV cache at the context
    #: judged, the runtime's own buffers (a past run's peak where it is more).
    need: Tuple[FitNeed, ...] = ()
    #: The context judged: ``tokens``, ``asked`` (given, or fit's short
    #: default), ``parallel``, ``kv_dtype``, ``runtime``, each with where it
    #: came from; None for a size.
    context: Optional[Dict[str, Any]] = None
    #: The largest context under each bound (``bounds``: ``id``,
    #: ``tokens``) and the model's own maximum; None where it is not known.
    largest_context: Optional[Dict[str, Any]] = None

    @property
    def fits(self) -> bool:
        """Fits without swapping."""
        return self.verdict == "fits"

    def __str__(self) -> str:
        return self.summary

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "FitAnswer":
        """The answer from ``swapsight fit --json``'s object."""
        try:
            verdict = FIT_VERDICTS[FIT_VERDICTS.index(obj["verdict"])]
            return cls(
                verdict=verdict,
                exit_code=int(obj["exit_code"]),
                model_bytes=int(obj["model_bytes"]),
                needed_bytes=int(obj["needed_bytes"]),
                summary=str(obj["summary"]),
                bounds=tuple(_bound(b) for b in obj["bounds"]),
                skipped=tuple(
                    {str(k): str(v) for k, v in s.items()} for s in obj["skipped"]
                ),
                settings=tuple(_setting(s) for s in obj["settings"]),
                notes=tuple(str(n) for n in obj["notes"]),
                raw=obj,
                need=tuple(_need(n) for n in obj.get("need") or ()),
                context=_object(obj.get("context")),
                largest_context=_object(obj.get("largest_context")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise Error("swapsight fit printed an answer this module cannot read: %r" % e) from None


def _need(n: Dict[str, Any]) -> FitNeed:
    return FitNeed(
        id=str(n["id"]),
        name=str(n.get("name", n["id"])),
        bytes=int(n["bytes"]),
        formula=str(n.get("formula", "")),
        inputs=tuple(dict(i) for i in n.get("inputs") or ()),
    )


def _object(value: Any) -> Optional[Dict[str, Any]]:
    return dict(value) if isinstance(value, dict) else None


def _bound(b: Dict[str, Any]) -> FitBound:
    framework = b.get("framework")
    return FitBound(
        id=str(b["id"]),
        name=str(b["name"]),
        bytes=int(b["bytes"]),
        source=str(b["source"]),
        over=bool(b["over"]),
        if_over=str(b["if_over"]),
        framework=None if framework is None else str(framework),
    )


def _setting(s: Dict[str, Any]) -> FitSetting:
    return FitSetting(
        lifts=tuple(str(x) for x in s["lifts"]),
        line=str(s["line"]),
        effect=str(s["effect"]),
        risk=str(s["risk"]),
    )


#: What a loader reads (``swapsight fit`` counts these): a missing name with
#: one of these endings was meant as a file.
_WEIGHTS = (".safetensors", ".gguf", ".bin", ".pt", ".pth", ".npz", ".json")


def _refuse_a_missing_target(target: str, is_path: bool) -> None:
    """Raises the one line for a target that names nothing here, said as
    what it looks like. The command line takes a word that starts with a
    digit or "." for a size, and any other for a path, so that
    ``./no/such/dir`` was "an invalid size" and ``lots`` "cannot read lots"
    (crates/cli/src/fit.rs ``model``): the other way round."""
    if os.path.lexists(target):
        return
    text = target.strip()
    size_like = text[:1].isdigit() or (text[:1] == "." and text[1:2].isdigit())
    path_like = (
        is_path
        or "/" in text
        or os.sep in text
        or text.startswith(("~", "."))
        or text.lower().endswith(_WEIGHTS)
    )
    if path_like and not size_like:
        raise Error("swapsight: cannot read %s: No such file or directory" % target)
    if not size_like:
        raise Error(
            "swapsight: invalid size '%s': expected a number with a unit, like 8G or 512M; "
            "no file or folder has that name either" % text
        )


def fit(
    path_or_size: Union[str, int, "os.PathLike[str]"],
    from_trace: Optional[Union[str, "os.PathLike[str]"]] = None,
    context: Optional[Union[int, str]] = None,
    parallel: Optional[int] = None,
    kv_dtype: Optional[str] = None,
    runtime: Optional[str] = None,
    no_history: bool = False,
) -> FitAnswer:
    """Will this model fit, before loading it: ``swapsight fit … --json``.

    ``path_or_size`` is a model's file or folder (its weights are counted
    as a loader reads them), a size (``"8G"``, ``"512MiB"``) or a number of
    bytes. ``from_trace`` is a past run of the same pipeline (a trace of
    ``swapsight record`` or ``swapsight.record()``): its peak footprint is
    the need where it is more than the weights. ``context`` (tokens:
    ``8192`` or ``"8k"``), ``parallel``, ``kv_dtype`` (``"bf16"``,
    ``"q8_0"``, ``"mlx-q4"``, …) and ``runtime`` (``"mlx"``,
    ``"llama.cpp"``, ``"torch"``) are the command's ``--context``,
    ``--parallel``, ``--kv-dtype`` and ``--runtime``: without a context
    the answer is at a short one, with the largest that fits under each
    bound in ``largest_context``. The estimate applies what past runs of
    ``swapsight fit MODEL -- CMD`` taught of the runtime and architecture,
    as the command does (a note says so); ``no_history=True`` is
    ``--no-history``: the estimate from the files alone. Raises
    :class:`Error` with the command line's one line when there is no
    answer (a bad size, a path or trace that cannot be read)::

        answer = swapsight.fit("~/models/Llama-3.1-8B-Instruct")
        if not answer.fits:
            print(answer.summary)
            for s in answer.settings:
                print(s.line, "—", s.risk)
    """
    if isinstance(path_or_size, bool) or not isinstance(path_or_size, (str, int, os.PathLike)):
        raise TypeError("path_or_size: a path, a size like '8G' or a number of bytes")
    if isinstance(path_or_size, int):
        if path_or_size < 0:
            raise ValueError("path_or_size: a number of bytes is 0 or more")
        target = str(path_or_size)
    else:
        target = os.path.expanduser(os.fspath(path_or_size))
        _refuse_a_missing_target(target, isinstance(path_or_size, os.PathLike))
    if not isinstance(no_history, bool):
        raise TypeError("no_history: True or False, not %r" % (no_history,))
    args: List[str] = [_binary(), "fit", "--json"]
    if no_history:
        args.append("--no-history")
    if from_trace is not None:
        args += ["--from", os.path.expanduser(os.fspath(from_trace))]
    for flag, value in (
        ("--context", context),
        ("--parallel", parallel),
        ("--kv-dtype", kv_dtype),
        ("--runtime", runtime),
    ):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError("%s: a number or a word, not %r" % (flag[2:].replace("-", "_"), value))
        args += [flag, str(value)]
    # The target as the first word, where the CLI takes it as PATH|SIZE
    # even when it starts with "-" (after "--" would come a command to
    # run); an existing path that starts with "-" goes as "./-x", which no
    # flag can be.
    if target.startswith("-") and os.path.lexists(target):
        target = os.path.join(".", target)
    args.insert(2, target)
    try:
        done = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise Error("cannot run swapsight fit: %s" % e) from None
    if done.returncode not in ANSWER_CODES:
        raise Error(
            _first_line(done.stderr)
            or "swapsight fit failed (exit code %d)" % done.returncode
        )
    try:
        obj = json.loads(done.stdout)
    except ValueError as e:
        raise Error("swapsight fit printed no JSON: %s" % e) from None
    if not isinstance(obj, dict):
        raise Error("swapsight fit printed no JSON object")
    return FitAnswer.from_json(obj)
