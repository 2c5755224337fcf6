"""phase(), mark(), end_phase() and clean_name() against a fake recorder
(a plain file in $SWAPSIGHT_MARK) and without any recorder."""

import asyncio
import logging
import os
import threading

import pytest

import swapsight


def test_no_recorder_100k_phases_raise_nothing_and_leave_no_file(tmp_path, monkeypatch, no_recorder, caplog):
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.DEBUG)

    @swapsight.phase("decorated")
    def f(x):
        return x + 1

    for i in range(100_000):
        with swapsight.phase("denoise"):
            with swapsight.phase("inner"):
                pass
    for i in range(1000):
        assert f(i) == i + 1
        swapsight.mark("m")
        swapsight.end_phase()
    assert list(tmp_path.iterdir()) == []
    assert caplog.records == []


def test_a_failing_recorder_is_logged_once_and_never_raises(tmp_path, monkeypatch, no_recorder, caplog):
    missing = tmp_path / "gone" / "mark"
    monkeypatch.setenv("SWAPSIGHT_MARK", str(missing))
    with caplog.at_level(logging.WARNING, logger="swapsight"):
        for _ in range(100):
            with swapsight.phase("a"):
                swapsight.mark("b")
                swapsight.end_phase()
    assert not missing.parent.exists()
    assert len(caplog.records) == 1
    assert "cannot open the mark file" in caplog.records[0].getMessage()


def test_a_fifo_never_blocks_and_a_link_is_not_followed(tmp_path, monkeypatch, no_recorder, caplog):
    fifo = tmp_path / "fifo"
    os.mkfifo(str(fifo))
    monkeypatch.setenv("SWAPSIGHT_MARK", str(fifo))
    done = []

    def writer():
        with swapsight.phase("x"):
            pass
        done.append(True)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    t.join(5)
    assert done == [True]  # no reader, yet no hang
    target = tmp_path / "target"
    target.write_text("")
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv("SWAPSIGHT_MARK", str(link))
    swapsight.mark("y")
    assert target.read_text() == ""


def test_nested_phases_are_written_as_paths(mark_file):
    with swapsight.phase("load"):
        with swapsight.phase("unet"):
            pass
        with swapsight.phase("vae"):
            swapsight.mark("weights")
            swapsight.end_phase()
    swapsight.mark("decode")
    swapsight.end_phase()
    assert mark_file.read_lines() == [
        "load", "load/unet", "load", "load/vae", "load/vae/weights", "load/vae", "load",
        "/load", "decode", "/",
    ]


def test_an_exception_ends_the_phase_and_propagates(mark_file):
    with pytest.raises(KeyError):
        with swapsight.phase("a"):
            raise KeyError("x")

    @swapsight.phase("b")
    def boom():
        raise ValueError("y")

    with pytest.raises(ValueError):
        boom()
    assert mark_file.read_lines() == ["a", "/a", "b", "/b"]


def test_the_decorator_keeps_the_function(mark_file):
    @swapsight.phase("step")
    def step(a, b=2):
        """Doc."""
        return a * b

    assert step(3) == 6 and step(3, b=3) == 9
    assert step.__name__ == "step" and step.__doc__ == "Doc." and step.__wrapped__
    assert mark_file.read_lines() == ["step", "/step"] * 2


def test_recursion_enters_the_same_phase_again(mark_file):
    @swapsight.phase("r")
    def r(n):
        return 0 if n == 0 else 1 + r(n - 1)

    assert r(2) == 2
    assert mark_file.read_lines() == ["r", "r/r", "r/r/r", "r/r", "r", "/r"]


def test_async_functions_each_task_its_own_path(mark_file):
    @swapsight.phase("job")
    async def job(name, delay):
        with swapsight.phase(name):
            await asyncio.sleep(delay)
        return name

    async def main():
        return await asyncio.gather(job("a", 0.05), job("b", 0.01))

    assert asyncio.run(main()) == ["a", "b"]
    lines = mark_file.read_lines()
    # Task b's phase is job/b, never job/a/job/b: each task has its own path.
    assert sorted(lines) == sorted(["job", "job/a", "job", "job/b", "job", "job", "/job", "/job"])
    assert lines[-1] == "/job"
    assert all(len(l.split("/")) <= 2 for l in lines if not l.startswith("/"))


