"""swapsight's pytest plugin: memory budgets for tests, the way
pytest-memray's ``limit_memory`` works, judged by swapsight's recorder.

Installed with the package (the ``pytest11`` entry point) and inactive until
``--swapsight`` (or ``swapsight = true`` in the ini file) turns it on. Then
each test with a budget is recorded, from its setup to its teardown, with
one phase each (``setup``, ``call``, ``teardown``), and fails when it broke
one::

    @pytest.mark.swap_budget("1 GB")        # swap growth during the test
    @pytest.mark.footprint_limit("24 GB")   # peak footprint, process and children
    @pytest.mark.no_false_fit               # a false fit or hidden memory fails
    def test_generate(): ...

The ini options ``swapsight_swap_budget``, ``swapsight_footprint_limit`` and
``swapsight_no_false_fit`` give every test a budget; a marker overrides it.
``--swapsight-fail-on-increase`` fails a test whose peak footprint grew past
``--swapsight-tolerance`` since its last passing run (pytest's cache).
"""

import os
import re
import tempfile
import time
from typing import Any, Dict, Generator, List, Optional, Tuple

import pytest

from ._cli import Error
from ._phase import phase
from ._record import record
from ._report import Report
from ._tables import format_bytes, parse_size

_MARKERS = {
    "swap_budget": "swap_budget(size): fail the test when swap grows by more than size "
    "while it runs (swapsight; needs --swapsight)",
    "footprint_limit": "footprint_limit(size): fail the test when the peak footprint of its "
    "process and children passes size (swapsight; needs --swapsight)",
    "no_false_fit": "no_false_fit: fail the test when swapsight judges it a false fit or "
    "hidden memory (swapsight; needs --swapsight)",
}
_CACHE_KEY = "swapsight/peak_footprint"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("swapsight", "memory budgets judged by swapsight")
    group.addoption(
        "--swapsight",
        action="store_true",
        default=None,
        help="record tests with a swapsight budget (markers or ini defaults) and judge them",
    )
    group.addoption(
        "--swapsight-dir",
        metavar="DIR",
        help="where the tests' traces go (default: a new temporary folder)",
    )
    group.addoption(
        "--swapsight-fail-on-increase",
        action="store_true",
        default=False,
        help="fail a recorded test whose peak footprint grew past the tolerance "
        "since its last passing run",
    )
    group.addoption(
        "--swapsight-tolerance",
        metavar="T",
        help="growth --swapsight-fail-on-increase allows: a share (10%%) or a size (64M); "
        "default 10%%",
    )
    parser.addini("swapsight", "turn swapsight's plugin on", type="bool", default=False)
    parser.addini("swapsight_swap_budget", "swap_budget of every test (a size)", default="")
    parser.addini("swapsight_footprint_limit", "footprint_limit of every test (a size)", default="")
    parser.addini("swapsight_no_false_fit", "no_false_fit for every test", type="bool", default=False)
    parser.addini("swapsight_interval", "sampling interval of the recordings", default="100ms")


def pytest_configure(config: pytest.Config) -> None:
    # Registered even when off: --strict-markers must not reject them.
    for name, text in _MARKERS.items():
        config.addinivalue_line("markers", text)
    on = config.getoption("swapsight")
    if on is None:
        on = config.getini("swapsight")
    if on:
        config.pluginmanager.register(SwapsightPlugin(config), "swapsight-plugin")


def _size_option(where: str, value: Any) -> Optional[int]:
    if value in (None, ""):
        return None
    try:
        return parse_size(value)
    except ValueError as e:
        raise pytest.UsageError("swapsight: %s: %s" % (where, e)) from None


def _tolerance(text: Optional[str]) -> Tuple[float, int]:
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
    return 0.0, _size_option("--swapsight-tolerance", text) or 0


class _Budget:
    """What a test must keep to; ``problem`` is a bad marker, said as the
    test's failure."""

    def __init__(self) -> None:
        self.swap: Optional[int] = None
        self.footprint: Optional[int] = None
        self.no_false_fit = False
        self.problem: Optional[str] = None

    @property
    def any(self) -> bool:
        return self.swap is not None or self.footprint is not None or self.no_false_fit


class _Result:
    """One recorded test, for the terminal summary."""

    def __init__(self, nodeid: str, trace: str, peak: int, swap: int, verdict: str) -> None:
        self.nodeid = nodeid
        self.trace = trace
        self.peak = peak
        self.swap = swap
        self.verdict = verdict


