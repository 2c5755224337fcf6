"""Report: a run's report, ``swapsight report --json`` of its trace, as
Python, text, a pandas table, a chart and Jupyter's HTML."""

import html
import json
import os
import tempfile

from ._cli import Error, _run, _run_json
from ._writer import _log


class Report:
    """A run's report: ``swapsight report --json`` of its trace.

    ``.verdict`` (``"fits"``, ``"overflow"``, ``"false-fit"``,
    ``"hidden-memory"``), ``.phases`` and ``.processes`` (lists of dicts, as
    in the JSON), ``.counters``, ``.to_dict()``, ``.to_pandas()``,
    ``.plot(path)``; ``str()`` is the report as ``swapsight report`` prints
    it, and Jupyter shows a table and the chart.
    """

    def __init__(self, data, trace):
        self._data = data
        self.trace = os.fspath(trace)
        self._text = None

    @classmethod
    def of(cls, trace):
        """The report of a trace file."""
        return cls(_run_json(["report", "--json", trace], "report"), trace)

    @property
    def verdict(self):
        return self._data.get("verdict")

    @property
    def phases(self):
        return list(self._data.get("phases", []))

    @property
    def processes(self):
        return list(self._data.get("processes", []))

    @property
    def counters(self):
        return list(self._data.get("counters", []))

    def to_dict(self):
        """The whole report, as ``swapsight report --json`` prints it."""
        return json.loads(json.dumps(self._data))

    def to_pandas(self, table="phases"):
        """``table`` (``"phases"``, ``"processes"`` or ``"counters"``) as a
        pandas DataFrame. Needs pandas (not a dependency of swapsight)."""
        if table not in ("phases", "processes", "counters"):
            raise ValueError("table is 'phases', 'processes' or 'counters', not %r" % (table,))
        try:
            import pandas
        except ImportError:
            raise Error("to_pandas() needs pandas: pip install pandas") from None
        return pandas.DataFrame(self._data.get(table, []))

    def plot(self, path, processes=None, size=None):
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
    def text(self):
        """The report as ``swapsight report`` prints it."""
        if self._text is None:
            self._text = _run(["report", self.trace], "report")
        return self._text

    def __str__(self):
        try:
            return self.text
        except Error as e:
            return "swapsight report of %s: %s" % (self.trace, e)

    def __repr__(self):
        return "<swapsight.Report %s: %s, %d phases, %d processes>" % (
            self.trace,
            self.verdict,
            len(self.phases),
            len(self.processes),
        )

    def _repr_html_(self):
        esc = lambda v: html.escape(str(v), quote=True)  # noqa: E731
        out = [
            "<div><p><b>%s</b> &mdash; %s</p>"
            % (esc(str(self.verdict).upper()), esc(self._data.get("summary", "")))
        ]
        rows = self.phases
        if rows:
            out.append(
                "<table><tr><th>phase</th><th>start s</th><th>duration s</th>"
                "<th>peak footprint</th><th>swap growth</th><th>min free %</th>"
                "<th>counters</th><th>verdict</th></tr>"
            )
            for r in rows:
                counters = "; ".join(
                    "%s peak %s %s" % (c.get("name"), c.get("peak"), c.get("unit"))
                    for c in r.get("counters", [])
                )
                out.append(
                    "<tr><td>%s</td><td>%.1f</td><td>%.1f</td><td>%s</td><td>%s</td>"
                    "<td>%.0f</td><td>%s</td><td>%s</td></tr>"
                    % (
                        esc(r.get("name")),
                        r.get("start_ms", 0) / 1000,
                        r.get("duration_ms", 0) / 1000,
                        esc(_size(r.get("peak_footprint_bytes", 0))),
                        esc(_size(r.get("swap_growth_bytes", 0))),
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
                    esc(_size(p.get("peak_footprint_bytes", 0))),
                    esc(_size(p.get("swap_growth_bytes", 0))),
                    esc(p.get("verdict")),
                )
            )
        out.append("</table>")
        chart = self._svg()
        if chart:
            out.append(chart)
        out.append("</div>")
        return "".join(out)

    def _svg(self):
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


def _size(b):
    try:
        b = float(b)
    except (TypeError, ValueError):
        return str(b)
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(b) >= div:
            return "%.1f %s" % (b / div, unit)
    return "%d B" % b
