"""counter() and watch_torch(): named figures in the running recording.

A counter is one line in the mark file, ``#counter VALUE UNIT NAME`` (the
rule of crates/core/src/marks.rs ``counter_line``); the recorder writes it to
the trace as a ``{"type":"counter",...}`` line at that instant, keeping at
most 50 values a second apart from the marks (the rest are counted in a
``counters-dropped`` event). Without a running recording every call does
nothing; nothing here ever raises into the pipeline (a problem is logged once
on the ``swapsight`` logger).
"""

import math
import numbers
import os
import re
import sys
import threading
from typing import Any, List, Literal, Optional, Set, Tuple, Union

from ._names import cached_clean_text, clean_text
from ._writer import _warn_once, mark_path, write_line

#: The largest magnitude a counter value may have: 2^53 (what a double and
#: the web UI hold exactly as an integer).
MAX_VALUE = 2**53
_UNIT = re.compile(r"[A-Za-z0-9_%/.\-]{1,16}\Z")
_PREFIX = "#counter "
#: Units already found good ("bytes" first): most calls skip the pattern.
_UNITS_SEEN = {"bytes"}


def _figure(value: Any) -> Optional[str]:
    """``value`` as the line writes it, or None when it is no finite number
    within ±2^53. Through int's and float's own methods: a subclass's
    ``__str__``, ``__format__`` or ``__abs__`` (an enum's ``Color.RED``, a
    second line forged into the mark file, a bound dodged) never counts."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if int.__abs__(value) > MAX_VALUE:
            return None
        return int.__repr__(value)
    value = float.__float__(value) if isinstance(value, float) else float(value)
    if not math.isfinite(value) or abs(value) > MAX_VALUE:
        return None
    return float.__repr__(value)


def counter_line(name: object, value: Any, unit: object = "bytes") -> Optional[str]:
    """The line that writes a counter, or ``None`` when the name is empty
    once cleaned, the unit is not 1 to 16 of ``A-Z a-z 0-9 _ % / . -`` or
    the value is not a finite number within ±2^53. Raises nothing for a
    str name, a number and a str unit."""
    if type(unit) is not str:
        if not isinstance(unit, str):
            return None
        # Its characters, not its own __eq__ and __hash__ (which could pass
        # for a unit already seen).
        unit = str.__str__(unit)
    if unit not in _UNITS_SEEN:
        if not _UNIT.match(unit):
            return None
        if len(_UNITS_SEEN) < 64:
            _UNITS_SEEN.add(unit)
    figure = _figure(value)
    if figure is None:
        return None
    text = cached_clean_text(name) if type(name) is str else clean_text(name)
    if not text:
        return None
    return _PREFIX + figure + " " + unit + " " + text


def counter(name: object, value: Any, unit: object = "bytes") -> None:
    """Writes ``value`` of counter ``name`` into the running recording now:
    ``swapsight.counter("queue", len(q), unit="items")``. Without a
    recording it does nothing; a bad value or unit is dropped and logged
    once. Never raises, never blocks."""
    path = mark_path()
    if not path:
        return
    try:
        line = counter_line(name, value, unit)
    except Exception as e:  # a float() or str() that raises
        _warn_once("swapsight: counter %r not written: %s", name, e)
        return
    if line is None:
        _warn_once(
            "swapsight: counter %r not written: the name is empty, the unit %r is "
            "not 1 to 16 of A-Z a-z 0-9 _ %% / . -, or the value %r is not a "
            "finite number within 2**53",
            name,
            unit,
            value,
        )
        return
    write_line(path, line)


#: The sampling interval of watch_torch() unless told: 2 Hz.
TORCH_INTERVAL = 0.5
#: The range of a sampler's interval, in seconds. At least 0.1: a sample is a
#: few counters, and the recorder keeps 50 a second. At most an hour: longer
#: is no sampling, and far longer overflows the thread's wait.
MIN_INTERVAL = 0.1
MAX_INTERVAL = 3600.0

_lock = threading.Lock()
_running: Optional["TorchWatch"] = None


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


class TorchWatch:
    """What :func:`watch_torch` returned: ``.stop()`` ends it (also as a
    context manager), ``.running`` says whether its thread still samples."""

    def __init__(self, interval: float, path: Optional[Union[str, bytes]]) -> None:
        self.interval = sampling_interval(interval, "swapsight.watch_torch")
        self._path = path
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
            target=self._run, name="swapsight-watch-torch", daemon=True
        )
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 2.0) -> None:
        """Stops sampling; waits up to ``timeout`` seconds for the thread."""
        global _running
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        with _lock:
            if _running is self:
                _running = None

    def __enter__(self) -> "TorchWatch":
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.stop()
        return False

    def _run(self) -> None:
        global _running
        said: Set[str] = set()
        failed = False
        while not self._stop.is_set():
            if self._registration and not os.path.exists(self._registration):
                break
            # Only a torch the program imported itself: never imported here.
            torch = sys.modules.get("torch")
            if torch is not None and not failed:
                try:
                    for name, value in _torch_figures(torch, said):
                        line = counter_line(name, value, "bytes")
                        if line is not None and self._path:
                            write_line(self._path, line)
                except Exception as e:
                    failed = True
                    _warn_once("swapsight: watch_torch stopped reading torch: %s", e)
            self._stop.wait(self.interval)
        with _lock:
            if _running is self:
                _running = None


def watch_torch(interval: Optional[float] = None) -> TorchWatch:
    """Samples what the PyTorch allocator holds into the running recording
    on a daemon thread, every ``interval`` seconds (default 0.5; from 0.1 to
    3600, else ValueError): on MPS ``torch.mps.current_allocated_memory()`` and
    ``driver_allocated_memory()`` (and ``recommended_max_memory()`` once), on
    CUDA ``memory_allocated(i)`` and ``memory_reserved(i)`` per device. Only
    once the program has imported torch itself (it is never imported here);
    it stops with the recording or on ``.stop()``. One watch at a time: a
    second call returns the running one. Without a recording it starts
    nothing. Raises only ValueError, for a bad interval (also without a
    recording: the mistake shows before the run that needs it)."""
    global _running
    every = sampling_interval(
        TORCH_INTERVAL if interval is None else interval, "swapsight.watch_torch"
    )
    with _lock:
        if _running is not None and _running.running:
            return _running
        path = mark_path()
        watch = TorchWatch(every, path)
        if not path:
            return watch
        try:
            watch._start()
        except Exception as e:  # no thread to be had
            _warn_once("swapsight: watch_torch could not start: %s", e)
            return watch
        _running = watch
        return watch
