"""watch_torch() and watch_mlx(): a framework's memory figures sampled into
the running recording as counters, by one sampler thread design.

A :class:`Watch` is a daemon thread that calls its *figures* function every
``interval`` seconds and writes the ``(name, value, unit)`` triples it
returns through the mark file, as :func:`swapsight.counter` would. It stops
on ``.stop()``, when the recording ends (the recorder unlinks its
registration beside the mark file), when its recorder is gone without a
word (killed outright: _registration.py) or with the program. ``.stop()``
never waits for a framework call that has not returned, and one thread of
a kind at a time calls its framework, so a call that blocks leaves one
thread waiting on it, not one per watch started since. The figures
functions read only a framework the program imported itself
(``sys.modules``): nothing here imports torch or MLX. If one raises
(KeyboardInterrupt and SystemExit too), the watch stops reading that
framework and logs it once; nothing reaches the program. One watch of each kind runs per recording (a second call under the
same recording returns the running one); a torch watch and an MLX watch may
run together, and a recording started inside another (a notebook cell's
inside a longer one) gets watches of its own, leaving the outer one's be.
"""

import numbers
import os
import sys
import threading
import warnings
from typing import Any, Callable, Dict, List, Literal, Optional, Set, Tuple, Type, TypeVar, Union

from ._counter import counter_line
from ._registration import Registration
from ._writer import mark_path, warn_once, write_line

#: A counter to write now: (name, value, unit).
Figure = Tuple[str, Any, str]
#: What a watch samples: called on its thread once an interval, returns the
#: figures to write now (none while the framework is not imported); an
#: exception stops the watch's reading, logged once.
Figures = Callable[[], List[Figure]]

#: The sampling interval of a watch unless told: 2 Hz.
DEFAULT_INTERVAL = 0.5
#: watch_torch()'s default (the name it has had since it came).
TORCH_INTERVAL = DEFAULT_INTERVAL
#: The range of a sampler's interval, in seconds. At least 0.1: a sample is a
#: few counters, and the recorder keeps 50 a second. At most an hour: longer
#: is no sampling, and far longer overflows the thread's wait.
MIN_INTERVAL = 0.1
MAX_INTERVAL = 3600.0

_lock = threading.Lock()
#: The running watches, by kind ("torch", "mlx") and the mark path they
#: write to (one per recording).
_running: Dict[Tuple[str, Union[str, bytes]], "Watch"] = {}


def sampling_interval(interval: Any, who: str) -> float:
    """``interval`` in seconds as a float, for any sampler thread; raises
    ValueError naming ``who`` when it is not a number from MIN_INTERVAL to
    MAX_INTERVAL (a bool, NaN, an infinity, a string)."""
    seconds: Optional[float] = None
    if isinstance(interval, numbers.Real) and not isinstance(interval, bool):
        try:
            seconds = float(interval)
        except (OverflowError, TypeError, ValueError):  # 10**400
            pass
    if seconds is not None and MIN_INTERVAL <= seconds <= MAX_INTERVAL:  # not NaN
        return seconds
    raise ValueError(
        "%s: the interval %r is not a number of seconds from %g to %g"
        % (who, interval, MIN_INTERVAL, MAX_INTERVAL)
    )


def _nothing() -> List[Figure]:
    return []


W = TypeVar("W", bound="Watch")


