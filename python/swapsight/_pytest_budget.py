"""What a test must keep to (its markers and the ini's defaults) and the
judging of one recorded test against it, for swapsight's pytest plugin
(python/swapsight/pytest_plugin.py, which holds the hooks)."""

import json
from typing import Any, Dict, List, Optional, Tuple

import pytest

from ._tables import format_bytes, parse_size

#: What footprint_limit counts: the test's own growth (its peak less the
#: footprint when it started, what pytest-memray's limit_memory is closest
#: to) or the whole process's peak.
FOOTPRINT_OF = ("growth", "peak")
#: What a budget that cannot be broken (no swap) does to its test.
UNBREAKABLE = ("warn", "skip", "fail")
#: The longest first sample line read for the footprint at a test's start.
_MAX_LINE = 64 << 20


def size_option(where: str, value: Any) -> Optional[int]:
    if value in (None, ""):
        return None
    try:
        return parse_size(value)
    except ValueError as e:
        raise pytest.UsageError("swapsight: %s: %s" % (where, e)) from None


def choice_option(where: str, value: Any, choices: Tuple[str, ...]) -> str:
    text = str(value).strip()
    if text not in choices:
        raise pytest.UsageError(
            "swapsight: %s %r: one of %s" % (where, text, ", ".join(choices))
        )
    return text


def tolerance(text: Optional[str]) -> Tuple[float, int]:
    """(share, bytes): the growth allowed is the larger of the two."""
    text = (text or "10%").strip()
    if text.endswith("%"):
        try:
            share = float(text[:-1]) / 100
        except ValueError:
            share = -1.0
        if not 0 <= share < float("inf"):
            raise pytest.UsageError(
                "swapsight: --swapsight-tolerance %r: a share is a number of percent, like 10%%"
                % text
            )
        return share, 0
    return 0.0, size_option("--swapsight-tolerance", text) or 0


class Budget:
    """What a test must keep to; ``problem`` is a bad marker, said as the
    test's failure."""

    def __init__(self) -> None:
        self.swap: Optional[int] = None
        self.footprint: Optional[int] = None
        self.footprint_of = "growth"
        self.no_false_fit = False
        self.problem: Optional[str] = None

    @property
    def any(self) -> bool:
        return self.swap is not None or self.footprint is not None or self.no_false_fit

    def of_item(self, item: pytest.Item) -> "Budget":
        """This budget (the ini's defaults) with ``item``'s markers over it."""
        b = Budget()
        b.swap, b.footprint = self.swap, self.footprint
        b.footprint_of, b.no_false_fit = self.footprint_of, self.no_false_fit
        for name in ("swap_budget", "footprint_limit"):
            m = item.get_closest_marker(name)
            if m is None:
                continue
            kwargs = dict(m.kwargs)
            of = kwargs.pop("of", None) if name == "footprint_limit" else None
            if len(m.args) != 1 or kwargs:
                b.problem = '@pytest.mark.%s takes one size, like %s("1 GiB")%s' % (
                    name,
                    name,
                    ', and of="growth" or "peak"' if name == "footprint_limit" else "",
                )
                continue
            if of is not None and of not in FOOTPRINT_OF:
                b.problem = '@pytest.mark.footprint_limit: of=%r: "growth" or "peak"' % (of,)
                continue
            try:
                size = parse_size(m.args[0])
            except ValueError as e:
                b.problem = "@pytest.mark.%s: %s" % (name, e)
                continue
            if name == "swap_budget":
                b.swap = size
            else:
                b.footprint = size
                b.footprint_of = of or b.footprint_of
        if item.get_closest_marker("no_false_fit") is not None:
            b.no_false_fit = True
        return b


class Judged:
    """One recorded test's figures and what it broke."""

    def __init__(self, data: Dict[str, Any], start: Optional[int]) -> None:
        self.data = data
        self.peak = peak_footprint(data)
        #: The footprint of the test's process tree at its first sample.
        self.start = start
        self.swap = int(data.get("swap_growth_bytes") or 0)
        self.verdict = str(data.get("verdict"))
        self.swap_off: Optional[str] = data.get("swap_off")
        self.problems: List[str] = []
        #: Budgets that could not be broken here, in words.
        self.unbreakable: List[str] = []
        #: The test's own line running when its process peaked.
        self.line: Optional[str] = None

    @property
    def growth(self) -> int:
        return self.peak - (self.start or 0)


