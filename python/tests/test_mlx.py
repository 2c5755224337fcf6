"""watch_mlx() and record(mlx=True): MLX's memory figures as counters.

Against real MLX (mlx + mlx-cpu from python/requirements-test.txt, its CPU
backend on Linux): arrays allocated and freed under a real recording, read
back from the trace and the package's report. Against a stand-in module
for what this machine cannot show: the older ``mx.metal`` names, Metal's
device_info, an MLX that raises. Without MLX the real tests are skipped
outside CI and fail under CI=true."""

import json
import logging
import os
import subprocess
import sys
import threading
import time
import types
import warnings

import pytest

import swapsight
from conftest import counters_in, pinned_import, wait_for

MIB = 1 << 20


def real_mlx():
    """mlx.core, the real one (conftest.py's pinned_import)."""
    return pinned_import("mlx.core", "mlx and mlx-cpu", "'mlx[cpu]'")


@pytest.fixture(autouse=True)
def no_watch_outlives_its_test():
    yield
    import swapsight._watch as w

    for watch in list(w._running.values()):
        watch.stop()


class FakeMx:
    """mlx.core as MLX documents it: the top-level memory functions (MLX
    0.24.1 and later) or only the older ``mx.metal`` ones, each of which
    warns; ``device_info()`` as on Metal. reset_peak_memory() must never be
    called."""

    def __init__(self, top_level=True, device_info=None, broken=False):
        self.top_level = top_level
        self.calls = []
        self.active = 1 << 30
        self.cache = 256 * MIB
        self.info = (
            {
                "architecture": "applegpu_g15s",
                "device_name": "Apple M3 Max",
                "memory_size": 48 << 30,
                "max_recommended_working_set_size": 38 << 30,
                "resource_limit": 499000,
                "max_buffer_length": 24 << 30,
            }
            if device_info is None
            else device_info
        )
        self.broken = broken

    def module(self):
        mx = types.ModuleType("mlx.core")
        metal = types.ModuleType("mlx.core.metal")

        def figure(name, value):
            def get():
                self.calls.append(name)
                if self.broken:
                    raise RuntimeError("[metal::malloc] the device is gone")
                return value()

            return get

        def deprecated(name, fn):
            def call():
                warnings.warn("mx.metal.%s is deprecated" % name, DeprecationWarning)
                return fn()

            return call

        def reset_peak_memory():
            self.calls.append("reset_peak_memory")
            raise AssertionError("the watch reset the program's peak")

        def device_info():
            self.calls.append("device_info")
            if isinstance(self.info, Exception):
                raise self.info
            return dict(self.info)

        functions = {
            "get_active_memory": figure("get_active_memory", lambda: self.active),
            "get_cache_memory": figure("get_cache_memory", lambda: self.cache),
            "get_peak_memory": figure("get_peak_memory", lambda: 2 << 30),
            "reset_peak_memory": reset_peak_memory,
            "device_info": device_info,
        }
        for name, fn in functions.items():
            setattr(metal, name, deprecated(name, fn))
            if self.top_level:
                setattr(mx, name, fn)
        mx.metal = metal
        return mx


def fake_mlx(monkeypatch, **kw):
    fake = FakeMx(**kw)
    monkeypatch.setitem(sys.modules, "mlx.core", fake.module())
    return fake


