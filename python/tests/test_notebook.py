"""The notebook magic, run for real: nbclient executes a notebook in a real
ipykernel (the test venv's, with the installed wheel) and the test reads
what the notebook shows."""

import importlib.util
import json
import os
import re

import nbformat
import pytest
import chromium
from conftest import REPO, in_ci
from nbclient import NotebookClient

from swapsight import Error
from swapsight._magic import _parse

# Kernels, 64 MiB cells and a browser: the machine's memory to this module
# alone (conftest.py's quiet_memory).
pytestmark = pytest.mark.usefixtures("quiet_memory")

#: The kernel runs this interpreter (the test venv's), where
#: python/requirements-test.txt installs MLX's CPU backend.
HAVE_MLX = importlib.util.find_spec("mlx") is not None


def cell(source, *tags):
    c = nbformat.v4.new_code_cell(source)
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def text_of(output):
    if output.get("output_type") == "stream":
        return output["text"]
    if output.get("output_type") == "error":
        return "%s: %s" % (output["ename"], output["evalue"])
    return output.get("data", {}).get("text/plain", "")


def named_cells(folder):
    """(name, source, tags...) of the cells the tests below find by name."""
    fill = str(folder / "fill.jsonl")
    return [
        ("plot", "import swapsight\nswapsight.Report.of(%r).plot()" % fill),
        ("plot-size", "swapsight.Report.of(%r).plot(size=(640, 360))" % fill),
        ("plot-path", "swapsight.Report.of(%r).plot(%r)" % (fill, str(folder / "fill.png"))),
        # Every object the magic draws with a display id is its live line,
        # first drawn then: kept, to see what that first draw said.
        (
            "spy-live-line",
            "import IPython.display as ipd\n"
            "real_display, first_draws = ipd.display, []\n"
            "def spy(*objs, **kw):\n"
            "    if kw.get('display_id'):\n"
            "        first_draws.append(repr(objs[0]))\n"
            "    return real_display(*objs, **kw)\n"
            "ipd.display = spy",
        ),
        ("live-line", "%%swapsight --interval 100ms\nimport time\ntime.sleep(0.8)"),
        ("first-draws", "ipd.display = real_display\nprint(first_draws)"),
        # A future of the kernel's own loop, made by an earlier cell: a
        # cell run on another loop could not await it.
        (
            "loop-future",
            "import asyncio\n"
            "kernel_loop = asyncio.get_running_loop()\n"
            "made_before = kernel_loop.create_future()\n"
            "kernel_loop.call_later(0.3, made_before.set_result, 'from an earlier cell')",
        ),
        (
            "await",
            "%%swapsight --interval 100ms -o " + str(folder / "await.jsonl") + "\n"
            "import swapsight\n"
            "with swapsight.phase('wait'):\n"
            "    got = await made_before\n"
            "    await asyncio.sleep(0.5)\n"
            "print(got, asyncio.get_running_loop() is kernel_loop)\n"
            "await asyncio.sleep(0) or 42",
        ),
        ("await-budget-stand-in", "m._Tail._sample = grown"),
        (
            "await-budget",
            "%%swapsight --budget 2G\n"
            "for _ in range(200):\n"
            "    await asyncio.sleep(0.05)\n"
            "print('not reached')",
            "raises-exception",
        ),
        (
            "await-budget-after",
            "m._Tail._sample = real\nawait asyncio.sleep(0.01)\nprint('the loop lives')",
        ),
    ]