def judge(
    budget: Budget,
    data: Dict[str, Any],
    start: Optional[int],
    shared: int,
    line: Optional[str] = None,
) -> Judged:
    """The test's figures against its budget. ``shared``: how many pytest
    processes ran tests beside it (xdist), which machine-wide swap counts
    too; ``line``: the test's line running when its process peaked."""
    j = Judged(data, start)
    j.line = line
    if budget.swap is not None and j.swap > budget.swap:
        line = "swap_budget: swap grew %s, past the budget of %s" % (
            format_bytes(j.swap),
            format_bytes(budget.swap),
        )
        if shared > 1:
            line += (
                " (swap is the machine's: %d pytest workers ran tests beside each other, "
                "and any of them may have grown it)" % shared
            )
        j.problems.append(line)
    if budget.footprint is not None:
        j.problems += _footprint_problems(budget, j)
    if budget.no_false_fit and j.verdict in ("false-fit", "hidden-memory"):
        j.problems.append("no_false_fit: the run was judged %s" % j.verdict.replace("-", " "))
    if j.swap_off is not None:
        why = _swap_off_words(j.swap_off, data)
        if budget.swap is not None:
            j.unbreakable.append("swap_budget could not be broken: %s" % why)
        if budget.no_false_fit:
            j.unbreakable.append("no_false_fit could not be broken (no swap to show it): %s" % why)
    return j


def _footprint_problems(budget: Budget, j: Judged) -> List[str]:
    assert budget.footprint is not None
    phase_name = peak_phase(j.data)
    where = " (in %s" % phase_name if phase_name else ""
    if j.line:
        where += ("; " if where else " (") + "%s was running at the peak" % j.line
    where += ")" if where else ""
    if budget.footprint_of == "peak" or j.start is None:
        if j.peak <= budget.footprint:
            return []
        return [
            "footprint_limit: peak footprint %s%s, over the limit of %s%s"
            % (
                format_bytes(j.peak),
                where,
                format_bytes(budget.footprint),
                "" if budget.footprint_of == "peak" else " (its start was not sampled)",
            )
        ]
    if j.growth <= budget.footprint:
        return []
    return [
        "footprint_limit: grew %s from %s at its start to %s%s, limit %s"
        % (
            format_bytes(j.growth),
            format_bytes(j.start),
            format_bytes(j.peak),
            where,
            format_bytes(budget.footprint),
        )
    ]


def _swap_off_words(code: str, data: Dict[str, Any]) -> str:
    if code == "no-swap":
        return "no swap on this machine (SwapTotal 0)"
    if code == "scope-swap-off":
        path = (data.get("scope") or {}).get("path")
        return "the test's cgroup%s allows it no swap (its swap limit is 0)" % (
            " " + str(path) if path else ""
        )
    return str(code)


def peak_footprint(data: Dict[str, Any]) -> int:
    """The peak footprint of the watched process and its children: the
    phases' peak (the recording has a phase from setup to teardown), else
    the watched processes' largest."""
    phases = [int(p.get("peak_footprint_bytes") or 0) for p in data.get("phases", [])]
    if phases:
        return max(phases)
    watched = [
        int(p.get("peak_footprint_bytes") or 0) for p in data.get("processes", []) if p.get("watched")
    ]
    return max(watched, default=0)


def peak_phase(data: Dict[str, Any]) -> Optional[str]:
    """The phase (setup, call, teardown, or the test's own) whose samples
    held the peak footprint."""
    best: Optional[Tuple[int, str]] = None
    for p in data.get("phases", []):
        peak = int(p.get("peak_footprint_bytes") or 0)
        if int(p.get("samples") or 0) > 0 and (best is None or peak > best[0]):
            best = (peak, str(p.get("name")))
    return best[1] if best else None


def start_footprint(trace: str) -> Optional[int]:
    """Σ footprints of the watched tree at the trace's first sample that
    has one: the footprint the test started from."""
    try:
        with open(trace, "rb") as f:
            for _ in range(64):
                line = f.readline(_MAX_LINE)
                if not line:
                    return None
                if b'"type":"sample"' not in line:
                    continue
                sample = json.loads(line)
                watched = set(sample.get("watched") or [])
                if not watched:
                    continue
                return sum(
                    int(p.get("footprint_bytes") or 0)
                    for p in sample.get("procs", [])
                    if p.get("pid") in watched
                )
    except (OSError, ValueError):
        return None
    return None


def evidence(data: Dict[str, Any]) -> str:
    """The report's one line on the process its verdict is about (a false
    fit's child, say), else on the watched process, else its summary."""
    procs = data.get("processes", [])
    for p in procs:
        if p.get("verdict") == data.get("verdict") and p.get("verdict") != "fits":
            return "%s (pid %s): %s" % (p.get("name"), p.get("pid"), p.get("evidence"))
    for p in procs:
        if p.get("watched") and p.get("evidence"):
            return str(p["evidence"])
    return str(data.get("summary", ""))