class Watch:
    """A sampler thread writing ``figures()`` into the recording at
    ``path`` every ``interval`` seconds. ``.stop()`` ends it (also as a
    context manager), ``.running`` says whether its thread still samples.
    :class:`TorchWatch` and :class:`MlxWatch` are the two kinds
    :func:`watch_torch` and :func:`watch_mlx` start."""

    #: The kind, one running per recording, and the framework it reads: also
    #: in the thread's name and what the log and errors say.
    kind = "watch"

    def __init__(
        self,
        interval: float,
        path: Optional[Union[str, bytes]],
        figures: Optional[Figures] = None,
    ) -> None:
        self.interval = sampling_interval(interval, "swapsight.watch_" + self.kind)
        self._path = path
        self._figures: Figures = figures if figures is not None else _nothing
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        # Held while the thread decides to call the framework or writes a
        # sample: stop() takes it, so that nothing is written after it
        # returns, and knows whether the thread is inside a call (which it
        # must not wait for: a framework call may never return).
        self._turn = threading.Lock()
        self._in_call = False
        # The watch ends with its recording, also one whose recorder was
        # killed outright (its mark file would grow on, in RAM under /run).
        self._recording = Registration(path)

    def _start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="swapsight-watch-" + self.kind, daemon=True
        )
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether it still samples: started, not stopped, its recording
        still there."""
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def stop(self, timeout: float = 2.0) -> None:
        """Stops sampling: nothing is written after it returns. Waits up to
        ``timeout`` seconds for the thread to end, but never for a framework
        call that has not returned (the thread ends when it does)."""
        with self._turn:
            self._stop.set()
            in_call = self._in_call
        t = self._thread
        if t is not None and t is not threading.current_thread() and not in_call:
            t.join(timeout)
        self._forget()

    def _forget(self) -> None:
        if not self._path:
            return
        key = (self.kind, self._path)
        with _lock:
            if _running.get(key) is self:
                del _running[key]

    def __enter__(self: "W") -> "W":
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.stop()
        return False

    def _run(self) -> None:
        try:
            self._sample()
        except BaseException as e:  # a thread's SystemExit ends it silently
            _said_why(self.kind, e)
        finally:
            self._forget()

    def _sample(self) -> None:
        # One thread of a kind inside the framework at a time: a call that
        # blocks holds up the watches started after it, not one new thread
        # stuck per watch_mlx() call.
        with _lock:
            calls = _calls.setdefault(self.kind, threading.Lock())
        failed = False
        while not self._stop.is_set() and self._recording.goes_on():
            if not failed and _take(calls, self._stop):
                try:
                    failed = not self._sample_once()
                finally:
                    calls.release()
            self._stop.wait(self.interval)

    def _sample_once(self) -> bool:
        """One sample written; False when the framework failed (logged)."""
        with self._turn:
            if self._stop.is_set():
                return True
            self._in_call = True
        try:
            lines = [counter_line(name, value, unit) for name, value, unit in self._figures()]
        except BaseException as e:  # KeyboardInterrupt, SystemExit: no traceback, no silent end
            _said_why(self.kind, e)
            return False
        finally:
            self._in_call = False
        with self._turn:
            if self._stop.is_set() or not self._path:
                return True
            for line in lines:
                if line is not None:
                    write_line(self._path, line)
        return True


#: A lock per kind, held by the one thread calling that framework.
_calls: Dict[str, threading.Lock] = {}

if hasattr(os, "register_at_fork"):
    # A forked child has none of its parent's threads: a lock one of them
    # held (a call that blocks) would keep the child's watches waiting.
    os.register_at_fork(after_in_child=_calls.clear)

#: How often a thread waiting for its turn looks whether it was stopped.
_TURN_LOOK = 0.05


def _take(lock: threading.Lock, stop: threading.Event) -> bool:
    """``lock``, once free; False when ``stop`` came first."""
    while not stop.is_set():
        if lock.acquire(timeout=_TURN_LOOK):
            return True
    return False


def _said_why(kind: str, e: BaseException) -> None:
    warn_once(
        "watch-" + kind,
        "swapsight: watch_%s stopped reading %s: %s",
        kind,
        kind,
        "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__,
    )


def _start_watch(
    cls: Type[W], interval: Any, path: Optional[Union[str, bytes]] = None
) -> W:
    """The running watch of ``cls``'s kind on the recording whose mark file
    is ``path`` (the running recording's unless told), or a new one started
    on it (unstarted without a recording). Raises ValueError for a bad
    interval, recording or not."""
    kind = cls.kind
    every = sampling_interval(
        DEFAULT_INTERVAL if interval is None else interval, "swapsight.watch_" + kind
    )
    with _lock:
        if path is None:
            path = mark_path()
        if not path:
            return cls(every, path)
        running = _running.get((kind, path))
        if isinstance(running, cls) and running.running:
            return running
        watch = cls(every, path)
        try:
            watch._start()
        except Exception as e:  # no thread to be had
            warn_once("start-" + kind, "swapsight: watch_%s could not start: %s", kind, e)
            return watch
        _running[(kind, path)] = watch
        return watch


# --- torch --------------------------------------------------------------


class _TorchFigures:
    """The PyTorch allocator's figures, for the backend present; the
    once-only ones (``recommended_max``) once per watch."""

    def __init__(self) -> None:
        self.said: Set[str] = set()

    def __call__(self) -> List[Figure]:
        # Only a torch the program imported itself: never imported here.
        torch = _imported("torch")
        if torch is None:
            return []
        return [(name, value, "bytes") for name, value in _torch_figures(torch, self.said)]


def _torch_figures(torch: Any, said: Set[str]) -> List[Tuple[str, Any]]:
    """(name, bytes) pairs of the allocator's figures now, for the backend
    present. ``said`` holds the once-only names already written."""
    out: List[Tuple[str, Any]] = []
    mps_backend = getattr(getattr(torch, "backends", None), "mps", None)
    mps = getattr(torch, "mps", None)
    if mps is not None and mps_backend is not None and mps_backend.is_available():
        out.append(("torch.mps.current_allocated", mps.current_allocated_memory()))
        out.append(("torch.mps.driver_allocated", mps.driver_allocated_memory()))
        if "torch.mps.recommended_max" not in said and hasattr(mps, "recommended_max_memory"):
            said.add("torch.mps.recommended_max")
            out.append(("torch.mps.recommended_max", mps.recommended_max_memory()))
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available():
        for i in range(cuda.device_count()):
            out.append(("torch.cuda:%d.allocated" % i, cuda.memory_allocated(i)))
            out.append(("torch.cuda:%d.reserved" % i, cuda.memory_reserved(i)))
    return out


class TorchWatch(Watch):
    """What :func:`watch_torch` returned: ``.stop()`` ends it (also as a
    context manager), ``.running`` says whether its thread still samples."""

    kind = "torch"

    def __init__(self, interval: float, path: Optional[Union[str, bytes]]) -> None:
        super().__init__(interval, path, _TorchFigures())


def watch_torch(interval: Optional[float] = None) -> TorchWatch:
    """Samples what the PyTorch allocator holds into the running recording
    on a daemon thread, every ``interval`` seconds (default 0.5; from 0.1 to
    3600, else ValueError): on MPS ``torch.mps.current_allocated_memory()`` and
    ``driver_allocated_memory()`` (and ``recommended_max_memory()`` once), on
    CUDA ``memory_allocated(i)`` and ``memory_reserved(i)`` per device. Only
    once the program has imported torch itself (it is never imported here);
    it stops with the recording or on ``.stop()``. One torch watch per
    recording: a second call under the same recording returns the running
    one (a :func:`watch_mlx` may run beside it). Without a recording it
    starts nothing. Raises only
    ValueError, for a bad interval (also without a recording: the mistake
    shows before the run that needs it)."""
    return _start_watch(TorchWatch, interval)


# --- MLX ----------------------------------------------------------------

#: mx.device_info() keys written once per watch, with their units.
MLX_DEVICE_FIGURES = (
    ("memory_size", "bytes"),
    ("max_recommended_working_set_size", "bytes"),
    ("resource_limit", "buffers"),
)


def _mlx_function(mx: Any, name: str) -> Tuple[Optional[Callable[..., Any]], bool]:
    """MLX's ``name``: the top-level ``mx.NAME`` (MLX 0.24.1 and later for
    the memory figures, 0.30.4 for ``device_info``), else the older
    ``mx.metal.NAME``; and whether it is that older one. (None, False)
    when neither is there."""
    fn = getattr(mx, name, None)
    if callable(fn):
        return fn, False
    fn = getattr(getattr(mx, "metal", None), name, None)
    if callable(fn):
        return fn, True
    return None, False


def _call_quietly(fn: Callable[..., Any], old: bool) -> Any:
    """``fn()``; an older ``mx.metal`` name is called with Python's
    DeprecationWarnings ignored. (MLX's own deprecation notice of those
    names is a line its C++ prints to stderr, once a name, which no Python
    filter holds back: it exists only in the MLX versions that also have
    the top-level names, which are always preferred, so it is never
    reached.)"""
    if not old:
        return fn()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn()


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class _MlxFigures:
    """MLX's memory figures: ``mlx.active``, ``mlx.cache``, ``mlx.peak``
    and ``mlx.held`` (active + cache) each sample, the device's sizes once
    per watch. Never ``reset_peak_memory()``: the peak is the program's."""

    def __init__(self) -> None:
        self.device_said = False
        self.calls: Optional[List[Tuple[str, Callable[..., Any], bool]]] = None

    def __call__(self) -> List[Figure]:
        # Only an mlx the program imported itself: never imported here.
        mx = _imported("mlx.core")
        if mx is None:
            return []
        out: List[Figure] = []
        if not self.device_said:
            self.device_said = True
            out.extend(_mlx_device_figures(mx))
        if self.calls is None:
            calls = []
            for name, what in (
                ("mlx.active", "get_active_memory"),
                ("mlx.cache", "get_cache_memory"),
                ("mlx.peak", "get_peak_memory"),
            ):
                fn, old = _mlx_function(mx, what)
                if fn is not None:
                    calls.append((name, fn, old))
            # An MLX with none of them is looked at again next time.
            self.calls = calls or None
        if self.calls is None:
            return out
        values: Dict[str, Any] = {}
        for name, fn, old in self.calls:
            values[name] = _call_quietly(fn, old)
            out.append((name, values[name], "bytes"))
        if "mlx.active" in values and "mlx.cache" in values:
            active, cache = values["mlx.active"], values["mlx.cache"]
            if _is_number(active) and _is_number(cache):
                out.append(("mlx.held", active + cache, "bytes"))
        return out


