"""Report: a run's report, ``swapsight report --json`` of its trace, as
Python, text, a pandas table, a chart and Jupyter's HTML."""

import importlib
import json
import os
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    List,
    Literal,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from ._chart import Chart, draw_svg
from ._cli import Error, _run, _run_json
from ._html import report_html
from ._tables import flat_rows

#: A path as given: returned as it came.
PathT = TypeVar("PathT", str, "os.PathLike[str]")
from ._writer import _log

if TYPE_CHECKING:
    # pandas is optional: where it is typed (pandas-stubs), to_pandas() is a
    # DataFrame to the checker; elsewhere it is Any, as pandas itself is.
    import pandas  # type: ignore[import-not-found, import-untyped, unused-ignore]

#: A run's verdict, worst last: crates/core/src/step/detect.rs ``State``.
Verdict = Literal["fits", "hidden-memory", "overflow", "false-fit"]
VERDICTS: Tuple[Verdict, ...] = ("fits", "hidden-memory", "overflow", "false-fit")


class Report:
    """A run's report: ``swapsight report --json`` of its trace.

    ``.verdict`` (``"fits"``, ``"overflow"``, ``"false-fit"``,
    ``"hidden-memory"``), ``.phases`` and ``.processes`` (lists of dicts, as
    in the JSON), ``.counters``, ``.to_dict()``, ``.to_pandas()``,
    ``.plot(path)`` (``.plot()``: the chart inline); ``str()`` is the report as ``swapsight report`` prints
    it, and Jupyter shows a table and the chart.
    """

    def __init__(self, data: Dict[str, Any], trace: Union[str, "os.PathLike[str]"]) -> None:
        self._data = data
        self.trace = os.fspath(trace)
        self._text: Optional[str] = None

    @classmethod
    def of(cls, trace: Union[str, "os.PathLike[str]"]) -> "Report":
        """The report of a trace file."""
        return cls(_run_json(["report", "--json", trace], "report"), trace)

    @property
    def verdict(self) -> Verdict:
        """``"fits"``, ``"hidden-memory"``, ``"overflow"`` or ``"false-fit"``.
        Raises :class:`Error` for a report without one of them (never one
        ``swapsight report --json`` printed)."""
        found = self._data.get("verdict")
        for verdict in VERDICTS:
            if found == verdict:
                return verdict
        raise Error("the report of %s has no verdict swapsight knows: %r" % (self.trace, found))

    @property
    def phases(self) -> List[Dict[str, Any]]:
        return list(self._data.get("phases", []))

    @property
    def processes(self) -> List[Dict[str, Any]]:
        return list(self._data.get("processes", []))

    @property
    def counters(self) -> List[Dict[str, Any]]:
        return list(self._data.get("counters", []))

    def to_dict(self) -> Dict[str, Any]:
        """The whole report, as ``swapsight report --json`` prints it."""
        whole: Dict[str, Any] = json.loads(json.dumps(self._data))
        return whole

    def to_pandas(
        self, table: Literal["phases", "processes", "counters"] = "phases"
    ) -> "pandas.DataFrame":
        """``table`` (``"phases"``, ``"processes"`` or ``"counters"``) as a
        pandas DataFrame, one plain column per figure (``pressure_peak``,
        ``counter_peak:NAME:UNIT``: nothing nested). Needs pandas (not a
        dependency of swapsight)."""
        if table not in ("phases", "processes", "counters"):
            raise ValueError("table is 'phases', 'processes' or 'counters', not %r" % (table,))
        try:
            # By name: pandas is optional, and typed or not where it is.
            pandas: Any = importlib.import_module("pandas")
        except ImportError:
            raise Error("to_pandas() needs pandas: pip install pandas") from None
        return pandas.DataFrame(flat_rows(self._data.get(table, [])))

    @overload
    def plot(
        self,
        path: None = None,
        processes: Optional[int] = None,
        size: Optional[Sequence[int]] = None,
    ) -> Chart: ...

    @overload
    def plot(
        self,
        path: PathT,
        processes: Optional[int] = None,
        size: Optional[Sequence[int]] = None,
    ) -> PathT: ...

    def plot(
        self,
        path: Optional[PathT] = None,
        processes: Optional[int] = None,
        size: Optional[Sequence[int]] = None,
    ) -> Union[Chart, PathT]:
        """Draws the run (``swapsight plot``) to ``path`` (``.png`` or
        ``.svg``) and returns ``path``; with no path, returns the chart as
        a :class:`Chart`, which a notebook shows inline."""
        args: List[str] = [self.trace]
        if processes is not None:
            args += ["--processes", str(processes)]
        if size is not None:
            args += ["--size", "%dx%d" % tuple(size)]
        if path is None:
            return Chart(draw_svg(args), self.trace)
        _run(["plot"] + args + ["-o", os.fspath(path)], "plot")
        return path

    @property
    def text(self) -> str:
        """The report as ``swapsight report`` prints it."""
        if self._text is None:
            self._text = _run(["report", self.trace], "report")
        return self._text

    def __str__(self) -> str:
        try:
            return self.text
        except Error as e:
            return "swapsight report of %s: %s" % (self.trace, e)

    def __repr__(self) -> str:
        return "<swapsight.Report %s: %s, %s, %s>" % (
            self.trace,
            self._data.get("verdict"),
            _count(len(self.phases), "phase"),
            _count(len(self.processes), "process", "processes"),
        )

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        # IPython's text view (a terminal, a notebook's text/plain): the
        # report as swapsight report prints it, not the one-line repr.
        p.text(str(self).rstrip("\n"))

    def _repr_html_(self) -> str:
        return report_html(self._data, self._svg())

    def _svg(self) -> str:
        """The chart as inline SVG (swapsight's own, escaped as it draws
        it), or "" when it cannot be drawn."""
        try:
            return draw_svg([self.trace])
        except Exception as e:
            _log.debug("swapsight: no chart for %s: %s", self.trace, e)
            return ""


def _count(n: int, one: str, many: Optional[str] = None) -> str:
    """``1 phase``, ``2 phases``."""
    return "%d %s" % (n, one if n == 1 else many or one + "s")
