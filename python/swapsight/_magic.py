"""The notebook's ``%%swapsight`` cell magic: ``%load_ext swapsight``, then

    %%swapsight --budget 2G
    pipe = load()
    image = pipe(prompt)

records the cell (``record()``), shows a live line while it runs (updated in
place about once a second), and its report (a table and the chart) when it
ends. A swap growth past ``--budget`` stops the cell with
:class:`BudgetExceeded`, an ordinary exception: the kernel lives on.
``--torch`` and ``--mlx`` also sample the PyTorch allocator's and MLX's
figures into the cell's recording (``record(torch=True, mlx=True)``).
``%swapsight_last`` is the last cell's :class:`Report`.
"""

import ast
import asyncio
import contextvars
import ctypes
import inspect
import json
import os
import re
import shlex
import signal
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

from ._cli import BudgetExceeded, Error
from ._record import record
from ._report import Report
from ._tables import format_bytes, parse_size

#: How often the live line is redrawn and the budget checked, in seconds.
REFRESH = 1.0
#: How often the trace is looked at until its first sample, in seconds: the
#: line appears then, not up to REFRESH later.
FIRST_LOOK = 0.05


class _Options:
    def __init__(self) -> None:
        self.budget: Optional[int] = None
        self.interval = "250ms"
        self.output: Optional[str] = None
        self.torch = False
        self.mlx = False


#: The options that take no value.
_FLAGS = ("--torch", "--mlx")
_USAGE = (
    "usage: %%swapsight [--budget SIZE] [--interval DURATION] [-o TRACE.jsonl] "
    "[--torch] [--mlx]"
)


def _parse(line: str) -> _Options:
    """``--budget SIZE``, ``--interval DURATION``, ``-o PATH``, the flags
    ``--torch`` and ``--mlx``: a bad one is one ``Error`` naming it."""
    usage = _USAGE
    opts = _Options()
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise Error("%%%%swapsight: %s (%s)" % (e, usage)) from None
    i = 0
    while i < len(words):
        word, value = words[i], None
        if "=" in word and word.startswith("--"):
            word, value = word.split("=", 1)
        if word in _FLAGS:
            if value is not None:
                raise Error("%%%%swapsight: %s takes no value (%s)" % (word, usage))
            if word == "--torch":
                opts.torch = True
            else:
                opts.mlx = True
            i += 1
            continue
        if value is None and i + 1 < len(words):
            value = words[i + 1]
            i += 1
        i += 1
        if word not in ("--budget", "--interval", "-o", "--output"):
            raise Error("%%%%swapsight: unknown option %r (%s)" % (word, usage))
        if value is None:
            raise Error("%%%%swapsight: %s needs a value (%s)" % (word, usage))
        if word == "--budget":
            try:
                opts.budget = parse_size(value)
            except ValueError as e:
                raise Error("%%%%swapsight --budget: %s" % e) from None
        elif word == "--interval":
            opts.interval = value
        else:
            opts.output = os.path.abspath(os.path.expanduser(value))
    return opts