def outputs_of(nb, name):
    return nb.cells[nb.named[name]].outputs


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notebook")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell("%load_ext swapsight"),
        cell(
            "%%swapsight --interval 100ms -o " + str(folder / "fill.jsonl") + "\n"
            "import time, swapsight\n"
            "with swapsight.phase('fill'):\n"
            "    data = b'\\x01' * (64 << 20)  # written: untouched pages are no footprint\n"
            "    time.sleep(2.5)\n"
            "len(data)"
        ),
        cell("%swapsight_last"),
        cell("%%swapsight --budget lots\npass", "raises-exception"),
        # No real swap here: a stand-in figure says the cell's swap grew 3 GB.
        cell(
            "import swapsight._magic as m\n"
            "real = m._Tail._sample\n"
            "def grown(self, s):\n"
            "    real(self, s)\n"
            "    self.swap_growth = 3 << 30\n"
            "m._Tail._sample = grown"
        ),
        cell(
            "%%swapsight --budget 2G\n"
            "import time\n"
            "for _ in range(200):\n"
            "    time.sleep(0.05)\n"
            "print('not reached')",
            "raises-exception",
        ),
        cell("m._Tail._sample = real\nprint('the kernel lives', 1 + 1)"),
        # --torch without torch: the watch runs for the cell, and ends with it.
        cell(
            "%%swapsight --torch --interval 100ms -o " + str(folder / "torch.jsonl") + "\n"
            "import time, swapsight._watch as w\n"
            "print('watching', sorted(kind for kind, _ in w._running))\n"
            "time.sleep(0.6)"
        ),
        cell("print('after the cell', sorted(kind for kind, _ in w._running))"),
    ]
    if HAVE_MLX:
        # --mlx: a real MLX array (the CPU backend) held, then freed.
        nb.cells.append(
            cell(
                "%%swapsight --mlx --interval 100ms -o " + str(folder / "mlx.jsonl") + "\n"
                "import time\n"
                "import mlx.core as mx\n"
                "a = mx.zeros((64 * 1024 * 1024 // 4,), dtype=mx.float32)\n"
                "mx.eval(a)\n"
                "time.sleep(1.5)\n"
                "del a\n"
                "mx.clear_cache()\n"
                "time.sleep(1.2)"
            )
        )
    # Cells found by name, not place: the MLX cell above comes and goes.
    nb.named = {}
    for name, source, *tags in named_cells(folder):
        nb.named[name] = len(nb.cells)
        nb.cells.append(cell(source, *tags))
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(nb, str(folder / "magic.ipynb"))
    nb.folder = folder
    if os.environ.get("SWAPSIGHT_PRINT_NOTEBOOK"):
        for i, c in enumerate(nb.cells):
            print("--- cell %d: %s" % (i, c.source.splitlines()[0]))
            for o in c.outputs:
                print("[%s] %s" % (o.output_type, text_of(o)))
    return nb


def test_a_recorded_cell_shows_a_live_line_then_its_report_and_value(notebook):
    outputs = notebook.cells[1].outputs
    kinds = [o.output_type for o in outputs]
    assert kinds == ["display_data", "display_data", "execute_result"], kinds
    live, report, value = outputs
    # The live line was updated in place: it shows the cell's end, not its start.
    assert live.get("metadata") is not None
    line = text_of(live)
    assert line.startswith("swapsight: ") and "footprint " in line and "swap " in line, line
    assert not line.startswith("swapsight: 0 s"), line
    peak = line.split("(peak ")[1].split(")")[0]
    assert peak.endswith("MiB") and float(peak.split()[0]) >= 64, line
    assert text_of(report).startswith("verdict: "), text_of(report)
    assert "fill" in text_of(report), text_of(report)
    html = report["data"]["text/html"]
    assert "<td>fill</td>" in html and "<svg" in html
    assert text_of(value) == str(64 << 20)


def test_swapsight_last_is_the_last_report(notebook):
    (out,) = notebook.cells[2].outputs
    assert out.output_type == "execute_result"
    assert text_of(out).startswith("verdict: ") and "fill" in text_of(out), text_of(out)
    assert "fill.jsonl" in out["data"]["text/html"] or "<svg" in out["data"]["text/html"]


def test_a_bad_option_is_one_clear_error(notebook):
    errors = [o for o in notebook.cells[3].outputs if o.output_type == "error"]
    assert [text_of(o) for o in errors] == [
        "Error: %%swapsight --budget: invalid size 'lots': "
        "expected a number with a unit, like 8G or 512M"
    ]


def test_a_budget_crossed_stops_the_cell_and_the_kernel_lives(notebook):
    outs = notebook.cells[5].outputs
    texts = [text_of(o) for o in outs]
    assert not any(line == "not reached" for t in texts for line in t.splitlines()), texts
    errors = [o for o in outs if o.output_type == "error"]
    assert len(errors) == 1, texts
    assert errors[0]["ename"] == "BudgetExceeded"
    assert errors[0]["evalue"].startswith("swap grew 3.0 GiB, past the cell's budget of 2.0 GiB (trace: ")
    assert any(t.startswith("verdict: ") for t in texts), texts
    assert text_of(notebook.cells[6].outputs[0]) == "the kernel lives 2\n"