def test_watch_mlx_samples_the_four_figures_and_the_device_once(mark_file, monkeypatch):
    fake = fake_mlx(monkeypatch)
    with swapsight.watch_mlx(interval=0.1) as w:
        assert w.running and w._thread.daemon
        assert w._thread.name == "swapsight-watch-mlx"
        assert swapsight.watch_mlx() is w, "one MLX watch at a time"
        assert isinstance(w, swapsight.MlxWatch)
        assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 3 + 3 * 4)
        fake.active += 64 * MIB
        fake.cache = 0
        n = len(counters_in(mark_file.read_lines()))
        assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= n + 8)
    assert not w.running
    seen = counters_in(mark_file.read_lines())
    names = [n for n, _, _ in seen]
    assert names[:3] == ["mlx.memory_size", "mlx.max_recommended_working_set_size", "mlx.resource_limit"]
    assert names[3:7] == ["mlx.active", "mlx.cache", "mlx.peak", "mlx.held"]
    assert fake.calls.count("device_info") == 1, "device_info once per watch"
    assert "reset_peak_memory" not in fake.calls
    units = {n: u for n, _, u in seen}
    assert units["mlx.resource_limit"] == "buffers"
    assert all(u == "bytes" for n, u in units.items() if n != "mlx.resource_limit")
    first = dict((n, v) for n, v, _ in seen[:7])
    assert first["mlx.memory_size"] == 48 << 30
    assert first["mlx.max_recommended_working_set_size"] == 38 << 30
    assert first["mlx.resource_limit"] == 499000
    assert first["mlx.held"] == (1 << 30) + 256 * MIB == first["mlx.active"] + first["mlx.cache"]
    last = dict((n, v) for n, v, _ in seen)
    assert last["mlx.active"] == (1 << 30) + 64 * MIB and last["mlx.cache"] == 0
    assert last["mlx.held"] == last["mlx.active"]
    assert "mlx.max_buffer_length" not in names and "mlx.device_name" not in names
    count = len(seen)
    time.sleep(0.3)
    assert len(counters_in(mark_file.read_lines())) == count, "nothing after stop()"


def test_device_info_gives_only_the_numbers_it_has(mark_file, monkeypatch):
    fake_mlx(
        monkeypatch,
        device_info={"memory_size": "48 GB", "resource_limit": True, "max_recommended_working_set_size": 7},
    )
    w = swapsight.watch_mlx(interval=0.1)
    assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 5)
    w.stop()
    names = [n for n, _, _ in counters_in(mark_file.read_lines())]
    assert names[0] == "mlx.max_recommended_working_set_size"
    assert "mlx.memory_size" not in names and "mlx.resource_limit" not in names


def test_an_older_mlx_is_read_through_mx_metal_without_its_warnings(mark_file, monkeypatch):
    # Before MLX 0.24.1 only mx.metal.get_*_memory() and device_info()
    # exist; here they warn as deprecated names do, and nothing of that
    # reaches the program.
    fake = fake_mlx(monkeypatch, top_level=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = swapsight.watch_mlx(interval=0.1)
        assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 3 + 4 * 2)
        w.stop()
    assert [str(c.message) for c in caught] == []
    names = [n for n, _, _ in counters_in(mark_file.read_lines())]
    assert names[:7] == [
        "mlx.memory_size", "mlx.max_recommended_working_set_size", "mlx.resource_limit",
        "mlx.active", "mlx.cache", "mlx.peak", "mlx.held",
    ]
    assert "reset_peak_memory" not in fake.calls


def test_the_top_level_names_are_preferred(mark_file, monkeypatch):
    fake = fake_mlx(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = swapsight.watch_mlx(interval=0.1)
        assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 7)
        w.stop()
    assert caught == [], "no mx.metal name was called"
    assert fake.calls[:4] == ["device_info", "get_active_memory", "get_cache_memory", "get_peak_memory"]


def test_an_mlx_without_metal_gives_no_device_figures(mark_file, monkeypatch):
    # An older MLX built without Metal: mx.metal.device_info() raises.
    fake_mlx(monkeypatch, top_level=False, device_info=RuntimeError("Cannot get device info without metal backend"))
    w = swapsight.watch_mlx(interval=0.1)
    assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 8)
    w.stop()
    names = [n for n, _, _ in counters_in(mark_file.read_lines())]
    assert names[:4] == ["mlx.active", "mlx.cache", "mlx.peak", "mlx.held"]


def test_watch_mlx_never_imports_mlx_and_waits_for_it(mark_file, monkeypatch):
    for name in [m for m in sys.modules if m == "mlx" or m.startswith("mlx.")]:
        monkeypatch.delitem(sys.modules, name)
    w = swapsight.watch_mlx(interval=0.1)
    time.sleep(0.3)
    assert "mlx.core" not in sys.modules and "mlx" not in sys.modules
    assert mark_file.read_lines() == []
    # Imported later by the program: sampled from then on.
    fake_mlx(monkeypatch)
    assert wait_for(lambda: counters_in(mark_file.read_lines()))
    w.stop()


