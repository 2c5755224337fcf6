"""counter() and watch_torch(): named figures through the mark file, the
torch adapter against a stand-in module that behaves as the documented torch
functions do (torch itself is too large to install here), and a counter in a
real recording read back by the installed CLI's report."""

import enum
import json
import logging
import subprocess
import sys
import threading
import time
import types

import pytest

import swapsight
from conftest import counters_in, installed_binary, record, wait_for


def test_a_counter_is_one_line_in_the_mark_file(mark_file):
    swapsight.counter("pool", 3 << 30)
    swapsight.counter("queue", 2.5, unit="items")
    swapsight.counter("two\nlines\u202e", 1)
    swapsight.counter("/abs", 1)
    assert mark_file.read_lines() == [
        "#counter 3221225472 bytes pool",
        "#counter 2.5 items queue",
        "#counter 1 bytes two?lines?",
        "#counter 1 bytes /abs",
    ]


def test_each_kind_of_bad_counter_is_dropped_and_logged_once(mark_file, caplog):
    # One line per kind of mistake, each said once: a first bad value must
    # not hide a later bad unit, and none claims phase marks are skipped.
    caplog.set_level(logging.WARNING, logger="swapsight")
    for name, value, unit in [
        ("x", float("nan"), "bytes"),
        ("x", float("inf"), "bytes"),
        ("x", 2**60, "bytes"),
        ("x", -(2**60), "bytes"),
        ("x", 1, "by tes"),
        ("x", 1, "a-unit-far-too-long"),
        ("   ", 1, "bytes"),
        ("x", True, "bytes"),
        ("x", "not a number", "bytes"),
        ("x", "", "bytes"),
        ("x", None, "bytes"),
        ("x", object(), "bytes"),
    ]:
        swapsight.counter(name, value, unit=unit)
    assert mark_file.read_lines() == []
    logged = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert logged == [
        "swapsight: counter 'x' not written: the value nan is not finite (logged once)",
        "swapsight: counter 'x' not written: the value 1152921504606846976 is beyond "
        "2**53 either way (logged once)",
        "swapsight: counter 'x' not written: the unit 'by tes' is not 1 to 16 of "
        "A-Z a-z 0-9 _ % / . - (logged once)",
        "swapsight: counter '   ' not written: the name is blank once cleaned (logged once)",
        "swapsight: counter 'x' not written: the value True is a bool, not a number (logged once)",
        "swapsight: counter 'x' not written: the value 'not a number' is not a number "
        "(an int or what float() takes) (logged once)",
    ], logged


def test_a_bad_counter_leaves_phases_and_later_counters_alone(mark_file, caplog):
    # counter("q", "lots") once logged "phase marks are skipped" and then
    # hid every later mistake: the phases still work, and say so by working.
    caplog.set_level(logging.WARNING, logger="swapsight")
    swapsight.counter("q", "lots")
    with swapsight.phase("load"):
        swapsight.counter("q", 3, unit="items")
    swapsight.counter("q", float("nan"))
    assert mark_file.read_lines() == ["load", "#counter 3 items q", "/load"]
    logged = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert len(logged) == 2 and not any("phase marks are skipped" in m for m in logged), logged
    assert "'lots' is not a number" in logged[0] and "nan is not finite" in logged[1]


def test_a_number_is_written_as_the_number_it_holds(mark_file, caplog):
    """int and float subclasses are written through int's and float's own
    methods: their __str__, __format__ or __abs__ (an enum's "Color.RED", a
    forged second line, a bound dodged) never reach the mark file, nor does a
    unit that only claims to equal "bytes"."""
    caplog.set_level(logging.WARNING, logger="swapsight")
    forged = "1 bytes x\n#counter 9 bytes forged"

    class Forged(int):
        def __str__(self):
            return forged

        __repr__ = __str__

        def __format__(self, spec):
            return forged

    class Huge(int):
        def __abs__(self):
            return 0

    class Color(int, enum.Enum):  # str() is "Color.RED" on every Python
        RED = 3

    class Level(enum.IntEnum):  # str() is "Level.HIGH" on Python <= 3.10
        HIGH = 4

    class Odd(float):
        def __repr__(self):
            return forged

        __str__ = __repr__

    class Unit(str):
        def __eq__(self, other):
            return True

        def __hash__(self):
            return hash("bytes")

    swapsight.counter("a", Forged(5))
    swapsight.counter("b", Color.RED)
    swapsight.counter("c", Level.HIGH)
    swapsight.counter("d", Odd(2.5))
    swapsight.counter("e", Huge(2**60))
    swapsight.counter("f", 1, unit=Unit("by\n#counter 9 bytes forged"))
    assert mark_file.read_lines() == [
        "#counter 5 bytes a",
        "#counter 3 bytes b",
        "#counter 4 bytes c",
        "#counter 2.5 bytes d",
    ]
    logged = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert len(logged) == 2, "one line each: the value past 2**53, the unit"
    assert "beyond 2**53" in logged[0] and "the unit" in logged[1]
    assert not any("\n" in m for m in logged), "no forged line in the log either"