def test_the_torch_and_mlx_flags_parse():
    opts = _parse("--torch --budget 2G --mlx")
    assert opts.torch and opts.mlx and opts.budget == 2 << 30
    opts = _parse("--interval 100ms")
    assert not opts.torch and not opts.mlx
    with pytest.raises(Error, match="--mlx takes no value"):
        _parse("--mlx=yes")
    with pytest.raises(Error, match=r"unknown option '--gpu' \(usage: .*\[--torch\] \[--mlx\]\)"):
        _parse("--gpu")


def counter_names(trace):
    with open(trace) as f:
        return {json.loads(l)["name"] for l in f if '"type":"counter"' in l}


def test_torch_flag_runs_watch_torch_for_the_cell(notebook):
    outs = notebook.cells[7].outputs
    texts = [text_of(o) for o in outs]
    assert not [o for o in outs if o.output_type == "error"], texts
    assert "watching ['torch']\n" in texts, texts
    assert any(t.startswith("verdict: ") for t in texts), texts
    # No torch in this kernel: the watch waited for one and wrote nothing.
    assert counter_names(notebook.folder / "torch.jsonl") == set()
    assert text_of(notebook.cells[8].outputs[0]) == "after the cell []\n"


def test_mlx_flag_shows_mlx_counters_in_the_cells_report(notebook):
    if not HAVE_MLX:
        if in_ci():
            pytest.fail("MLX must be tested in CI, but the test venv has no mlx")
        pytest.skip("no MLX in this venv (pip install 'mlx[cpu]'), skipped outside CI")
    outs = notebook.cells[9].outputs
    texts = [text_of(o) for o in outs]
    assert not [o for o in outs if o.output_type == "error"], texts
    report = [t for t in texts if t.startswith("verdict: ")]
    assert len(report) == 1, texts
    assert "mlx.active: peak 64 MiB, last 0 KiB" in report[0], texts
    html = [o for o in outs if "text/html" in o.get("data", {}) and "<svg" in o["data"]["text/html"]]
    assert html and "mlx.active" in html[0]["data"]["text/html"]
    assert counter_names(notebook.folder / "mlx.jsonl") == {
        "mlx.active", "mlx.cache", "mlx.peak", "mlx.held",
    }


