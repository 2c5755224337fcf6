"""swapsight's pytest plugin: memory budgets for tests, the way
pytest-memray's ``limit_memory`` works, judged by swapsight's recorder.

Installed with the package (the ``pytest11`` entry point) and inactive until
``--swapsight`` (or ``swapsight = true`` in the ini file) turns it on. Then
each test with a budget is recorded, from its setup to its teardown, with
one phase each (``setup``, ``call``, ``teardown``), and fails when it broke
one::

    @pytest.mark.swap_budget("1 GiB")       # swap growth during the test
    @pytest.mark.footprint_limit("24 GiB")  # the test's growth, process and children
    @pytest.mark.no_false_fit               # a false fit or hidden memory fails
    def test_generate(): ...

``footprint_limit`` counts the test's own growth (its peak less the
footprint it started with); ``of="peak"`` counts the whole process's peak.
The ini options ``swapsight_swap_budget``, ``swapsight_footprint_limit``,
``swapsight_footprint_of`` and ``swapsight_no_false_fit`` give every test a
budget; a marker overrides it. A budget that cannot be broken (no swap on
the machine or in the test's cgroup) passes with a warning, is skipped or
fails (``--swapsight-unbreakable``). ``--swapsight-fail-on-increase`` fails
a test whose peak footprint grew past ``--swapsight-tolerance`` since its
last passing run (pytest's cache, one entry per test);
``--swapsight-update-baseline`` takes this run's peaks as the new marks.
Under pytest-xdist the workers' results reach the summary, and their traces
one folder.
"""

import hashlib
import os
import time
from typing import Any, Dict, Generator, List, Optional

import pytest

from . import _pytest_budget as budgets
from ._pytest_line import PeakLine
from ._cli import Error
from ._phase import phase
from ._record import record
from ._tables import format_bytes