def test_without_a_recorder_a_counter_does_nothing(no_recorder, tmp_path):
    for i in range(10_000):
        swapsight.counter("pool", i)
    w = swapsight.watch_torch()
    assert not w.running
    w.stop()
    assert list(tmp_path.iterdir()) == []


class FakeMps:
    """torch.mps as documented: current_allocated_memory(),
    driver_allocated_memory() and recommended_max_memory(), in bytes."""

    def __init__(self):
        self.current = 1 << 30
        self.calls = {"recommended": 0}

    def current_allocated_memory(self):
        self.current += 1 << 20
        return self.current

    def driver_allocated_memory(self):
        return self.current + (2 << 30)

    def recommended_max_memory(self):
        self.calls["recommended"] += 1
        return 40 << 30


def fake_torch(mps=None, cuda_devices=0, broken=False):
    torch = types.ModuleType("torch")
    torch.backends = types.SimpleNamespace(
        mps=types.SimpleNamespace(is_available=lambda: mps is not None)
    )
    if mps is not None:
        torch.mps = mps

    def allocated(i):
        if broken:
            raise RuntimeError("CUDA error: device-side assert")
        return (i + 1) << 30

    torch.cuda = types.SimpleNamespace(
        is_available=lambda: cuda_devices > 0,
        device_count=lambda: cuda_devices,
        memory_allocated=allocated,
        memory_reserved=lambda i: (i + 1) << 31,
    )
    return torch


@pytest.fixture
def torch_module(monkeypatch):
    def install(module):
        monkeypatch.setitem(sys.modules, "torch", module)
        return module

    yield install
    # No watch outlives its test.
    import swapsight._watch as w

    for watch in list(w._running.values()):
        watch.stop()


def test_watch_torch_samples_mps_and_stops(mark_file, torch_module):
    mps = FakeMps()
    torch_module(fake_torch(mps=mps))
    with swapsight.watch_torch(interval=0.1) as w:
        assert w.running
        assert swapsight.watch_torch() is w, "one watch at a time"
        assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 7)
        assert w._thread.daemon
    assert not w.running
    seen = counters_in(mark_file.read_lines())
    names = [n for n, _, _ in seen]
    assert names.count("torch.mps.recommended_max") == 1, names
    assert mps.calls["recommended"] == 1
    assert {"torch.mps.current_allocated", "torch.mps.driver_allocated"} <= set(names)
    assert all(unit == "bytes" for _, _, unit in seen)
    driver = [v for n, v, _ in seen if n == "torch.mps.driver_allocated"]
    assert driver[0] >= 3 << 30
    count = len(seen)
    time.sleep(0.3)
    assert len(counters_in(mark_file.read_lines())) == count, "nothing after stop()"


def test_watch_torch_samples_every_cuda_device(mark_file, torch_module):
    torch_module(fake_torch(cuda_devices=2))
    w = swapsight.watch_torch(interval=0.1)
    assert wait_for(lambda: len(counters_in(mark_file.read_lines())) >= 4)
    w.stop()
    seen = dict((n, v) for n, v, _ in counters_in(mark_file.read_lines()))
    assert seen["torch.cuda:0.allocated"] == 1 << 30
    assert seen["torch.cuda:1.reserved"] == 2 << 31


def test_watch_torch_never_imports_torch_and_waits_for_it(mark_file, monkeypatch, torch_module):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    w = swapsight.watch_torch(interval=0.1)
    time.sleep(0.3)
    assert "torch" not in sys.modules
    assert mark_file.read_lines() == []
    # Imported later by the program: sampled from then on.
    torch_module(fake_torch(mps=FakeMps()))
    assert wait_for(lambda: counters_in(mark_file.read_lines()))
    w.stop()