def test_generator_phase_spans_first_item_to_exhaustion(mark_file):
    @swapsight.phase("batches")
    def batches(n):
        for i in range(n):
            yield i

    it = batches(2)
    assert mark_file.read_lines() == []  # not started before the first next()
    assert next(it) == 0
    assert mark_file.read_lines() == ["batches"]
    assert list(it) == [1]
    assert mark_file.read_lines() == ["batches", "/batches"]


def test_generator_return_value_and_send_pass_through(mark_file):
    @swapsight.phase("g")
    def g():
        got = yield 1
        return got * 2

    it = g()
    next(it)
    with pytest.raises(StopIteration) as stop:
        it.send(21)
    assert stop.value.value == 42


def test_async_generators(mark_file):
    @swapsight.phase("stream")
    async def stream():
        for i in range(3):
            await asyncio.sleep(0)
            yield i

    async def main():
        return [i async for i in stream()]

    assert asyncio.run(main()) == [0, 1, 2]
    assert mark_file.read_lines() == ["stream", "/stream"]


def test_threads_have_their_own_path(mark_file):
    seen = []
    barrier = threading.Barrier(2)

    def worker():
        with swapsight.phase("worker"):
            barrier.wait(5)
            barrier.wait(5)

    with swapsight.phase("main"):
        t = threading.Thread(target=worker)
        t.start()
        barrier.wait(5)
        # The worker's phase is not nested in main's, nor main's in the worker's.
        with swapsight.phase("step"):
            seen.append(True)
        barrier.wait(5)
        t.join(5)
    lines = mark_file.read_lines()
    assert "worker" in lines and "main/step" in lines
    assert not [l for l in lines if "worker/" in l or "main/worker" in l]


def test_a_phase_object_shared_by_threads(mark_file):
    shared = swapsight.phase("shared")
    errors = []

    def worker():
        try:
            for _ in range(200):
                with shared:
                    with swapsight.phase("in"):
                        pass
        except Exception as e:  # pragma: no cover - the assertion below says it
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    lines = mark_file.read_lines()
    assert errors == []
    assert len(lines) == 4 * 200 * 4
    assert set(lines) == {"shared", "shared/in", "/shared"}


CASES = [
    ("decode", "decode"),
    ("  decode \n", "decode"),
    ("a\nb", "a?b"),
    ("a\r\nb", "a??b"),
    ("tab\there", "tab?here"),
    ("\x1b[31mred", "?[31mred"),
    ("\u202eevil\u202c", "?evil?"),
    ("a\u2028b\u2029c", "a?b?c"),
    ("\u061c\u200e\u200f\u2066\u2069", "?????"),
    ("x" * 1_000_000, "x" * 64),
    ("é" * 100, "é" * 64),
    ("/etc", ""),  # the core reads it as the end of a phase: no phase name
    ("  /etc", ""),
    ("#counter 1 items x", ""),  # a counter line
    ("a/b", "a/b"),
    ("", ""),
    ("   \t ", ""),
    ("ab\udcff\udcfecd", "ab\ufffd\ufffdcd"),
    ("a\ud800b", "a\ufffdb"),
    (b"ab\xff\xfecd", "ab\ufffd\ufffdcd"),
    (42, "42"),
]


@pytest.mark.parametrize("raw,clean", CASES, ids=[repr(c[0])[:30] for c in CASES])
def test_clean_name(raw, clean):
    assert swapsight.clean_name(raw) == clean


def test_blank_names(mark_file, caplog):
    assert swapsight.phase("  ").name == "?"
    with swapsight.phase(""):
        pass
    swapsight.mark("\n")  # not marked, logged
    assert mark_file.read_lines() == ["?", "/?"]


