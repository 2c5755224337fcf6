"""Chart: a run's chart in memory, as ``Report.plot()`` with no path
returns it; Jupyter and IPython show it inline as an image."""

import os
import tempfile
from typing import List

from ._cli import _run
from ._html import fit_svg


class Chart:
    """A run's chart, as ``swapsight plot`` draws it: ``.svg`` is its SVG
    text, and Jupyter shows it inline (as it shows a matplotlib figure),
    scaled to the output's width."""

    def __init__(self, svg: str, trace: str) -> None:
        self.svg = svg
        self.trace = trace

    def _repr_svg_(self) -> str:
        return fit_svg(self.svg)

    def __repr__(self) -> str:
        return "<swapsight.Chart of %s (SVG): Jupyter shows it inline; Report.plot(path) writes a file>" % (
            self.trace,
        )


def draw_svg(args: List[str]) -> str:
    """The SVG that ``swapsight plot`` draws with ``args`` (its trace and
    options); raises :class:`Error` as ``plot`` does."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.svg")
        _run(["plot"] + args + ["-o", path], "plot")
        with open(path, encoding="utf-8") as f:
            svg = f.read()
    # swapsight's SVG starts at its <svg> tag; anything before it (an XML
    # declaration) is not allowed inside HTML.
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
