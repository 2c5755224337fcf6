"""swapsight.record() from inside a Python program, with real recordings by
the installed CLI: the report, the phases routed to it, exceptions, a
recorder killed mid-run, a folder it cannot write; compare() and advise()
as the CLI's JSON."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import swapsight
from conftest import installed_binary


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not running: ask ps.
    state = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True
    ).stdout.strip()
    return bool(state) and not state.startswith("Z")


def test_a_recording_from_inside_reports_its_phases(tmp_path):
    path = tmp_path / "run.jsonl"
    assert "SWAPSIGHT_MARK" not in os.environ
    with swapsight.record(path, interval="100ms") as rec:
        assert rec.recorder_pid and alive(rec.recorder_pid)
        assert os.environ.get("SWAPSIGHT_MARK"), "phases route to this recording"
        for name in ("load", "fill", "save"):
            with swapsight.phase(name):
                swapsight.counter("pool", 1 << 20)
                time.sleep(0.4)
        pid = rec.recorder_pid
    assert not alive(pid), "the recorder is not left running"
    assert "SWAPSIGHT_MARK" not in os.environ, "the environment is as it was"
    assert rec.error is None, rec.error
    report = rec.report
    assert report.verdict in ("fits", "overflow", "false-fit", "hidden-memory")
    assert [p["name"] for p in report.phases] == ["load", "fill", "save"]
    assert [c["name"] for c in report.counters] == ["pool"]
    assert any(p["pid"] == os.getpid() for p in report.processes), report.processes
    # The same data as the CLI's JSON.
    cli = json.loads(
        subprocess.run(
            [installed_binary(), "report", "--json", str(path)],
            capture_output=True, text=True, check=True,
        ).stdout
    )
    assert report.to_dict() == cli
    assert str(report).startswith("verdict: ")
    assert "<table>" in report._repr_html_() and "<svg" in report._repr_html_()
    chart = report.plot(str(tmp_path / "run.png"))
    assert open(chart, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    # The trace ends as a Ctrl-C'd recording does.
    lines = [json.loads(l) for l in path.read_text().splitlines()]
    assert "recording-stop" in [l.get("kind") for l in lines]
    # This process is watched; its child the recorder does not watch itself.
    watched = [l.get("watched", []) for l in lines if l["type"] == "sample"]
    assert all(os.getpid() in w for w in watched), watched
    assert not any(pid in w for w in watched), watched


def test_an_exception_in_the_block_propagates_and_the_trace_is_finished(tmp_path):
    path = tmp_path / "run.jsonl"
    with pytest.raises(ZeroDivisionError):
        with swapsight.record(path, interval="100ms") as rec:
            with swapsight.phase("doomed"):
                time.sleep(0.3)
                1 / 0
    assert rec.recorder_pid is None
    assert rec.report is not None and [p["name"] for p in rec.report.phases] == ["doomed"]


def test_start_and_stop_by_hand_and_a_second_stop_is_harmless(tmp_path):
    rec = swapsight.record(tmp_path / "run.jsonl", interval="100ms")
    assert rec.start() is rec
    with pytest.raises(swapsight.Error):
        rec.start()
    time.sleep(0.3)
    first = rec.stop()
    assert first is not None and rec.stop() is first


def test_a_folder_it_cannot_write_is_a_clear_error_at_start(tmp_path):
    with pytest.raises(swapsight.Error) as e:
        swapsight.record(tmp_path / "missing" / "run.jsonl").start()
    assert "does not exist" in str(e.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(swapsight.Error) as e:
        swapsight.record(tmp_path / "file" / "run.jsonl").start()
    assert "does not exist" in str(e.value)
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(swapsight.Error) as e:
            swapsight.record(ro / "run.jsonl").start()
        assert "not writable" in str(e.value)
    # The CLI's own refusal is the message too: a trace path that is a folder.
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(swapsight.Error) as e:
        swapsight.record(tmp_path / "dir.jsonl").start()
    assert str(e.value).startswith("swapsight: "), e.value
    assert "\n" not in str(e.value)
    assert "SWAPSIGHT_MARK" not in os.environ


def test_a_recorder_killed_mid_run_neither_hangs_nor_crashes_the_script(tmp_path, caplog):
    rec = swapsight.record(tmp_path / "run.jsonl", interval="100ms").start()
    time.sleep(0.5)
    os.kill(rec.recorder_pid, signal.SIGKILL)
    with swapsight.phase("after"):  # a mark path nobody reads: no error
        time.sleep(0.2)
    started = time.monotonic()
    rec.stop()
    assert time.monotonic() - started < 10
    assert "killed by SIGKILL" in rec.error, rec.error
    assert any("killed by SIGKILL" in r.getMessage() for r in caplog.records)
    # What was recorded before the kill is still reported.
    assert rec.report is not None and rec.report.verdict


def test_the_recorder_does_not_outlive_a_program_that_forgets_stop(tmp_path):
    script = tmp_path / "forget.py"
    script.write_text(
        "import sys, time, swapsight\n"
        "rec = swapsight.record(sys.argv[1], interval='100ms').start()\n"
        "print(rec.recorder_pid, flush=True)\n"
        "time.sleep(0.3)\n"
        "if sys.argv[2] == 'kill':\n"
        "    import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    for how in ("exit", "kill"):
        trace = tmp_path / ("%s.jsonl" % how)
        done = subprocess.run(
            [sys.executable, str(script), str(trace), how],
            capture_output=True, text=True, timeout=60,
        )
        pid = int(done.stdout.split()[0])
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), how
        assert "sample" in trace.read_text()


def test_without_pandas_to_pandas_says_so(tmp_path, monkeypatch):
    with swapsight.record(tmp_path / "run.jsonl", interval="100ms") as rec:
        time.sleep(0.3)
    # The test venv has pandas (docs/exports.md's example): a user's has not.
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(swapsight.Error) as e:
        rec.report.to_pandas()
    assert "pip install pandas" in str(e.value)
    with pytest.raises(ValueError):
        rec.report.to_pandas("nope")
    monkeypatch.delitem(sys.modules, "pandas")
    phases = rec.report.to_pandas("processes")
    assert type(phases).__name__ == "DataFrame" and "peak_footprint_bytes" in phases.columns


def test_html_escapes_what_came_from_outside(tmp_path):
    report = swapsight.Report(
        {
            "verdict": "fits",
            "summary": "<script>alert(1)</script>",
            "phases": [{"name": "<b>x</b>", "counters": [{"name": "<i>", "peak": 1, "unit": "bytes"}]}],
            "processes": [{"name": "a&b", "pid": 1}],
        },
        tmp_path / "none.jsonl",
    )
    page = report._repr_html_()
    assert "<script>" not in page and "<b>x</b>" not in page and "<i>" not in page
    assert "&lt;script&gt;" in page and "a&amp;b" in page


def test_compare_and_advise_return_the_clis_json(tmp_path):
    runs = []
    for name in ("a", "b"):
        with swapsight.record(tmp_path / ("%s.jsonl" % name), interval="100ms") as rec:
            time.sleep(0.3)
        runs.append(rec.path)
    got = swapsight.compare(runs, labels=["first", "second"])
    cli = json.loads(
        subprocess.run(
            [installed_binary(), "compare", *runs, "--label", "first", "--label", "second",
             "--format", "json"],
            capture_output=True, text=True, check=True,
        ).stdout
    )
    assert got == cli
    assert "first" in json.dumps(got)
    advice = swapsight.advise(runs[0], recommended_max="8G")
    assert isinstance(advice, dict) and advice
    with pytest.raises(swapsight.Error) as e:
        swapsight.compare([tmp_path / "missing.jsonl", runs[0]])
    assert "missing.jsonl" in str(e.value)


def test_record_with_torch_writes_the_allocators_figures(tmp_path, monkeypatch):
    import types

    mps = types.SimpleNamespace(
        current_allocated_memory=lambda: 1 << 30,
        driver_allocated_memory=lambda: 3 << 30,
        recommended_max_memory=lambda: 40 << 30,
    )
    torch = types.ModuleType("torch")
    torch.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: True))
    torch.mps = mps
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", torch)
    with swapsight.record(tmp_path / "run.jsonl", interval="100ms", torch=True) as rec:
        time.sleep(0.8)
    import swapsight._watch as w

    assert w._running == {}, "the watch stops with the recording"
    peaks = {x["name"]: x["peak"] for x in rec.report.counters}
    assert peaks["torch.mps.driver_allocated"] == 3 << 30, peaks
    assert peaks["torch.mps.recommended_max"] == 40 << 30, peaks


def test_overlapping_recordings_give_the_marks_back_only_to_a_running_one(tmp_path):
    """$SWAPSIGHT_MARK is process-wide, so recordings started by nested
    blocks or by different threads overlap in any order: a stop() hands the
    marks to the newest recording still running, never to a stopped one, and
    leaves them alone when they are no longer its own."""
    outer = swapsight.record(tmp_path / "outer.jsonl", interval="100ms").start()
    outer_mark = os.environ["SWAPSIGHT_MARK"]
    inner = swapsight.record(tmp_path / "inner.jsonl", interval="100ms").start()
    inner_mark = os.environ["SWAPSIGHT_MARK"]
    assert inner_mark != outer_mark
    with swapsight.phase("inner-work"):
        time.sleep(0.4)
    inner.stop()
    assert os.environ.get("SWAPSIGHT_MARK") == outer_mark
    with swapsight.phase("after-inner"):
        time.sleep(0.4)
    # Another thread's recording, started later and stopped after this one.
    other = swapsight.record(tmp_path / "other.jsonl", interval="100ms").start()
    other_mark = os.environ["SWAPSIGHT_MARK"]
    outer.stop()
    assert os.environ.get("SWAPSIGHT_MARK") == other_mark, "the running one keeps its marks"
    with swapsight.phase("other-work"):
        time.sleep(0.4)
    other.stop()
    assert "SWAPSIGHT_MARK" not in os.environ, "never a stopped recording's mark path"
    for rec in (outer, inner, other):
        assert rec.error is None, rec.error
    assert [p["name"] for p in inner.report.phases] == ["inner-work"]
    assert "after-inner" in [p["name"] for p in outer.report.phases]
    assert [p["name"] for p in other.report.phases] == ["other-work"]


FORK = r"""
import json, os, sys, time
import swapsight

rec = swapsight.record(sys.argv[1], interval="100ms").start()
mark = os.environ["SWAPSIGHT_MARK"]
with swapsight.phase("before"):
    time.sleep(0.4)
child = os.fork()
if child == 0:
    # What the child's with-block exit or atexit would do: stop() of the
    # recording its parent started.
    report = rec.stop()
    print(json.dumps({"report": report is not None, "error": rec.error,
                      "mark": os.environ.get("SWAPSIGHT_MARK") == mark}), flush=True)
    sys.exit(0)  # atexit runs stop() once more
os.waitpid(child, 0)
with swapsight.phase("after-fork"):
    time.sleep(0.4)
rec.stop()
print(json.dumps({"report": [p["name"] for p in rec.report.phases], "error": rec.error}))
"""


def test_a_forked_child_leaves_its_parents_recording_alone(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(FORK)
    env = dict(os.environ)
    env.pop("SWAPSIGHT_MARK", None)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "run.jsonl")],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr
    child, parent = [json.loads(l) for l in done.stdout.splitlines()]
    assert child == {"report": False, "error": None, "mark": True}
    assert parent == {"report": ["before", "after-fork"], "error": None}
    assert "swapsight:" not in done.stderr, done.stderr