def test_a_blank_name_neither_says_marks_are_skipped_nor_hides_a_file_problem(mark_file, caplog, tmp_path, monkeypatch):
    caplog.set_level(logging.WARNING, logger="swapsight")
    swapsight.mark("\n")
    swapsight.mark("load")
    monkeypatch.setenv("SWAPSIGHT_MARK", str(tmp_path / "gone" / "mark"))
    swapsight.mark("decode")
    logged = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert mark_file.read_lines() == ["load"]
    assert len(logged) == 2, logged
    assert logged[0] == "swapsight: mark '\\n': the name is blank (logged once)"
    assert "cannot open the mark file" in logged[1] and "phase marks are skipped" in logged[1]


def test_a_name_with_surrogates_or_a_bad_str_never_raises(mark_file):
    class Bad:
        def __str__(self):
            raise RuntimeError("no")

    with swapsight.phase(Bad()):
        swapsight.mark("\udc80")
    assert mark_file.read_lines() == ["?", "?/\ufffd", "/?"]


def test_nested_paths_are_cut_to_64(mark_file):
    with swapsight.phase("a" * 40):
        with swapsight.phase("b" * 40):
            pass
    lines = mark_file.read_lines()
    assert lines[1] == ("a" * 40 + "/" + "b" * 40)[:64]
    assert all(len(l) <= 65 for l in lines)


def test_a_path_is_its_names_joined_and_cleaned_at_every_depth(mark_file):
    """Each line is the names entered, joined with '/' and cleaned (cut to
    64, a blank at the cut trimmed) however deep: the kept paths give the
    same lines as cleaning the whole join each time, also when a phase in
    the middle is left first (a suspended generator)."""
    from swapsight._names import clean_text

    # The join's 64th character is a blank: cut there, it is trimmed.
    names = ["x" * 30, "y" * 32 + " q", "z", "w" * 70] + ["d"] * 300
    phases = [swapsight.phase(n) for n in names]
    want = []

    def enter(depth):
        if depth == len(phases):
            return
        with phases[depth]:
            want.append(clean_text("/".join(p.name for p in phases[: depth + 1])))
            enter(depth + 1)
        want.append(clean_text("/".join(p.name for p in phases[:depth])) or "/" + phases[0].name)

    enter(0)
    assert mark_file.read_lines() == want
    assert want[1] == "x" * 30 + "/" + "y" * 32
    assert want[2] == want[1]  # "z" is past the cut


def test_leaving_a_middle_phase_joins_the_inner_ones_again(mark_file):
    @swapsight.phase("gen" + "g" * 60)
    def batches():
        yield 1

    it = batches()
    with swapsight.phase("outer"):
        next(it)  # "outer/genggg…", cut to 64
        inner = swapsight.phase("step")
        inner.__enter__()
        with pytest.raises(StopIteration):
            next(it)  # the generator's phase ends below "step"
        inner.__exit__(None, None, None)
    lines = mark_file.read_lines()
    assert lines[-3:] == ["outer/step", "outer", "/outer"]
    assert lines[1] == ("outer/gen" + "g" * 60)[:64]


def test_a_bare_decorator_names_the_phase_after_the_function(mark_file):
    @swapsight.phase
    def encode(x):
        return x * 2

    class Pipe:
        @swapsight.phase
        async def decode(self):
            return 7

    assert encode(2) == 4
    assert asyncio.run(Pipe().decode()) == 7
    assert mark_file.read_lines() == ["encode", "/encode", "Pipe.decode", "/Pipe.decode"]


def test_a_suspended_generator_keeps_its_phase(mark_file):
    @swapsight.phase("batches")
    def batches():
        yield 1
        yield 2

    it = batches()
    next(it)
    with swapsight.phase("step"):
        pass
    with swapsight.phase("outer"):
        assert list(it) == [2]  # the generator ends inside "outer"
    assert mark_file.read_lines() == [
        "batches", "batches/step", "batches", "batches/outer", "outer", "/outer",
    ]