def _imported(name: str) -> Any:
    """Module ``name`` once the program imported it whole; None before, and
    while its import is still running (the import machinery puts a module in
    ``sys.modules`` before it has run its body: a watch that looked then
    found none of its functions, and kept to that)."""
    module = sys.modules.get(name)
    if module is None:
        return None
    spec = getattr(module, "__spec__", None)
    if spec is not None and getattr(spec, "_initializing", False):
        return None
    return module


def _mlx_device_figures(mx: Any) -> List[Figure]:
    """The device's sizes from ``mx.device_info()`` (older MLX:
    ``mx.metal.device_info()``): only the keys there, and only numbers. A
    device_info that raises (an MLX without Metal) gives none."""
    fn, old = _mlx_function(mx, "device_info")
    if fn is None:
        return []
    try:
        info = _call_quietly(fn, old)
    except Exception:
        return []
    if not isinstance(info, dict):
        return []
    out: List[Figure] = []
    for key, unit in MLX_DEVICE_FIGURES:
        value = info.get(key)
        if _is_number(value):
            out.append(("mlx." + key, value, unit))
    return out


class MlxWatch(Watch):
    """What :func:`watch_mlx` returned: ``.stop()`` ends it (also as a
    context manager), ``.running`` says whether its thread still samples."""

    kind = "mlx"

    def __init__(self, interval: float, path: Optional[Union[str, bytes]]) -> None:
        super().__init__(interval, path, _MlxFigures())