class SwapsightPlugin:
    """The plugin while it is on: one per pytest run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.default = _Budget()
        self.default.swap = _size_option(
            "swapsight_swap_budget", config.getini("swapsight_swap_budget")
        )
        self.default.footprint = _size_option(
            "swapsight_footprint_limit", config.getini("swapsight_footprint_limit")
        )
        self.default.no_false_fit = bool(config.getini("swapsight_no_false_fit"))
        self.interval = str(config.getini("swapsight_interval"))
        self.fail_on_increase = bool(config.getoption("swapsight_fail_on_increase"))
        self.tolerance = _tolerance(config.getoption("swapsight_tolerance"))
        if self.fail_on_increase and getattr(config, "cache", None) is None:
            raise pytest.UsageError(
                "swapsight: --swapsight-fail-on-increase needs pytest's cache "
                "(-p no:cacheprovider turns it off)"
            )
        folder = config.getoption("swapsight_dir")
        if folder:
            self.dir = os.path.abspath(folder)
            os.makedirs(self.dir, exist_ok=True)
        else:
            self.dir = tempfile.mkdtemp(prefix="swapsight-pytest-")
        self.results: List[_Result] = []
        self._recording: Optional[str] = None

    def budget(self, item: pytest.Item) -> _Budget:
        b = _Budget()
        b.swap, b.footprint = self.default.swap, self.default.footprint
        b.no_false_fit = self.default.no_false_fit
        for name in ("swap_budget", "footprint_limit"):
            m = item.get_closest_marker(name)
            if m is None:
                continue
            if len(m.args) != 1 or m.kwargs:
                b.problem = '@pytest.mark.%s takes one size, like %s("1 GB")' % (name, name)
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
        if item.get_closest_marker("no_false_fit") is not None:
            b.no_false_fit = True
        return b

    def trace_path(self, item: pytest.Item) -> str:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid).strip("_")[:150] or "test"
        return os.path.join(self.dir, name + ".jsonl")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> Any:
        budget = self.budget(item)
        if not budget.any and budget.problem is None:
            return None
        from _pytest.runner import runtestprotocol

        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        trace = self.trace_path(item)
        rec = record(trace, interval=self.interval)
        started: Optional[str] = None
        try:
            rec.start()
        except Error as e:
            started = "swapsight could not record this test: %s" % e
        self._recording = None if started else trace
        try:
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
        finally:
            self._recording = None
            if started is None:
                _wait_for_samples(trace)
            report = rec.stop() if started is None else None
        problems = [budget.problem] if budget.problem else []
        if started:
            problems.append(started)
        elif report is None:
            problems.append("swapsight has no report of this test: %s" % rec.error)
        else:
            problems += self.judge(item, budget, report)
        call = next((r for r in reports if r.when == "call"), None)
        if call is not None and problems:
            self.fail(call, problems, report, trace)
        for rep in reports:
            ihook.pytest_runtest_logreport(report=rep)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._in_phase("setup"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._in_phase("call"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._in_phase("teardown"))

    def _in_phase(self, when: str) -> Generator[None, Any, Any]:
        if self._recording is None:
            return (yield)
        with phase(when):
            return (yield)

    def judge(self, item: pytest.Item, budget: _Budget, report: Report) -> List[str]:
        data = report.to_dict()
        peak = _peak_footprint(data)
        swap = int(data.get("swap_growth_bytes") or 0)
        verdict = str(data.get("verdict"))
        self.results.append(_Result(item.nodeid, report.trace, peak, swap, verdict))
        problems = []
        if budget.swap is not None and swap > budget.swap:
            problems.append(
                "swap_budget: swap grew %s, past the budget of %s"
                % (format_bytes(swap), format_bytes(budget.swap))
            )
        if budget.footprint is not None and peak > budget.footprint:
            problems.append(
                "footprint_limit: peak footprint %s, over the limit of %s"
                % (format_bytes(peak), format_bytes(budget.footprint))
            )
        if budget.no_false_fit and verdict in ("false-fit", "hidden-memory"):
            problems.append("no_false_fit: the run was judged %s" % verdict.replace("-", " "))
        if self.fail_on_increase:
            problems += self._increase(item.nodeid, peak, passed=not problems)
        return problems

    def _increase(self, nodeid: str, peak: int, passed: bool) -> List[str]:
        cache = self.config.cache
        assert cache is not None  # checked in __init__
        peaks: Dict[str, int] = dict(cache.get(_CACHE_KEY, {}))
        before = peaks.get(nodeid)
        share, size = self.tolerance
        if before is not None and peak > before + max(before * share, size):
            return [
                "peak footprint %s grew past the tolerance (%s) since the last passing run's %s"
                % (format_bytes(peak), self._tolerance_words(), format_bytes(before))
            ]
        if passed:
            # Only a passing run is the mark to beat.
            peaks[nodeid] = peak
            cache.set(_CACHE_KEY, peaks)
        return []

    def _tolerance_words(self) -> str:
        share, size = self.tolerance
        return format_bytes(size) if size else "%g %%" % (share * 100)

    def fail(self, call: Any, problems: List[str], report: Optional[Report], trace: str) -> None:
        lines = ["swapsight: " + p for p in problems]
        if report is not None:
            lines.append("evidence: %s" % _evidence(report.to_dict()))
        lines.append("trace: %s" % trace)
        text = "\n".join(lines)
        if call.outcome == "failed":
            call.sections.append(("swapsight", text))
            return
        call.outcome = "failed"
        call.longrepr = text

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results:
            return
        tr = terminalreporter
        tr.write_sep("=", "swapsight: tests by peak footprint")
        for r in sorted(self.results, key=lambda r: (-r.peak, -r.swap, r.nodeid)):
            tr.write_line(
                "%10s peak  %10s swap  %-13s %s"
                % (format_bytes(r.peak), _signed(r.swap), r.verdict, r.nodeid)
            )
        tr.write_line("traces: %s" % self.dir)


def _wait_for_samples(trace: str, want: int = 2, timeout: float = 3.0) -> None:
    """Waits (a few intervals at most) until the trace holds ``want``
    samples: a test quicker than the recorder's first samples would have
    nothing to judge."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        try:
            with open(trace, "rb") as f:
                if f.read().count(b'"type":"sample"') >= want:
                    return
        except OSError:
            return
        time.sleep(0.02)


def _signed(b: int) -> str:
    return ("+" if b > 0 else "") + format_bytes(b)


def _peak_footprint(data: Dict[str, Any]) -> int:
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


def _evidence(data: Dict[str, Any]) -> str:
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
