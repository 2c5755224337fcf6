"""The test's line that was running when its process's memory peaked: a
cheap look at the test thread's stack, for swapsight's pytest plugin to
name beside a broken footprint_limit (as pytest-memray names the line that
allocated). The recorder measures the whole tree; this looks at the test
process alone, so it names a line only where that process grew."""

import os
import resource
import sys
import threading
from typing import Optional, Tuple

#: How often the stack is looked at.
_INTERVAL = 0.05


def _resident() -> Optional[int]:
    """The process's resident anonymous memory (Linux: statm's resident less
    shared, RssAnon), or its peak resident set elsewhere (macOS's
    ru_maxrss, bytes): either rises when the test takes new memory."""
    try:
        with open("/proc/self/statm", "rb") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (OSError, ValueError):
        return None
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


class PeakLine:
    """Watches one test: ``stop()`` says ``file:line`` of the test's own
    file that was running at the highest memory seen, or None."""

    def __init__(self, path: str) -> None:
        self._path = os.path.realpath(path)
        self._thread_id = threading.get_ident()
        self._done = threading.Event()
        self._best: Tuple[int, Optional[str]] = (-1, None)
        self._watcher = threading.Thread(target=self._run, name="swapsight-peak-line", daemon=True)

    def start(self) -> "PeakLine":
        self._watcher.start()
        return self

    def stop(self) -> Optional[str]:
        self._done.set()
        self._watcher.join(timeout=1.0)
        return self._best[1]

    def _run(self) -> None:
        while not self._done.wait(_INTERVAL):
            try:
                self._look()
            except Exception:  # a look that fails names no line
                return

    def _look(self) -> None:
        now = _resident()
        if now is None or now <= self._best[0]:
            return
        frame = sys._current_frames().get(self._thread_id)
        line = None
        while frame is not None:
            code = frame.f_code
            if os.path.realpath(code.co_filename) == self._path:
                line = "%s:%d" % (os.path.basename(self._path), frame.f_lineno)
                break
            frame = frame.f_back
        self._best = (now, line or self._best[1])