class _Tail:
    """The trace's samples as they are written: the latest figures of the
    watched processes, read from where the last look stopped."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.rest = b""
        self.first_swap: Optional[int] = None
        self.swap_growth = 0
        self.footprint = 0
        self.peak = 0
        self.free_pct: Optional[float] = None
        self.samples = 0

    def read(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        for line in lines:
            if b'"type":"sample"' in line:
                try:
                    self._sample(json.loads(line))
                except (ValueError, TypeError, AttributeError):
                    continue

    def _sample(self, s: Dict[str, Any]) -> None:
        self.samples += 1
        system = s.get("sys") or {}
        swap = int(system.get("swap_used_bytes") or 0)
        if self.first_swap is None:
            self.first_swap = swap
        self.swap_growth = swap - self.first_swap
        self.free_pct = system.get("free_pct")
        watched = set(s.get("watched") or [])
        self.footprint = sum(
            int(p.get("footprint_bytes") or 0) for p in s.get("procs") or [] if p.get("pid") in watched
        )
        self.peak = max(self.peak, self.footprint)


class _Cell:
    """One recorded cell: the recording, the live line and the budget."""

    def __init__(self, opts: _Options) -> None:
        self.opts = opts
        path = opts.output or os.path.join(
            _trace_dir(), time.strftime("cell-%Y%m%d-%H%M%S-") + "%d.jsonl" % os.getpid()
        )
        self.rec = record(path, interval=opts.interval, torch=opts.torch, mlx=opts.mlx)
        self.tail = _Tail(self.rec.path)
        self.started = 0.0
        self.crossed: Optional[str] = None
        self._done = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._handle: Any = None
        self._display: Callable[..., Any] = lambda *a, **k: None
        self._target = threading.get_ident()
        #: How a crossed budget stops the cell, when not by _raise_in.
        self.cancel: Optional[Callable[[], Any]] = None

    def line(self) -> str:
        words = [
            "swapsight: %.0f s" % (time.monotonic() - self.started),
            "footprint %s (peak %s)" % (format_bytes(self.tail.footprint), format_bytes(self.tail.peak)),
            "swap %s%s" % ("+" if self.tail.swap_growth > 0 else "", format_bytes(self.tail.swap_growth)),
        ]
        if self.opts.budget is not None:
            words[-1] += " of a %s budget" % format_bytes(self.opts.budget)
        if self.tail.free_pct is not None:
            words.append("free %.0f %%" % self.tail.free_pct)
        return " · ".join(words)

    def start(self) -> None:
        from IPython import display as ipython_display

        display: Callable[..., Any] = ipython_display.display

        self._display = display
        self.rec.start()
        self.started = time.monotonic()
        # The kernel sends output to the cell the thread's context names.
        ctx = contextvars.copy_context()
        self._thread = threading.Thread(target=ctx.run, args=(self._watch,), daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(REFRESH if self.tail.samples else FIRST_LOOK):
            self.tail.read()
            self._update()
            budget = self.opts.budget
            if budget is not None and self.crossed is None and self.tail.swap_growth > budget:
                self.crossed = "swap grew %s, past the cell's budget of %s (trace: %s)" % (
                    format_bytes(self.tail.swap_growth),
                    format_bytes(budget),
                    self.rec.path,
                )
                if self.cancel is not None:
                    self.cancel()
                else:
                    _raise_in(self._target, self.crossed)

    def _update(self) -> None:
        # Drawn from the first sample on: before it, every figure would
        # be a zero that was never measured.
        if not self.tail.samples:
            return
        try:
            if self._handle is None:
                self._handle = self._display(_Text(self.line()), display_id=True)
            else:
                self._handle.update(_Text(self.line()))
        except Exception:
            pass  # a closed display is no reason to stop recording

    def stop(self) -> Optional[Report]:
        self._done.set()
        try:
            self._join()
        finally:
            report = self.rec.stop()
        self.tail.read()
        self._update()
        return report

    def _join(self) -> None:
        """Waits for the watch to end; the budget's interrupt may land here,
        after the cell's last line, and is said by the caller instead."""
        while self._thread is not None:
            try:
                self._thread.join()
                self._thread = None
                time.sleep(0)  # a signal sent meanwhile is handled here
            except (BudgetExceeded, KeyboardInterrupt):
                if self.crossed is None:
                    raise
        # One the watch set that has not landed yet never will.
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._target), None)