_MARKERS = {
    "swap_budget": "swap_budget(size): fail the test when swap grows by more than size "
    "while it runs (swapsight; needs --swapsight)",
    "footprint_limit": "footprint_limit(size, of='growth'): fail the test when its process and "
    "children grow by more than size while it runs (of='peak': when their peak footprint "
    "passes size) (swapsight; needs --swapsight)",
    "no_false_fit": "no_false_fit: fail the test when swapsight judges it a false fit or "
    "hidden memory (swapsight; needs --swapsight)",
}
_CACHE_PREFIX = "swapsight/peak/"
#: The user property a judged test's figures ride on to the summary (and,
#: under xdist, from the worker to the controller).
_PROPERTY = "swapsight"


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
        help="where the tests' traces go (default: a swapsight folder in pytest's "
        "temporary folder, of which pytest keeps the last 3 runs')",
    )
    group.addoption(
        "--swapsight-unbreakable",
        metavar="ACTION",
        help="what a budget that cannot be broken (no swap on the machine or in the test's "
        "cgroup) does: warn (pass, said on the test's line and in the summary; the default), "
        "skip or fail",
    )
    group.addoption(
        "--swapsight-fail-on-increase",
        action="store_true",
        default=False,
        help="record every test and fail one whose peak footprint grew past the tolerance "
        "since its last passing run",
    )
    group.addoption(
        "--swapsight-update-baseline",
        action="store_true",
        default=False,
        help="record every test and take this run's peak footprints as the marks "
        "--swapsight-fail-on-increase compares with (no test fails for an increase)",
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
    parser.addini(
        "swapsight_footprint_of",
        "what footprint_limit counts: growth (the test's own, default) or peak",
        default="growth",
    )
    parser.addini("swapsight_no_false_fit", "no_false_fit for every test", type="bool", default=False)
    parser.addini(
        "swapsight_unbreakable",
        "what a budget that cannot be broken does: warn, skip or fail",
        default="warn",
    )
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
        return
    for flag in ("fail_on_increase", "update_baseline"):
        if config.getoption("swapsight_" + flag):
            raise pytest.UsageError(
                "swapsight: --swapsight-%s needs --swapsight (or swapsight = true in the ini)"
                % flag.replace("_", "-")
            )


class SwapsightPlugin:
    """The plugin while it is on: one per pytest process (the controller
    and each worker under xdist)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.default = budgets.Budget()
        self.default.swap = budgets.size_option(
            "swapsight_swap_budget", config.getini("swapsight_swap_budget")
        )
        self.default.footprint = budgets.size_option(
            "swapsight_footprint_limit", config.getini("swapsight_footprint_limit")
        )
        self.default.footprint_of = budgets.choice_option(
            "swapsight_footprint_of", config.getini("swapsight_footprint_of"), budgets.FOOTPRINT_OF
        )
        self.default.no_false_fit = bool(config.getini("swapsight_no_false_fit"))
        self.unbreakable = budgets.choice_option(
            "--swapsight-unbreakable",
            config.getoption("swapsight_unbreakable") or config.getini("swapsight_unbreakable"),
            budgets.UNBREAKABLE,
        )
        self.interval = str(config.getini("swapsight_interval"))
        self.fail_on_increase = bool(config.getoption("swapsight_fail_on_increase"))
        self.update_baseline = bool(config.getoption("swapsight_update_baseline"))
        self.tolerance = budgets.tolerance(config.getoption("swapsight_tolerance"))
        if (self.fail_on_increase or self.update_baseline) and getattr(
            config, "cache", None
        ) is None:
            raise pytest.UsageError(
                "swapsight: --swapsight-fail-on-increase and --swapsight-update-baseline need "
                "pytest's cache (-p no:cacheprovider turns it off)"
            )
        workerinput: Optional[Dict[str, Any]] = getattr(config, "workerinput", None)
        #: How many pytest processes run tests side by side (xdist's workers).
        self.shared = int((workerinput or {}).get("workercount") or 1)
        self._dir = (workerinput or {}).get("swapsight_dir")
        self.results: List[Dict[str, Any]] = []
        #: xdist's workers, as the controller starts them.
        self.workers = 0
        self._recording: Optional[str] = None

    @property
    def dir(self) -> str:
        """The traces' folder, made when first asked (on the controller under
        xdist, which hands it to its workers)."""
        if self._dir is None:
            folder = self.config.getoption("swapsight_dir")
            if folder:
                self._dir = os.path.abspath(folder)
                os.makedirs(self._dir, exist_ok=True)
            else:
                # pytest's own temporary folder: pytest keeps its last 3 runs'.
                factory = self.config._tmp_path_factory  # type: ignore[attr-defined]
                self._dir = str(factory.mktemp("swapsight", numbered=True))
        return self._dir

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist's controller: one folder for every worker's traces."""
        node.workerinput["swapsight_dir"] = self.dir
        self.workers += 1

    def trace_path(self, item: pytest.Item) -> str:
        name = "".join(c if c.isalnum() or c in "_.-" else "_" for c in item.nodeid)
        name = "_".join(filter(None, name.split("_")))[:150] or "test"
        return os.path.join(self.dir, name + ".jsonl")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> Any:
        budget = self.default.of_item(item)
        tracked = self.fail_on_increase or self.update_baseline
        if not budget.any and budget.problem is None and not tracked:
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
        if started is None:
            # The footprint the test starts from is the first sample's.
            _wait_for_samples(trace, want=1)
        peak_line = PeakLine(str(item.path)).start() if budget.footprint is not None else None
        try:
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
        finally:
            line = peak_line.stop() if peak_line is not None else None
            self._recording = None
            if started is None:
                _wait_for_samples(trace)
            report = rec.stop() if started is None else None
        problems = [budget.problem] if budget.problem else []
        judged: Optional[budgets.Judged] = None
        if started:
            problems.append(started)
        elif report is None:
            problems.append("swapsight has no report of this test: %s" % rec.error)
        else:
            if rec.error:
                # A partial report says nothing of the test's end: the OOM
                # killer may have ended the recorder at the peak.
                problems.append("swapsight's recording of this test ended early: %s" % rec.error)
            judged = budgets.judge(
                budget, report.to_dict(), budgets.start_footprint(trace), self.shared, line
            )
            problems += judged.problems
            if tracked:
                problems += self._increase(item.nodeid, judged.peak, passed=not problems)
        self._settle(item, reports, problems, judged, trace)
        for rep in reports:
            ihook.pytest_runtest_logreport(report=rep)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _settle(
        self,
        item: pytest.Item,
        reports: List[pytest.TestReport],
        problems: List[str],
        judged: Optional[budgets.Judged],
        trace: str,
    ) -> None:
        """Puts what swapsight found on the test's report: the call's, or
        the setup's when the test never ran (a fixture that broke a budget,
        then skipped or failed)."""
        target = next((r for r in reports if r.when == "call"), None)
        if target is None:
            target = next((r for r in reports if r.when == "setup"), None)
        if target is None:
            return
        if judged is not None:
            target.user_properties.append((_PROPERTY, self._result(item, judged, trace)))
        if problems:
            _fail(target, problems, judged, trace)
        elif judged is not None and judged.unbreakable:
            self._unbreakable(item, target, judged.unbreakable)

    def _result(self, item: pytest.Item, judged: budgets.Judged, trace: str) -> Dict[str, Any]:
        return {
            "nodeid": item.nodeid,
            "trace": trace,
            "peak": judged.peak,
            "start": judged.start,
            "swap": judged.swap,
            "verdict": judged.verdict,
            "unbreakable": judged.unbreakable,
        }

    def _unbreakable(self, item: pytest.Item, target: pytest.TestReport, why: List[str]) -> None:
        text = "; ".join(why)
        if self.unbreakable == "fail":
            _fail(target, why, None, None)
        elif self.unbreakable == "skip" and target.outcome == "passed":
            path, line = str(item.location[0]), item.location[1] or 0
            target.outcome = "skipped"
            target.longrepr = (path, line, "Skipped: swapsight: %s" % text)
        elif self.unbreakable == "warn":
            target.sections.append(("swapsight", text))
            item.warn(pytest.PytestWarning("swapsight: %s" % text))

    def _increase(self, nodeid: str, peak: int, passed: bool) -> List[str]:
        cache = self.config.cache
        assert cache is not None  # checked in __init__
        # One entry per test: xdist's workers write theirs side by side.
        key = _CACHE_PREFIX + hashlib.sha256(nodeid.encode()).hexdigest()[:24]
        entry = cache.get(key, None)
        before = entry.get("peak") if isinstance(entry, dict) and entry.get("nodeid") == nodeid else None
        if self.update_baseline:
            cache.set(key, {"nodeid": nodeid, "peak": peak})
            return []
        share, size = self.tolerance
        if isinstance(before, int) and peak > before + max(before * share, size):
            return [
                "peak footprint %s grew past the tolerance (%s) since the last passing run's %s "
                "(--swapsight-update-baseline takes the new figure)"
                % (format_bytes(peak), self._tolerance_words(), format_bytes(before))
            ]
        if passed:
            # Only a passing run is the mark to beat.
            cache.set(key, {"nodeid": nodeid, "peak": peak})
        return []

    def _tolerance_words(self) -> str:
        share, size = self.tolerance
        return format_bytes(size) if size else "%g %%" % (share * 100)

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

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Here, not where the test was judged: under xdist the controller
        # sees its workers' reports only.
        for name, value in report.user_properties:
            if name == _PROPERTY and isinstance(value, dict):
                self.results.append(value)

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        """A pass whose budget could not be broken says so on its line."""
        if report.outcome != "passed" or report.when not in ("call", "setup"):
            return None
        for name, value in report.user_properties:
            if name == _PROPERTY and isinstance(value, dict) and value.get("unbreakable"):
                return (
                    "passed",
                    "u",
                    ("PASSED (swapsight: budget could not be broken)", {"yellow": True}),
                )
        return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results:
            return
        tr = terminalreporter
        tr.write_sep("=", "swapsight: tests by peak footprint")
        for r in sorted(self.results, key=lambda r: (-r["peak"], -r["swap"], r["nodeid"])):
            start = r.get("start")
            grew = "%10s grew" % _signed(r["peak"] - start) if isinstance(start, int) else " " * 15
            tr.write_line(
                "%10s peak %s %10s swap  %-13s %s"
                % (format_bytes(r["peak"]), grew, _signed(r["swap"]), r["verdict"], r["nodeid"])
            )
        unbreakable = [r for r in self.results if r.get("unbreakable")]
        if unbreakable:
            tr.write_line(
                "%d test%s with a budget that could not be broken (--swapsight-unbreakable=%s): %s"
                % (
                    len(unbreakable),
                    "" if len(unbreakable) == 1 else "s",
                    self.unbreakable,
                    unbreakable[0]["unbreakable"][0],
                )
            )
        if self.workers > 1:
            tr.write_line(
                "swap and free memory are the machine's: %d xdist workers ran tests side by side, "
                "and each test's swap figure counts them all" % self.workers
            )
        tr.write_line("traces: %s" % self.dir)


def _fail(
    target: pytest.TestReport,
    problems: List[str],
    judged: Optional[budgets.Judged],
    trace: Optional[str],
) -> None:
    lines = ["swapsight: " + p for p in problems]
    if judged is not None:
        lines.append("evidence: %s" % budgets.evidence(judged.data))
    if trace is not None:
        lines.append("trace: %s" % trace)
    text = "\n".join(lines)
    if target.outcome == "failed":
        target.sections.append(("swapsight", text))
        return
    target.outcome = "failed"
    target.longrepr = text


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
