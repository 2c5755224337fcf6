"""The mark file held open between lines (swapsight/_writer.py): a line is
one write(); the file the recorder took is left for a new one, a descriptor
the program closed or reused is never written to, and other threads, a
signal handler and a forked child write lines of their own."""

import json
import os
import signal
import threading
import time

import pytest

import swapsight
from swapsight import _writer
from conftest import record


@pytest.fixture
def always_look(monkeypatch):
    """The held file is looked at before every line."""
    monkeypatch.setattr(_writer, "CHECK_EVERY", 0.0)


def lines(path):
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_lines_go_through_one_held_descriptor(mark_file):
    swapsight.mark("a")
    fd = _writer._held_fd
    for name in ("b", "c"):
        swapsight.mark(name)
    assert _writer._held_fd == fd >= 0
    assert mark_file.read_lines() == ["a", "b", "c"]


def test_the_file_the_recorder_took_is_left_for_a_new_one(mark_file, always_look):
    """As the recorder takes it: renamed (a line then still goes there: the
    recorder reads it once more), then unlinked (the next line makes a new
    file)."""
    swapsight.mark("a")
    taken = mark_file.path.with_name("taken-1")
    os.rename(mark_file.path, taken)
    swapsight.mark("b")
    with open(taken, encoding="utf-8") as kept:  # the recorder's descriptor
        os.unlink(taken)
        swapsight.mark("c")
        assert kept.read().splitlines() == ["a", "b"]
    assert mark_file.read_lines() == ["c"]


def test_a_line_within_the_look_interval_goes_to_the_held_file(mark_file, monkeypatch):
    """Written to the file the recorder took (it reads it once more a round,
    50 ms, later) until CHECK_EVERY has passed since the last look."""
    monkeypatch.setattr(_writer, "CHECK_EVERY", 3600.0)
    swapsight.mark("a")
    taken = mark_file.path.with_name("taken-1")
    with open(mark_file.path, encoding="utf-8") as kept:
        os.rename(mark_file.path, taken)
        os.unlink(taken)
        swapsight.mark("b")
        monkeypatch.setattr(_writer, "CHECK_EVERY", 0.0)
        swapsight.mark("c")
        assert kept.read().splitlines() == ["a", "b"]
    assert mark_file.read_lines() == ["c"]


def test_a_descriptor_closed_and_reused_by_the_program_is_not_written(mark_file, tmp_path):
    swapsight.mark("a")
    fd = _writer._held_fd
    os.close(fd)
    other = tmp_path / "data"
    reused = os.open(str(other), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        assert reused == fd  # the lowest free number: the one just closed
        time.sleep(_writer.CHECK_EVERY * 2)
        swapsight.mark("b")
        swapsight.mark("c")
        assert other.read_text() == ""
        os.fstat(reused)  # still open: the writer closed no descriptor of ours
    finally:
        os.close(reused)
    assert mark_file.read_lines() == ["a", "b", "c"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
def test_a_new_mark_path_is_opened_and_the_old_one_closed(mark_file, tmp_path, monkeypatch):
    swapsight.mark("a")
    second = tmp_path / "second"
    open_fds = len(os.listdir("/proc/self/fd"))
    for i in range(10):
        monkeypatch.setenv("SWAPSIGHT_MARK", str(second if i % 2 == 0 else mark_file.path))
        swapsight.mark("m%d" % i)
    assert len(os.listdir("/proc/self/fd")) == open_fds
    assert mark_file.read_lines() == ["a", "m1", "m3", "m5", "m7", "m9"]
    assert lines(second) == ["m0", "m2", "m4", "m6", "m8"]


def test_a_writer_inside_the_writing_one_uses_a_descriptor_of_its_own(mark_file):
    """A signal handler that marks while a line is being written (here: the
    lock taken by hand) neither waits for it nor touches the held file."""
    swapsight.mark("a")
    fd = _writer._held_fd
    with _writer._lock:
        swapsight.mark("b")
    swapsight.mark("c")
    assert _writer._held_fd == fd
    assert mark_file.read_lines() == ["a", "b", "c"]


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no setitimer")
def test_a_signal_handler_that_marks_never_deadlocks(mark_file):
    fired = []

    def handler(signum, frame):
        swapsight.mark("from-handler")
        fired.append(signum)

    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
        until = time.monotonic() + 0.5
        while time.monotonic() < until or not fired:
            swapsight.mark("main")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    got = mark_file.read_lines()
    assert got.count("from-handler") == len(fired) > 0
    assert set(got) == {"main", "from-handler"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_writes_through_a_file_of_its_own(mark_file):
    swapsight.mark("parent")
    parent_fd = _writer._held_fd
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            inherited = _writer._held_fd
            swapsight.mark("child")
            os.write(w, json.dumps([inherited, _writer._held_fd >= 0]).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    said = json.loads(os.read(r, 100).decode())
    os.close(r)
    assert os.waitpid(pid, 0)[1] == 0
    swapsight.mark("parent again")
    assert said == [-1, True]  # nothing inherited held; the child opened its own
    assert _writer._held_fd == parent_fd
    assert mark_file.read_lines() == ["parent", "child", "parent again"]


def test_threads_marking_at_once_lose_no_line(mark_file):
    def worker(i):
        for j in range(300):
            swapsight.mark("t%d-%d" % (i, j))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    got = mark_file.read_lines()
    assert sorted(got) == sorted("t%d-%d" % (i, j) for i in range(4) for j in range(300))
    for i in range(4):  # each thread's own lines in its order
        mine = [l for l in got if l.startswith("t%d-" % i)]
        assert mine == ["t%d-%d" % (i, j) for j in range(300)]


BURSTS = r"""
import time, swapsight
# Pairs of marks 1 ms apart (the second within the writer's look interval,
# through the held file), a burst every 25 ms across the recorder's takes:
# 40 marks, within its 50 a second.
for i in range(20):
    swapsight.mark("m%d" % (2 * i))
    time.sleep(0.001)
    swapsight.mark("m%d" % (2 * i + 1))
    time.sleep(0.025)
swapsight.end_phase()
"""


def test_marks_through_the_held_file_all_reach_a_real_recording(tmp_path):
    marks, _ = record(tmp_path, BURSTS)
    names = [m["name"] for m in marks if not m.get("end")]
    assert names == ["m%d" % i for i in range(40)], marks
