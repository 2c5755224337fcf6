"""Report: a run's report, ``swapsight report --json`` of its trace, as
Python, text, a pandas table, a chart and Jupyter's HTML."""

import html
import importlib
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

from ._cli import Error, _run, _run_json
from ._tables import flat_rows, format_bytes, format_figure
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
    ``.plot(path)``; ``str()`` is the report as ``swapsight report`` prints
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

    def plot(
        self,
        path: Union[str, "os.PathLike[str]"],
        processes: Optional[int] = None,
        size: Optional[Sequence[int]] = None,
    ) -> Union[str, "os.PathLike[str]"]:
        """Draws the run (``swapsight plot``) to ``path`` (``.png`` or
        ``.svg``); returns ``path``."""
        args = ["plot", self.trace, "-o", path]
        if processes is not None:
            args += ["--processes", str(processes)]
        if size is not None:
            args += ["--size", "%dx%d" % tuple(size)]
        _run(args, "plot")
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
        def esc(v: Any) -> str:
            return html.escape(str(v), quote=True)

        out = [
            "<div><p><b>%s</b> &mdash; %s</p>"
            % (esc(str(self._data.get("verdict")).upper()), esc(self._data.get("summary", "")))
        ]
        run_counters = self.counters
        if run_counters:
            out.append(
                "<p>counters: %s</p>"
                % esc(
                    "; ".join(
                        "%s peak %s, last %s"
                        % (
                            c.get("name"),
                            format_figure(c.get("peak"), c.get("unit")),
                            format_figure(c.get("last"), c.get("unit")),
                        )
                        for c in run_counters
                    )
                )
            )
        rows = self.phases
        if rows:
            out.append(
                "<table><tr><th>phase</th><th>start s</th><th>duration s</th>"
                "<th>peak footprint</th><th>swap growth</th><th>min free %</th>"
                "<th>counters</th><th>verdict</th></tr>"
            )
            for r in rows:
                counters = "; ".join(
                    "%s peak %s, last %s"
                    % (
                        c.get("name"),
                        format_figure(c.get("peak"), c.get("unit")),
                        format_figure(c.get("last"), c.get("unit")),
                    )
                    for c in r.get("counters", [])
                )
                out.append(
                    "<tr><td>%s</td><td>%.1f</td><td>%.1f</td><td>%s</td><td>%s</td>"
                    "<td>%.0f</td><td>%s</td><td>%s</td></tr>"
                    % (
                        esc(r.get("name")),
                        r.get("start_ms", 0) / 1000,
                        r.get("duration_ms", 0) / 1000,
                        esc(format_bytes(r.get("peak_footprint_bytes", 0))),
                        esc(format_bytes(r.get("swap_growth_bytes", 0))),
                        r.get("min_free_pct", 0),
                        esc(counters),
                        esc(r.get("verdict")),
                    )
                )
            out.append("</table>")
        out.append(
            "<table><tr><th>process</th><th>pid</th><th>peak footprint</th>"
            "<th>swap growth</th><th>verdict</th></tr>"
        )
        for p in self.processes:
            out.append(
                "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                % (
                    esc(p.get("name")),
                    esc(p.get("pid")),
                    esc(format_bytes(p.get("peak_footprint_bytes", 0))),
                    esc(format_bytes(p.get("swap_growth_bytes", 0))),
                    esc(p.get("verdict")),
                )
            )
        out.append("</table>")
        chart = self._svg()
        if chart:
            out.append(chart)
        out.append("</div>")
        return "".join(out)

    def _svg(self) -> str:
        """The chart as inline SVG (swapsight's own, escaped as it draws
        it), or "" when it cannot be drawn."""
        try:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "run.svg")
                self.plot(path)
                with open(path, encoding="utf-8") as f:
                    svg = f.read()
        except Exception as e:
            _log.debug("swapsight: no chart for %s: %s", self.trace, e)
            return ""
        start = svg.find("<svg")
        return svg[start:] if start >= 0 else ""


def _count(n: int, one: str, many: Optional[str] = None) -> str:
    """``1 phase``, ``2 phases``."""
    return "%d %s" % (n, one if n == 1 else many or one + "s")
