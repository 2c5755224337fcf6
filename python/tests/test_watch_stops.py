"""A watch stops: with a recorder killed outright, on stop() while a
framework call blocks, and when the framework raises KeyboardInterrupt or
SystemExit (issue 49 §4)."""

import logging
import os
import signal
import sys
import threading
import time
import types

import pytest

import swapsight
import swapsight._watch as w
from conftest import counters_in, wait_for


@pytest.fixture(autouse=True)
def no_watch_outlives_its_test():
    yield
    for watch in list(w._running.values()):
        watch.stop()


def mlx_module(monkeypatch, get_active_memory):
    mx = types.ModuleType("mlx.core")
    mx.get_active_memory = get_active_memory
    monkeypatch.setitem(sys.modules, "mlx.core", mx)
    return mx


def watch_threads():
    return [t for t in threading.enumerate() if t.name == "swapsight-watch-mlx"]


def size_of(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def test_a_watch_stops_when_its_recorder_is_killed(tmp_path, monkeypatch):
    # SIGKILL (the OOM killer's) leaves the registration in place: the
    # watch went on writing into a mark file nobody reads, in RAM under /run.
    mlx_module(monkeypatch, lambda: 1 << 20)
    rec = swapsight.record(tmp_path / "t.jsonl", interval="100ms").start()
    try:
        mark = os.environ["SWAPSIGHT_MARK"]
        watch = swapsight.watch_mlx(interval=0.1)
        assert watch.running
        os.kill(rec.recorder_pid, signal.SIGKILL)
        # Not reaped until stop(): a zombie recorder is gone all the same.
        assert wait_for(lambda: not watch._thread.is_alive(), timeout=5), "it samples on"
        assert not watch.running
        size = size_of(mark)
        # Its thread has ended, so nothing can grow the file; a new watch
        # for that recording is not started either.
        again = swapsight.watch_mlx(interval=0.1)
        assert wait_for(lambda: not again._thread.is_alive(), timeout=5)
        assert size_of(mark) == size
    finally:
        rec.stop()
    assert "killed by SIGKILL" in rec.error


def test_stop_never_waits_for_a_framework_call_that_blocks(mark_file, monkeypatch):
    # A call that never returns used to hold stop() 2 s and leave one stuck
    # thread behind per watch_mlx() call.
    gate, entered = threading.Event(), threading.Event()
    values = iter([111, 222])

    def get_active_memory():
        value = next(values, 333)
        if value == 111:
            entered.set()
            gate.wait(30)
        return value

    mlx_module(monkeypatch, get_active_memory)
    stuck = swapsight.watch_mlx(interval=0.1)
    try:
        assert entered.wait(5)
        began = time.monotonic()
        stuck.stop()
        assert time.monotonic() - began < 1.0, "stop() waited for the blocked call"
        assert not stuck.running
        for _ in range(5):
            swapsight.watch_mlx(interval=0.1).stop()
        assert wait_for(lambda: len(watch_threads()) == 1), "one stuck thread, none per call"
        later = swapsight.watch_mlx(interval=0.1)
        assert later is not stuck and later.running
    finally:
        gate.set()
    # Its turn comes once the call returns; the stopped watch's late sample
    # (111) is never written.
    assert wait_for(lambda: counters_in(mark_file.read_lines()))
    later.stop()
    assert wait_for(lambda: not watch_threads())
    values_written = {v for _, v, _ in counters_in(mark_file.read_lines())}
    assert 111 not in values_written and values_written <= {222, 333}, values_written


@pytest.mark.parametrize(
    "raised, said",
    [(KeyboardInterrupt(), "KeyboardInterrupt"), (SystemExit(3), "SystemExit: 3")],
)
def test_keyboard_interrupt_or_system_exit_in_a_framework_call_is_said_once(
    mark_file, monkeypatch, caplog, raised, said
):
    # KeyboardInterrupt printed a traceback from the thread; SystemExit
    # ended it without a word.
    caplog.set_level(logging.WARNING, logger="swapsight")
    calls = []

    def get_active_memory():
        calls.append(1)
        raise raised

    mlx_module(monkeypatch, get_active_memory)
    errors = []
    monkeypatch.setattr(threading, "excepthook", errors.append)
    watch = swapsight.watch_mlx(interval=0.1)
    assert wait_for(lambda: [r for r in caplog.records if r.name == "swapsight"])
    assert watch.running, "it stops reading MLX, not watching"
    watch.stop()
    assert wait_for(lambda: not watch._thread.is_alive())
    assert errors == []
    assert len(calls) == 1
    logged = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert logged == ["swapsight: watch_mlx stopped reading mlx: %s (logged once)" % said]
    assert counters_in(mark_file.read_lines()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_samples_though_its_parent_is_stuck_in_a_call(mark_file, monkeypatch, tmp_path):
    # The child has no copy of the parent's stuck thread, only of the lock
    # it holds: its watches must not wait on that lock forever.
    gate, entered = threading.Event(), threading.Event()

    def stuck():
        entered.set()
        gate.wait(30)
        return 1

    mlx_module(monkeypatch, stuck)
    parent = swapsight.watch_mlx(interval=0.1)
    try:
        assert entered.wait(5)
        child_mark = tmp_path / "child-mark"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                os.environ["SWAPSIGHT_MARK"] = str(child_mark)
                sys.modules["mlx.core"].get_active_memory = lambda: 7
                swapsight.watch_mlx(interval=0.1)
                if wait_for(lambda: child_mark.exists() and child_mark.read_text(), timeout=10):
                    code = 0
            finally:
                os._exit(code)
        until = time.monotonic() + 20
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done or time.monotonic() > until:
                break
            time.sleep(0.02)
        if not done:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        assert done and status == 0, "the child's watch never sampled"
        assert counters_in(child_mark.read_text().splitlines())[0] == ("mlx.active", 7.0, "bytes")
    finally:
        parent.stop()
        gate.set()