class _Text:
    """A line shown as itself (no quotes) in every front end."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        import html

        return "<pre>%s</pre>" % html.escape(self.text)


def _trace_dir() -> str:
    folder = os.path.join(tempfile.gettempdir(), "swapsight-notebook")
    os.makedirs(folder, exist_ok=True)
    return folder


def _raise_in(thread_id: int, message: str) -> None:
    """Stops the cell running in ``thread_id`` with an exception it can
    meet, unlike a dead kernel. In the main thread, where SIGINT raises
    KeyboardInterrupt (a kernel's interrupt), SIGINT: it also wakes a call
    that waits (a sleep, a child process), and run_cell() says it as
    BudgetExceeded. Elsewhere BudgetExceeded(message) is raised in the
    thread at its next Python line; the interpreter makes that exception
    with no arguments, so the message is carried by a subclass made for it."""
    if (
        thread_id == threading.main_thread().ident
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.pthread_kill(thread_id, signal.SIGINT)
        return
    exc: Type[BudgetExceeded] = type(
        "BudgetExceeded",
        (BudgetExceeded,),
        {"__init__": lambda self, *a: BudgetExceeded.__init__(self, message)},
    )
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc))


def _split_last(source: str, flags: int = 0) -> Tuple[Any, Optional[Any]]:
    """The cell compiled as its statements and, when it ends in an
    expression, that expression apart: its value is the cell's result."""
    tree = ast.parse(source, "<swapsight cell>")
    last = None
    end = tree.body[-1] if tree.body else None
    if isinstance(end, ast.Expr):
        tree.body.pop()
        last = ast.Expression(end.value)
    body = compile(tree, "<swapsight cell>", "exec", flags)
    return body, compile(last, "<swapsight cell>", "eval", flags) if last is not None else None


_last: List[Optional[Report]] = [None]


def _end(rec: _Cell) -> None:
    """Stops the cell's recording and shows its report, also when the cell
    raised."""
    from IPython import display as ipython_display

    display: Callable[..., Any] = ipython_display.display

    report = rec.stop()
    _last[0] = report
    if report is not None:
        display(report)
    elif rec.rec.error:
        display(_Text("swapsight: %s" % rec.rec.error))


def run_cell(shell: Any, line: str, cell: str) -> Any:
    """The ``%%swapsight`` magic: runs ``cell`` in the notebook's namespace
    while recording it."""
    opts = _parse(line)
    body, last = _split_last(shell.transform_cell(cell))
    rec = _Cell(opts)
    rec.start()
    value = None
    try:
        exec(body, shell.user_ns)
        if last is not None:
            value = eval(last, shell.user_ns)
    except (BudgetExceeded, KeyboardInterrupt):
        if rec.crossed is None:
            raise  # the user's own interrupt
        # The budget's: said once below, after the report.
    finally:
        _end(rec)
    if rec.crossed:
        raise BudgetExceeded(rec.crossed)
    return value


async def run_cell_async(shell: Any, line: str, cell: str) -> Any:
    """``run_cell`` for a cell with a top-level ``await``: awaited where
    IPython awaits such a cell, on the kernel's own event loop, so that the
    cell's coroutines run with the ones earlier cells made. A budget
    crossed cancels the cell's task (a signal or an exception thrown into
    the loop would land in the loop, not in the cell): the cell stops at
    its next ``await``."""
    opts = _parse(line)
    body, last = _split_last(shell.transform_cell(cell), ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    rec = _Cell(opts)
    task = asyncio.current_task()
    if task is not None:
        loop = asyncio.get_running_loop()
        rec.cancel = lambda: loop.call_soon_threadsafe(task.cancel)
    rec.start()
    value = None
    try:
        ran = eval(body, shell.user_ns)
        if body.co_flags & inspect.CO_COROUTINE:
            await ran
        if last is not None:
            value = eval(last, shell.user_ns)
            if last.co_flags & inspect.CO_COROUTINE:
                value = await value
    except (BudgetExceeded, KeyboardInterrupt, asyncio.CancelledError):
        if rec.crossed is None:
            raise
        uncancel = getattr(task, "uncancel", None)  # Python 3.11 on
        if uncancel is not None:
            uncancel()
    finally:
        _end(rec)
    if rec.crossed:
        raise BudgetExceeded(rec.crossed)
    return value


#: What a ``%%swapsight`` cell that awaits becomes: one expression awaited
#: at the top level, which IPython (and the kernel) run as they run any
#: cell that awaits, and whose value is the cell's.
_AWAIT_CALL = (
    "await __import__('swapsight._magic', fromlist=['run_cell_async'])"
    ".run_cell_async(get_ipython(), %r, %r)\n"
)


def _await_transform(shell: Any) -> Callable[[List[str]], List[str]]:
    """An input transformer for a ``%%swapsight`` cell with a top-level
    ``await``. A cell magic is called as a plain function, from inside the
    kernel's running event loop, where no coroutine can be run to its end;
    so such a cell is rewritten before IPython sees it as a magic, and
    IPython's own test (``should_run_async``: autoawait on, and the cell
    compiles only as a coroutine) decides which cells those are."""

    def transform(lines: List[str]) -> List[str]:
        if not lines or not re.match(r"%%swapsight(\s|$)", lines[0]):
            return lines
        line = lines[0][len("%%swapsight"):].strip()
        cell = "".join(lines[1:])
        try:
            awaits = shell.should_run_async(cell, transformed_cell=shell.transform_cell(cell))
        except Exception:
            return lines  # the magic says what is wrong with the cell
        return [_AWAIT_CALL % (line, cell)] if awaits else lines

    setattr(transform, "swapsight", True)
    return transform


def last_report(shell: Any, line: str) -> Optional[Report]:
    """``%swapsight_last``: the last recorded cell's report."""
    if _last[0] is None:
        raise Error("%swapsight_last: no cell has been recorded yet (%%swapsight)")
    return _last[0]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext swapsight``."""

    def swapsight_magic(line: str, cell: str) -> Any:
        return run_cell(ipython, line, cell)

    def swapsight_last(line: str) -> Optional[Report]:
        return last_report(ipython, line)

    ipython.register_magic_function(swapsight_magic, "cell", "swapsight")
    cleanup = ipython.input_transformers_cleanup
    if not any(getattr(t, "swapsight", False) for t in cleanup):
        cleanup.append(_await_transform(ipython))
    ipython.register_magic_function(swapsight_last, "line", "swapsight_last")
