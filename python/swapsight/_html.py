"""A report as Jupyter's HTML: its tables and its chart, sized to the
output area and readable in JupyterLab's light and dark themes."""

import html
import re
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

from ._tables import format_bytes, format_figure

# Scoped to the report's own class so that it styles nothing else in the
# notebook. Colours come from the page (inherit, currentColor) or
# JupyterLab's variables, whose fallbacks read on white and on black alike:
# no background of its own, so a dark theme stays dark.
_CSS = """\
.swapsight-report{color:inherit;max-width:100%;overflow-x:auto}
.swapsight-report p{margin:0.4em 0}
.swapsight-report table{border-collapse:collapse;margin:0.5em 0 0.8em;color:inherit;\
background:transparent;font-size:var(--jp-content-font-size1,0.9em);table-layout:auto}
.swapsight-report caption{text-align:left;font-weight:600;padding:0 0 0.2em}
.swapsight-report th,.swapsight-report td{padding:0.2em 0.7em;text-align:left;\
vertical-align:top;border:0;border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.3))}
.swapsight-report th{font-weight:600;white-space:nowrap;\
border-bottom:1px solid var(--jp-border-color1,rgba(128,128,128,0.6))}
.swapsight-report tbody tr:nth-child(odd){\
background:var(--jp-rendermime-table-row-background,rgba(128,128,128,0.07))}
.swapsight-report .num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.swapsight-report .unsampled{opacity:0.75;font-style:italic}
.swapsight-report .bad{color:var(--jp-error-color1,#d9534f);font-weight:600}
.swapsight-report .good{color:var(--jp-success-color1,#3c9a5f);font-weight:600}
.swapsight-report svg{display:block;max-width:100%;height:auto}
"""

#: The inline style every chart gets: it holds where a sanitizer drops the
#: <style> block (an untrusted notebook) but keeps attributes.
_FIT = "max-width:100%;height:auto"

_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.S)


def fit_svg(svg: str) -> str:
    """``svg`` scaled to its container rather than cut off by it: a
    ``viewBox`` from its width and height when it has none (without one a
    narrower box crops the drawing instead of scaling it), and a
    ``max-width`` of its container's width."""
    tag = _SVG_TAG.search(svg)
    if tag is None:
        return svg
    opening = tag.group(0)
    new = opening
    if not re.search(r"\sviewBox\s*=", opening):
        w = re.search(r'\swidth\s*=\s*["\']\s*([\d.]+)(?:px)?\s*["\']', opening)
        h = re.search(r'\sheight\s*=\s*["\']\s*([\d.]+)(?:px)?\s*["\']', opening)
        if w and h:
            new = new[:4] + ' viewBox="0 0 %s %s"' % (w.group(1), h.group(1)) + new[4:]
    style = re.search(r'\sstyle\s*=\s*"([^"]*)"', new)
    if style:
        joined = style.group(1).rstrip().rstrip(";")
        joined = (joined + ";" if joined else "") + _FIT
        new = new[: style.start(1)] + joined + new[style.end(1):]
    else:
        new = new[:4] + ' style="%s"' % _FIT + new[4:]
    return svg[: tag.start()] + new + svg[tag.end():]


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _counters(counters: Iterable[Mapping[str, Any]]) -> str:
    return "; ".join(
        "%s peak %s, last %s"
        % (
            c.get("name"),
            format_figure(c.get("peak"), c.get("unit")),
            format_figure(c.get("last"), c.get("unit")),
        )
        for c in counters
    )


def _verdict(verdict: Any) -> str:
    if verdict is None:
        return "<td></td>"
    return '<td class="%s">%s</td>' % ("good" if verdict == "fits" else "bad", _esc(verdict))


#: A cell: its text (escaped here) and whether it is a number.
Cell = Tuple[str, bool]


def _table(caption: str, heads: Sequence[Cell], rows: Iterable[str]) -> str:
    head = "".join('<th%s>%s</th>' % (' class="num"' if num else "", _esc(h)) for h, num in heads)
    return "<table><caption>%s</caption><thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (
        _esc(caption),
        head,
        "".join(rows),
    )


def _cells(cells: Sequence[Cell]) -> str:
    return "".join('<td%s>%s</td>' % (' class="num"' if num else "", _esc(v)) for v, num in cells)


def _phase_row(r: Mapping[str, Any]) -> str:
    timing = _cells(
        [
            (str(r.get("name")), False),
            ("%.1f" % (r.get("start_ms", 0) / 1000), True),
            ("%.1f" % (r.get("duration_ms", 0) / 1000), True),
        ]
    )
    counters = _cells([(_counters(r.get("counters", [])), False)])
    # A phase between two samples has no figures of its own: the ones the
    # JSON still gives are its neighbours', and "fits" would be a guess.
    # Its counters come from its own marks, so they stay.
    if r.get("samples", 1) == 0:
        why = "no sample fell inside this phase: it was shorter than the recording's interval"
        return (
            '<tr>%s<td colspan="3" class="unsampled" title="%s">not sampled</td>%s'
            '<td class="unsampled" title="%s">not judged</td></tr>' % (timing, _esc(why), counters, _esc(why))
        )
    figures = _cells(
        [
            (format_bytes(r.get("peak_footprint_bytes", 0)), True),
            (format_bytes(r.get("swap_growth_bytes", 0)), True),
            ("%.0f" % r.get("min_free_pct", 0), True),
        ]
    )
    return "<tr>%s%s%s%s</tr>" % (timing, figures, counters, _verdict(r.get("verdict")))


def _process_row(p: Mapping[str, Any]) -> str:
    name = str(p.get("name"))
    if p.get("watched"):
        name += " [watched]"
    cells = _cells(
        [
            (name, False),
            (str(p.get("pid")), True),
            (format_bytes(p.get("peak_footprint_bytes", 0)), True),
            (format_bytes(p.get("swap_growth_bytes", 0)), True),
        ]
    )
    return "<tr>%s%s</tr>" % (cells, _verdict(p.get("verdict")))


def report_html(data: Dict[str, Any], chart: str) -> str:
    """The report ``data`` (``swapsight report --json``) as HTML, with
    ``chart`` (an SVG, or "") below its tables."""
    verdict = str(data.get("verdict"))
    out: List[str] = [
        '<div class="swapsight-report"><style>%s</style>' % _CSS,
        '<p><b class="%s">%s</b> &mdash; %s</p>'
        % ("good" if verdict == "fits" else "bad", _esc(verdict.upper()), _esc(data.get("summary", ""))),
    ]
    if data.get("counters"):
        out.append("<p>counters: %s</p>" % _esc(_counters(data["counters"])))
    phases = data.get("phases") or []
    if phases:
        heads = [("phase", False), ("start s", True), ("duration s", True), ("peak footprint", True),
                 ("swap growth", True), ("min free %", True), ("counters", False), ("verdict", False)]
        out.append(_table("by phase", heads, (_phase_row(r) for r in phases)))
    heads = [("process", False), ("pid", True), ("peak footprint", True), ("swap growth", True),
             ("verdict", False)]
    out.append(_table("processes", heads, (_process_row(p) for p in data.get("processes") or [])))
    if chart:
        out.append(fit_svg(chart))
    out.append("</div>")
    return "".join(out)