def watch_mlx(interval: Optional[float] = None) -> MlxWatch:
    """Samples MLX's memory figures into the running recording on a daemon
    thread, every ``interval`` seconds (default 0.5; from 0.1 to 3600, else
    ValueError): ``mx.get_active_memory()``, ``get_cache_memory()`` and
    ``get_peak_memory()`` as ``mlx.active``, ``mlx.cache`` and ``mlx.peak``
    (bytes), and ``mlx.held``, active + cache (what MLX's Metal allocator
    weighs against the lower of its memory limit and 95 % of the
    recommended working set before it gives cached buffers back; the
    memory limit's own check, where ``eval`` waits, counts active memory
    only: ``get_active_memory() > get_memory_limit()`` in mlx/transforms.cpp);
    once, the numbers of ``mx.device_info()`` among
    ``memory_size``, ``max_recommended_working_set_size`` (bytes) and
    ``resource_limit`` (buffers), as ``mlx.memory_size``, …. Only once the
    program has imported ``mlx.core`` itself (it is never imported here);
    never resets MLX's peak. It stops with the recording or on ``.stop()``.
    One MLX watch per recording: a second call under the same recording
    returns the running one (a :func:`watch_torch` may run beside it).
    Without a recording it starts nothing. Raises only ValueError, for a bad
    interval."""
    return _start_watch(MlxWatch, interval)
