"""watch_torch(): a framework's memory figures sampled into the running
recording as counters, by one sampler thread design.

A :class:`Watch` is a daemon thread that calls its *figures* function every
``interval`` seconds and writes the ``(name, value, unit)`` triples it
returns through the mark file, as :func:`swapsight.counter` would. It stops
on ``.stop()``, when the recording ends (the recorder unlinks its
registration beside the mark file) or with the program. The figures
functions read only a framework the program imported itself
(``sys.modules``): nothing here imports one. If one raises, the
watch stops reading that framework and logs it once; nothing reaches the
program. One watch of each kind runs at a time (a second call returns the
running one); watches of different kinds may run together.
"""

import numbers
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Literal, Optional, Set, Tuple, Type, TypeVar, Union

from ._counter import counter_line
from ._writer import _warn_once, mark_path, write_line

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
#: The running watch of each kind ("torch", "mlx").
_running: Dict[str, "Watch"] = {}


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
    :class:`TorchWatch` is the kind :func:`watch_torch` starts."""

    #: The kind, one running at a time, and the framework it reads: also in
    #: the thread's name and what the log and errors say.
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
        # The recorder unlinks its registration when the recording ends;
        # then the watch ends too.
        self._registration: Optional[str] = None
        if path:
            reg = os.path.join(os.path.dirname(os.fsdecode(path)), "trace")
            if os.path.exists(reg):
                self._registration = reg

    def _start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="swapsight-watch-" + self.kind, daemon=True
        )
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 2.0) -> None:
        """Stops sampling; waits up to ``timeout`` seconds for the thread."""
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        self._forget()

    def _forget(self) -> None:
        with _lock:
            if _running.get(self.kind) is self:
                del _running[self.kind]

    def __enter__(self: "W") -> "W":
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.stop()
        return False

    def _run(self) -> None:
        failed = False
        while not self._stop.is_set():
            if self._registration and not os.path.exists(self._registration):
                break
            if not failed:
                try:
                    for name, value, unit in self._figures():
                        line = counter_line(name, value, unit)
                        if line is not None and self._path:
                            write_line(self._path, line)
                except Exception as e:
                    failed = True
                    _warn_once(
                        "swapsight: watch_%s stopped reading %s: %s", self.kind, self.kind, e
                    )
            self._stop.wait(self.interval)
        self._forget()


def _start_watch(cls: Type[W], interval: Any) -> W:
    """The running watch of ``cls``'s kind, or a new one started on the
    running recording (unstarted without one). Raises ValueError for a bad
    interval, recording or not."""
    kind = cls.kind
    every = sampling_interval(
        DEFAULT_INTERVAL if interval is None else interval, "swapsight.watch_" + kind
    )
    with _lock:
        running = _running.get(kind)
        if isinstance(running, cls) and running.running:
            return running
        path = mark_path()
        watch = cls(every, path)
        if not path:
            return watch
        try:
            watch._start()
        except Exception as e:  # no thread to be had
            _warn_once("swapsight: watch_%s could not start: %s", kind, e)
            return watch
        _running[kind] = watch
        return watch


# --- torch --------------------------------------------------------------


class _TorchFigures:
    """The PyTorch allocator's figures, for the backend present; the
    once-only ones (``recommended_max``) once per watch."""

    def __init__(self) -> None:
        self.said: Set[str] = set()

    def __call__(self) -> List[Figure]:
        # Only a torch the program imported itself: never imported here.
        torch = sys.modules.get("torch")
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
    it stops with the recording or on ``.stop()``. One torch watch at a time:
    a second call returns the running one. Without a recording it starts
    nothing. Raises only
    ValueError, for a bad interval (also without a recording: the mistake
    shows before the run that needs it)."""
    return _start_watch(TorchWatch, interval)