def test_a_budget_crossed_on_real_swap_stops_a_cell_waiting_on_its_child(real_swap, tmp_path):
    # The testkit's filler writes 768 MiB in a cgroup capped at 256 MiB over a
    # swap file and would hold it 60 s: the cell, waiting in subprocess.run,
    # is stopped within seconds of the swap passing the budget.
    memfill = REPO / "crates/testkit/fixtures/memfill.py"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell("%load_ext swapsight\nimport subprocess, sys, time\nt0 = time.monotonic()"),
        cell(
            "%%swapsight --budget 128M\n"
            "subprocess.run(['sh', '-c', 'echo $$ > \"$0/cgroup.procs\" && exec \"$@\"', {!r},\n"
            "                sys.executable, {!r}, '--mb', '768', '--hold', '60'],\n"
            "               stdout=subprocess.DEVNULL)\n"
            "print('not reached')".format(real_swap["cgroup"], str(memfill)),
            "raises-exception",
        ),
        cell("print('stopped after %d s' % (time.monotonic() - t0))"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts = [text_of(o) for o in nb.cells[1].outputs]
    # The cell's own line, not the report's ("forecast: … fired …; not reached").
    assert not any(line == "not reached" for t in texts for line in t.splitlines()), texts
    errors = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert [e["ename"] for e in errors] == ["BudgetExceeded"], texts
    assert re.match(r"swap grew \d+ MiB, past the cell's budget of 128 MiB", errors[0]["evalue"]), texts
    took = int(re.search(r"stopped after (\d+) s", text_of(nb.cells[2].outputs[0])).group(1))
    assert took < 40, texts


def test_plot_with_no_path_shows_the_chart_inline(notebook):
    (out,) = outputs_of(notebook, "plot")
    assert out.output_type == "execute_result", text_of(out)
    svg = out["data"]["image/svg+xml"]
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>"), svg[:200]
    # Scaled to the output's width, never cut off by it.
    assert re.search(r'<svg[^>]*\sviewBox="0 0 1200 675"', svg), svg[:200]
    assert re.search(r'<svg[^>]*max-width:100%', svg), svg[:200]
    assert text_of(out).startswith("<swapsight.Chart of "), text_of(out)
    (sized,) = outputs_of(notebook, "plot-size")
    assert re.search(r'<svg[^>]*\swidth="640" height="360"', sized["data"]["image/svg+xml"])


def test_plot_with_a_path_still_returns_the_path(notebook):
    (out,) = outputs_of(notebook, "plot-path")
    assert text_of(out) == repr(str(notebook.folder / "fill.png"))
    assert (notebook.folder / "fill.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_live_line_is_first_drawn_at_the_first_sample(notebook):
    (out,) = outputs_of(notebook, "first-draws")
    draws = eval(text_of(out))
    assert len(draws) == 1, draws
    # The kernel's own footprint: never 0 once a sample has measured it.
    footprint = draws[0].split("footprint ")[1].split(" (")[0]
    assert footprint != "0 KiB", draws
    assert not [o for o in outputs_of(notebook, "live-line") if o.output_type == "error"]


def test_a_cell_with_top_level_await_runs_on_the_kernels_loop(notebook):
    outs = outputs_of(notebook, "await")
    texts = [text_of(o) for o in outs]
    assert not [o for o in outs if o.output_type == "error"], texts
    assert "from an earlier cell True\n" in texts, texts
    report = [t for t in texts if t.startswith("verdict: ")]
    assert len(report) == 1 and "wait" in report[0], texts
    assert outs[-1].output_type == "execute_result" and text_of(outs[-1]) == "42", texts


def test_a_budget_crossed_stops_a_cell_at_its_await(notebook):
    outs = outputs_of(notebook, "await-budget")
    texts = [text_of(o) for o in outs]
    assert not any(line == "not reached" for t in texts for line in t.splitlines()), texts
    errors = [o for o in outs if o.output_type == "error"]
    assert [e["ename"] for e in errors] == ["BudgetExceeded"], texts
    assert errors[0]["evalue"].startswith("swap grew 3.0 GiB, past the cell's budget of 2.0 GiB"), texts
    assert any(t.startswith("verdict: ") for t in texts), texts
    assert [text_of(o) for o in outputs_of(notebook, "await-budget-after")] == ["the loop lives\n"]


def report_html(notebook):
    """The HTML the kernel sent for the first recorded cell's report."""
    (html,) = [
        o["data"]["text/html"]
        for o in notebook.cells[1].outputs
        if "swapsight-report" in o.get("data", {}).get("text/html", "")
    ]
    return html


def test_the_reports_chart_fits_a_1000_px_page(notebook):
    box = chromium.layout(report_html(notebook), width=1000)
    out, svg = box["out"], box["svg"]
    assert box["viewport"] == 1000, box
    assert svg is not None, box
    # All of the chart inside the output area, scaled, not cropped: its
    # height follows its width as its viewBox says.
    assert out["left"] <= svg["left"] and svg["right"] <= out["right"] + 0.5, box
    want = svg["width"] * box["svgBox"][1] / box["svgBox"][0]
    assert abs(svg["height"] - want) < 2, box
    assert box["scrollWidth"] <= 1000, box
    assert all(t["right"] <= out["right"] + 0.5 for t in box["tables"]), box
    assert box["numbers"] and set(box["numbers"]) == {"right"}, box


def test_the_reports_tables_take_the_themes_colours(notebook):
    # JupyterLab's dark theme: light text on a dark page, and its variables.
    dark = (
        "body{background:rgb(17,17,17);color:rgb(210,210,210);"
        "--jp-border-color1:rgb(97,97,97);--jp-border-color2:rgb(66,66,66)}"
    )
    box = chromium.layout(report_html(notebook), width=1000, style=dark)
    colours = box["colours"]
    assert colours, box
    for c in colours:
        # The page's text colour, but for a verdict's own (JupyterLab's
        # success and error colours).
        if not {"good", "bad"} & set(c["class"].split()):
            assert c["color"] == "rgb(210, 210, 210)", c
        # No background of its own: none, or a faint stripe over the page's.
        assert c["background"].startswith("rgba("), c
    assert {c["border"] for c in colours if c["tag"] == "TD"} == {"rgb(66, 66, 66)"}, colours
