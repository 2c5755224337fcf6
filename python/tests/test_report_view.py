"""How a Report shows its figures: bytes as the command line writes them,
other units with their unit, and tables with nothing nested."""

import re
import sys
import time
import types

import pytest

import swapsight
from swapsight._tables import format_bytes, format_figure


@pytest.mark.parametrize(
    "value, text",
    [
        (314572800, "300 MiB"),
        (314572800.0, "300 MiB"),
        (1 << 30, "1.0 GiB"),
        (int(1.25 * (1 << 30)), "1.2 GiB"),
        (-(5 << 20), "-5 MiB"),
        (1536, "2 KiB"),
        (0, "0 KiB"),
        ("n/a", "n/a"),
    ],
)
def test_bytes_read_as_the_cli_writes_them(value, text):
    assert format_bytes(value) == text


def test_other_units_are_numbers_with_their_unit():
    assert format_figure(3.0, "items") == "3 items"
    assert format_figure(0.25, "s") == "0.25 s"
    assert format_figure(314572800.0, "bytes") == "300 MiB"


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """A real recording with a phase, a byte counter and an item counter,
    each written once."""
    trace = tmp_path_factory.mktemp("counted") / "run.jsonl"
    with swapsight.record(trace, interval="100ms") as rec:
        with swapsight.phase("load"):
            swapsight.counter("weights", 300 << 20)
            swapsight.counter("queue", 3, unit="items")
            time.sleep(0.6)
        time.sleep(0.3)
    assert rec.report is not None, rec.error
    return rec.report


def test_html_counters_read_as_the_text_report(counted):
    assert "weights: peak 300 MiB, last 300 MiB" in counted.text
    html = counted._repr_html_()
    assert "weights peak 300 MiB, last 300 MiB" in html, html
    assert "queue peak 3 items, last 3 items" in html, html
    assert "314572800" not in html


def test_to_pandas_columns_are_plain(counted, monkeypatch):
    # A stand-in pandas: what matters is the rows it is given.
    fake = types.ModuleType("pandas")
    fake.DataFrame = lambda rows: rows
    monkeypatch.setitem(sys.modules, "pandas", fake)
    for table in ("phases", "processes", "counters"):
        rows = counted.to_pandas(table)
        assert rows, table
        for row in rows:
            for key, value in row.items():
                assert not isinstance(value, (dict, list)), (table, key, value)
    load = [r for r in counted.to_pandas("phases") if r["name"] == "load"][0]
    if any(p.get("pressure") for p in counted.phases):  # None without PSI
        assert "pressure" not in load
        assert load["pressure_peak"] in ("normal", "warning", "critical"), load
    assert load["counter_peak:weights:bytes"] == 300 << 20
    assert load["counter_last:queue:items"] == 3
    assert {"name", "unit", "peak", "last"} <= set(counted.to_pandas("counters")[0])


def phase_rows(html):
    return [row for row in re.findall(r"<tr>(.*?)</tr>", html) if "<td" in row]


def test_a_phase_no_sample_fell_in_says_so_in_the_html(tmp_path):
    # As `swapsight report --json` gives them: the short phase has the
    # figures of its neighbouring samples and a verdict, but no sample.
    phase = {"start_ms": 146, "peak_footprint_bytes": 212 << 20, "swap_growth_bytes": 0,
             "min_free_pct": 96.0, "verdict": "fits"}
    data = {
        "verdict": "fits",
        "summary": "fits",
        "phases": [
            dict(phase, name="quick", duration_ms=0, samples=0),
            dict(phase, name="long", duration_ms=1471, samples=3),
        ],
        "processes": [],
    }
    quick, long = phase_rows(swapsight.Report(data, tmp_path / "none.jsonl")._repr_html_())
    assert "not sampled" in quick and "not judged" in quick, quick
    assert "212 MiB" not in quick and "fits" not in quick, quick
    assert "212 MiB" in long and "fits" in long and "not sampled" not in long, long


@pytest.mark.parametrize("verdict", ["fits", "hidden-memory", "overflow", "false-fit"])
def test_a_verdict_is_one_of_the_four(tmp_path, verdict):
    # Typed as a Literal of these: what the Rust State serializes to.
    assert swapsight.Report({"verdict": verdict}, tmp_path / "t.jsonl").verdict == verdict


@pytest.mark.parametrize("data", [{}, {"verdict": "FITS"}, {"verdict": None}])
def test_a_report_without_a_known_verdict_says_so(tmp_path, data):
    report = swapsight.Report(data, tmp_path / "t.jsonl")
    with pytest.raises(swapsight.Error) as e:
        report.verdict
    assert str(e.value) == "the report of %s has no verdict swapsight knows: %r" % (
        tmp_path / "t.jsonl",
        data.get("verdict"),
    )
    assert repr(report).endswith(": %s, 0 phases, 0 processes>" % data.get("verdict"))


def test_the_repr_counts_one_phase_and_one_process_in_the_singular(tmp_path):
    report = swapsight.Report(
        {"verdict": "fits", "phases": [{"name": "load"}], "processes": [{"name": "python"}]},
        tmp_path / "t.jsonl",
    )
    assert repr(report) == "<swapsight.Report %s: fits, 1 phase, 1 process>" % (tmp_path / "t.jsonl")


def test_a_fit_answer_with_an_unknown_verdict_is_an_error():
    from swapsight._fit import FIT_VERDICTS

    assert FIT_VERDICTS == ("fits", "fits-only-by-swapping", "does-not-fit")
    with pytest.raises(swapsight.Error, match="cannot read"):
        swapsight.FitAnswer.from_json(
            {"verdict": "fits only by swapping", "exit_code": 1, "model_bytes": 1,
             "needed_bytes": 1, "summary": "", "bounds": [], "skipped": [],
             "settings": [], "notes": []}
        )