def test_an_mlx_that_raises_is_logged_once_and_never_reaches_the_program(mark_file, monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="swapsight")
    fake_mlx(monkeypatch, broken=True, device_info={})
    errors = []
    threading.excepthook, old = (lambda a: errors.append(a)), threading.excepthook
    try:
        w = swapsight.watch_mlx(interval=0.1)
        time.sleep(0.4)
        w.stop()
    finally:
        threading.excepthook = old
    assert errors == []
    logged = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert len(logged) == 1 and "watch_mlx stopped reading mlx" in logged[0], logged
    assert counters_in(mark_file.read_lines()) == []


def test_watch_torch_and_watch_mlx_run_together(mark_file, monkeypatch):
    torch = types.ModuleType("torch")
    torch.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: False))
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: 1,
        memory_allocated=lambda i: 1 << 30,
        memory_reserved=lambda i: 2 << 30,
    )
    monkeypatch.setitem(sys.modules, "torch", torch)
    fake_mlx(monkeypatch)
    t = swapsight.watch_torch(interval=0.1)
    m = swapsight.watch_mlx(interval=0.1)
    assert t is not m and t.running and m.running
    assert isinstance(t, swapsight.TorchWatch) and not isinstance(t, swapsight.MlxWatch)
    assert swapsight.watch_torch() is t and swapsight.watch_mlx() is m

    def names():
        return {n for n, _, _ in counters_in(mark_file.read_lines())}

    assert wait_for(lambda: {"torch.cuda:0.allocated", "mlx.active"} <= names())
    t.stop()
    assert not t.running and m.running, "each stops on its own"
    n = len(counters_in(mark_file.read_lines()))
    assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= n + 8)
    later = [name for name, _, _ in counters_in(mark_file.read_lines())[n + 4:]]
    assert later and all(name.startswith("mlx.") for name in later), later
    m.stop()


def test_a_recording_inside_another_gets_watches_of_its_own(mark_file, monkeypatch, tmp_path):
    # One MLX watch per recording: a second call under the same recording
    # returns it, one under another recording (a nested one, a notebook
    # cell's) starts that recording's own, and stopping it leaves the
    # outer one sampling.
    fake_mlx(monkeypatch)
    outer = swapsight.watch_mlx(interval=0.1)
    assert swapsight.watch_mlx() is outer
    inner_mark = tmp_path / "inner-mark"
    monkeypatch.setenv("SWAPSIGHT_MARK", str(inner_mark))
    inner = swapsight.watch_mlx(interval=0.1)
    assert inner is not outer and inner.running and outer.running
    assert swapsight.watch_mlx() is inner
    assert wait_for(lambda: inner_mark.exists() and len(counters_in(inner_mark.read_text().splitlines())) >= 4)
    inner.stop()
    assert outer.running, "the outer recording's watch goes on"
    n = len(counters_in(mark_file.read_lines()))
    assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= n + 4)
    monkeypatch.setenv("SWAPSIGHT_MARK", str(mark_file.path))
    assert swapsight.watch_mlx() is outer
    outer.stop()


def test_record_mlx_inside_a_recording_leaves_the_outer_watch_running(tmp_path, monkeypatch):
    fake = fake_mlx(monkeypatch)
    outer = swapsight.record(tmp_path / "outer.jsonl", interval="100ms").start()
    try:
        outer_watch = swapsight.watch_mlx(interval=0.1)
        with swapsight.record(tmp_path / "inner.jsonl", interval="100ms", mlx=True) as inner:
            assert swapsight.watch_mlx() is not outer_watch, "the inner recording's own"
            time.sleep(0.8)
        assert outer_watch.running, "the inner recording stopped only its own watch"
        fake.active = 3 << 30
        time.sleep(0.8)
    finally:
        outer.stop()
    assert wait_for(lambda: not outer_watch.running), "it ends with its recording"
    assert inner.error is None and outer.error is None, (inner.error, outer.error)
    inner_peaks = {c["name"]: c["peak"] for c in inner.report.counters}
    outer_peaks = {c["name"]: c["peak"] for c in outer.report.counters}
    assert inner_peaks["mlx.active"] == 1 << 30, inner_peaks
    assert outer_peaks["mlx.active"] == 3 << 30, "sampled after the inner one ended"