def test_a_torch_that_raises_is_logged_once_and_never_reaches_the_program(
    mark_file, torch_module, caplog
):
    caplog.set_level(logging.WARNING, logger="swapsight")
    torch_module(fake_torch(cuda_devices=1, broken=True))
    errors = []
    threading.excepthook, old = (lambda a: errors.append(a)), threading.excepthook
    try:
        w = swapsight.watch_torch(interval=0.1)
        time.sleep(0.4)
        w.stop()
    finally:
        threading.excepthook = old
    assert errors == []
    assert [r for r in caplog.records if "watch_torch" in r.getMessage()]
    assert counters_in(mark_file.read_lines()) == []


@pytest.mark.parametrize(
    "interval",
    [1e308, 10**400, float("inf"), float("nan"), -1, 0, 0.05, 3601, True, "0.5", [1]],
    ids=lambda v: type(v).__name__ + ("-10**400" if v == 10**400 else "-%r" % (v,)),
)
@pytest.mark.parametrize("kind", ["torch", "mlx"])
def test_a_watch_refuses_an_interval_outside_its_range(mark_file, torch_module, kind, interval):
    # watch_torch() and watch_mlx() share the rule (swapsight/_watch.py).
    torch_module(fake_torch(mps=FakeMps()))
    with pytest.raises(ValueError) as e:
        getattr(swapsight, "watch_" + kind)(interval)
    assert str(e.value) == (
        "swapsight.watch_%s: the interval %r is not a number of seconds "
        "from 0.1 to 3600" % (kind, interval)
    )
    with pytest.raises(ValueError):
        {"torch": swapsight.TorchWatch, "mlx": swapsight.MlxWatch}[kind](interval, str(mark_file.path))
    import swapsight._watch as w

    assert w._running == {}, "no thread was started"


def test_watch_torch_refuses_a_bad_interval_without_a_recording_too(no_recorder):
    with pytest.raises(ValueError, match="1e\\+308"):
        swapsight.watch_torch(1e308)


def test_watch_torch_takes_the_ends_of_its_range(mark_file, torch_module):
    torch_module(fake_torch(mps=FakeMps()))
    for interval in (0.1, 3600, 3600.0):
        w = swapsight.watch_torch(interval)
        assert w.running and w.interval == interval
        started = time.monotonic()
        w.stop()
        assert not w.running and time.monotonic() - started < 2


def test_watch_torch_ends_with_the_recording(tmp_path, monkeypatch, torch_module):
    import swapsight._writer

    # A recorder's folder: its registration goes when the recording ends.
    (tmp_path / "trace").write_text("t.jsonl")
    monkeypatch.setenv("SWAPSIGHT_MARK", str(tmp_path / "mark"))
    monkeypatch.setattr(swapsight._writer, "_warned", False)
    torch_module(fake_torch(mps=FakeMps()))
    w = swapsight.watch_torch(interval=0.1)
    assert w.running
    (tmp_path / "trace").unlink()
    assert wait_for(lambda: not w.running), "the watch ends with the recording"


COUNTERS = r"""
import time
import swapsight

swapsight.mark("load")
swapsight.counter("pool", 1 << 30)
time.sleep(0.3)
swapsight.mark("fill")
for i in range(1, 4):
    swapsight.counter("pool", i << 30)
    time.sleep(0.15)
swapsight.counter("queue", 2.5, unit="items")
swapsight.end_phase()
time.sleep(0.3)
"""


def test_counters_reach_a_real_recording_and_its_report(tmp_path):
    record(tmp_path, COUNTERS)
    trace = tmp_path / "t.jsonl"
    lines = [json.loads(l) for l in trace.read_text().splitlines()]
    counters = [l for l in lines if l["type"] == "counter"]
    assert [c["name"] for c in counters] == ["pool"] * 4 + ["queue"], counters
    report = json.loads(
        subprocess.run(
            [installed_binary(), "report", "--json", str(trace)],
            capture_output=True, text=True, check=True,
        ).stdout
    )
    phases = {p["name"]: p for p in report["phases"]}
    assert phases["load"]["counters"][0]["peak"] == 1 << 30
    fill = {c["name"]: c for c in phases["fill"]["counters"]}
    assert fill["pool"]["peak"] == 3 << 30
    assert fill["pool"]["last"] == 3 << 30
    assert fill["queue"]["unit"] == "items"
    assert report["counters"][0]["points"] == 4
