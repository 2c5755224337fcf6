"""HTML laid out by a real browser: headless Chromium (or Google Chrome)
renders a page and reports where its elements landed, or screenshots it.
The browser is found as the Rust tests find theirs
(crates/testkit/src/browser.rs): $CHROMIUM, else the first real one of
BROWSERS (Ubuntu's snap stubs are no browser)."""

import html
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import in_ci

BROWSERS = [
    "/usr/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/chromium-browser",
]


def _snap_stub(path):
    with open(path, "rb") as f:
        head = f.read(64 * 1024)
    return head.startswith(b"#!") and b"snap" in head


def browser():
    """The browser's path. Outside CI a machine without one skips the
    test; under CI=true (scripts/setup installs Debian's chromium) it fails."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for path in BROWSERS:
        if os.path.isfile(path) and not _snap_stub(path):
            return path
    why = "no Chromium or Google Chrome at %s (or set CHROMIUM)" % ", ".join(BROWSERS)
    if in_ci():
        pytest.fail("the browser tests must run in CI, but: " + why)
    pytest.skip("browser test skipped outside CI: " + why)


#: The page a fragment is shown in: a notebook's output area, whose left
#: edge is the prompt column's width in from the page's.
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>swapsight</title>
<style>body{margin:0;font-family:sans-serif;font-size:14px}
#out{margin:8px 16px 8px 80px}%s</style></head>
<body><div id="out">%s</div>%s</body></html>"""

# Written into the page itself, so that --dump-dom carries the layout out:
# every box is measured after the fragment above it has been laid out.
MEASURE = """<script>
const box = e => { const r = e.getBoundingClientRect();
  return {left: r.left, right: r.right, width: r.width, height: r.height}; };
const out = document.getElementById("out");
const svg = out.querySelector("svg");
const layout = {
  viewport: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  out: box(out),
  svg: svg ? box(svg) : null,
  svgBox: svg && svg.viewBox.baseVal ? [svg.viewBox.baseVal.width, svg.viewBox.baseVal.height] : null,
  tables: [...out.querySelectorAll("table")].map(box),
  numbers: [...out.querySelectorAll("td.num")].map(e => getComputedStyle(e).textAlign),
  colours: [...out.querySelectorAll("th, td")].map(e => { const s = getComputedStyle(e);
    return {tag: e.tagName, class: e.className, color: s.color,
            background: s.backgroundColor, border: s.borderBottomColor}; }),
};
const pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify(layout);
document.body.appendChild(pre);
</script>"""


def _run(args, page, width, height):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "page.html"
        path.write_text(page, encoding="utf-8")
        # Its own profile: the web UI tests' browsers may run beside it.
        cmd = [
            browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--user-data-dir=" + str(Path(d) / "profile"),
            "--window-size=%d,%d" % (width, height),
        ] + args + [path.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, "%s failed: %s" % (cmd[0], done.stderr[-2000:])
        return done.stdout


def layout(fragment, width=1000, height=1400, style=""):
    """Where ``fragment`` (HTML) lands in a page ``width`` px wide (with
    ``style``, CSS, added to the page's): the boxes of its output area, its
    first svg and its tables, and its cells' colours, as a dict."""
    dom = _run(["--dump-dom"], PAGE % (style, fragment, MEASURE), width, height)
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.S)
    assert found, "the page's script wrote no layout:\n" + dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def screenshot(fragment, png, width=1000, height=1400):
    """``fragment`` in a page ``width`` px wide, saved as ``png``."""
    _run(["--screenshot=" + str(png)], PAGE % ("", fragment, ""), width, height)