def test_without_a_recorder_watch_mlx_starts_nothing(no_recorder, monkeypatch):
    fake_mlx(monkeypatch)
    w = swapsight.watch_mlx()
    assert not w.running and w.interval == 0.5
    w.stop()
    with pytest.raises(ValueError, match="watch_mlx"):
        swapsight.watch_mlx(1e308)


def test_the_watches_live_in_one_module_and_counter_knows_nothing_of_them():
    # _watch uses _counter's line; _counter never reaches back (no circle).
    import swapsight._counter as c
    import swapsight._watch as w

    assert w.TorchWatch is swapsight.TorchWatch and w.watch_torch is swapsight.watch_torch
    assert not hasattr(c, "watch_torch") and not hasattr(c, "TorchWatch")


# --- real MLX, its CPU backend ----------------------------------------------


def test_real_mlx_is_read_through_its_top_level_names_and_prints_nothing(mark_file, capfd):
    # MLX's deprecated mx.metal names print a line on stderr from C++: the
    # watch uses the top-level ones, so nothing is printed.
    mx = real_mlx()
    mx.clear_cache()
    a = mx.zeros((64 * MIB // 4,), dtype=mx.float32)
    mx.eval(a)
    w = swapsight.watch_mlx(interval=0.1)
    assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 8)
    w.stop()
    del a
    seen = dict((n, v) for n, v, _ in counters_in(mark_file.read_lines()))
    assert seen["mlx.active"] >= 64 * MIB, seen
    assert seen["mlx.peak"] >= seen["mlx.active"]
    assert seen["mlx.held"] == seen["mlx.active"] + seen["mlx.cache"]
    out, err = capfd.readouterr()
    assert err == "", err


#: Runs in a Python process of its own, so that MLX's figures start at 0:
#: under record(mlx=True), phases that hold a 64 MiB array, free it (too
#: large for the CPU backend's cache, it goes back at once), free a 16 MiB
#: one (kept in MLX's cache) and clear the cache.
PIPELINE = r"""
import sys, time
import mlx.core as mx
import swapsight

HOLD = 1.3
with swapsight.record(sys.argv[1], interval="100ms", mlx=True) as rec:
    with swapsight.phase("before"):
        time.sleep(HOLD)
    with swapsight.phase("hold"):
        a = mx.zeros((64 * 1024 * 1024 // 4,), dtype=mx.float32)
        mx.eval(a)
        time.sleep(HOLD)
    with swapsight.phase("freed"):
        del a
        time.sleep(HOLD)
    with swapsight.phase("cached"):
        b = mx.ones((16 * 1024 * 1024 // 4,), dtype=mx.float32)
        mx.eval(b)
        del b
        time.sleep(HOLD)
    with swapsight.phase("cleared"):
        mx.clear_cache()
        time.sleep(HOLD)
print(rec.error or "ok")
"""


def test_record_mlx_sees_real_arrays_come_and_go(tmp_path):
    real_mlx()
    script = tmp_path / "pipeline.py"
    script.write_text(PIPELINE)
    trace = tmp_path / "mlx.jsonl"
    env = dict(os.environ)
    env.pop("SWAPSIGHT_MARK", None)
    done = subprocess.run(
        [sys.executable, str(script), str(trace)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
    assert done.stderr == "", "MLX printed no deprecation: %s" % done.stderr

    report = swapsight.Report.of(trace)
    phases = {p["name"]: {c["name"]: c for c in p.get("counters", [])} for p in report.phases}
    assert list(phases) == ["before", "hold", "freed", "cached", "cleared"], list(phases)
    for name, figures in phases.items():
        print(name, {n: (c["peak"], c["last"]) for n, c in sorted(figures.items())})

    def last(phase, name):
        return phases[phase][name]["last"]

    def peak(phase, name):
        return phases[phase][name]["peak"]

    # mlx.active: up by the array's 64 MiB while it is held, down again
    # once it is freed (MLX also keeps a 4-byte scalar for mx.zeros' fill).
    assert last("before", "mlx.active") == 0
    assert 64 * MIB <= last("hold", "mlx.active") <= 64 * MIB + 4096
    assert last("freed", "mlx.active") == 0
    assert last("cached", "mlx.active") == 0
    # mlx.peak: the process's peak since start, never reset by the watch.
    assert last("before", "mlx.peak") == 0
    assert 64 * MIB <= last("hold", "mlx.peak") <= 64 * MIB + 4096
    assert last("cleared", "mlx.peak") == last("hold", "mlx.peak")
    # mlx.cache on the CPU backend: a freed buffer is kept while the cache
    # stays under its limit (32 MiB unless mx.set_cache_limit() says), so the
    # 64 MiB array went straight back to the system without clear_cache(),
    # the 16 MiB one is kept until clear_cache().
    assert peak("hold", "mlx.cache") <= 4096
    assert peak("freed", "mlx.cache") <= 4096
    assert 16 * MIB <= last("cached", "mlx.cache") <= 16 * MIB + 4096
    assert last("cleared", "mlx.cache") == 0
    # mlx.held = active + cache.
    assert last("hold", "mlx.held") == last("hold", "mlx.active") + last("hold", "mlx.cache")
    assert last("cached", "mlx.held") == last("cached", "mlx.cache")

    # The trace itself: every sample's four lines, held = active + cache in
    # each; no device figure (the CPU backend's device_info has no sizes).
    counters = [json.loads(l) for l in trace.read_text().splitlines() if '"type":"counter"' in l]
    names = {c["name"] for c in counters}
    assert names == {"mlx.active", "mlx.cache", "mlx.peak", "mlx.held"}, names
    samples = [counters[i:i + 4] for i in range(0, len(counters), 4)]
    assert len(samples) >= 5 * 2, len(samples)
    for s in samples:
        assert [c["name"] for c in s] == ["mlx.active", "mlx.cache", "mlx.peak", "mlx.held"], s
        assert s[3]["value"] == s[0]["value"] + s[1]["value"], s
        assert all(c.get("unit", "bytes") == "bytes" for c in s)
    text = str(report)
    assert "mlx.active: peak 64 MiB" in text, text


def test_an_mlx_still_importing_is_looked_at_again_once_it_is_whole(monkeypatch):
    """Regression (a flaky CI run of the notebook's --mlx cell wrote no MLX
    counter at all): the import machinery puts mlx.core in sys.modules
    before its body has run; a watch that looked then found none of its
    functions and kept to that for good. A module still importing is not
    looked at; one with none of the functions is looked at again."""
    import importlib.machinery

    from swapsight._watch import _MlxFigures

    half = types.ModuleType("mlx.core")
    half.__spec__ = importlib.machinery.ModuleSpec("mlx.core", None)
    half.__spec__._initializing = True
    monkeypatch.setitem(sys.modules, "mlx.core", half)
    figures = _MlxFigures()
    assert figures() == []
    # Whole now, but with none of the functions yet (an odd build): nothing,
    # and nothing kept.
    half.__spec__._initializing = False
    assert figures() == []
    assert figures.calls is None
    half.get_active_memory = lambda: 64 * MIB
    half.get_cache_memory = lambda: 0
    half.get_peak_memory = lambda: 64 * MIB
    names = {name for name, _, _ in figures()}
    assert names == {"mlx.active", "mlx.cache", "mlx.peak", "mlx.held"}


def test_mlx_held_is_said_to_be_what_the_cache_trigger_weighs_not_the_limit():
    """watch_mlx's word on mlx.held agrees with docs/python.md: active +
    cache is what MLX's Metal allocator weighs before it gives cached
    buffers back; its memory limit's own check (eval waits) counts active
    memory only, ``get_active_memory() > get_memory_limit()`` in
    mlx/transforms.cpp."""
    doc = " ".join(swapsight.watch_mlx.__doc__.split())
    assert "memory limit counts" not in doc
    assert "before it gives cached buffers back" in doc
    assert "counts active memory only" in doc
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")
    if not os.path.exists(docs):
        pytest.skip("docs/python.md is not beside the tests (an installed wheel)")
    with open(docs, encoding="utf-8") as f:
        row = next(line for line in f if line.startswith("| `mlx.held` |"))
    assert "before it gives cached buffers back" in row
