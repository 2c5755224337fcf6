"""Appends mark lines to the file named by $SWAPSIGHT_MARK.

The rules of crates/core/src/record/marks.rs `write_mark`: the file is opened
``O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOFOLLOW`` (never blocks on a
FIFO, never writes through a link), taken only when it is a regular file,
and each line goes out in one ``write()`` of at most a few hundred bytes, so
lines from threads and processes never interleave. The recorder renames the
file away each time it reads it, so it is opened anew for every line.

Nothing here raises: a failure is logged once through :mod:`logging`
(logger ``"swapsight"``) and the line is dropped.
"""

import logging
import os
import stat
from typing import Any, Callable, Optional, Union

from ._generated import ENV_VAR

_log = logging.getLogger("swapsight")
_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_warned = False


def _warn_once(message: str, *args: Any) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    try:
        _log.warning(
            message + " (phase marks are skipped; logged once)", *args
        )
    except Exception:  # a broken logging setup must not reach the pipeline
        pass


def _environ_lookup() -> Callable[[], Optional[Union[str, bytes]]]:
    """A cheap read of $SWAPSIGHT_MARK: os.environ.get() costs a few hundred
    nanoseconds (key and value encoded each time), so CPython's own mapping
    behind os.environ (kept in step by os.environ's setters) is read when
    there is one. Returns a function of no argument."""
    try:
        data = os.environ._data  # type: ignore[attr-defined]
        key = os.environ.encodekey(ENV_VAR)
        data.get(key)
    except Exception:
        return lambda: os.environ.get(ENV_VAR)
    return lambda: data.get(key)


#: The mark file of the recording this process runs under (str or bytes), or
#: None / empty. Bound to os.environ as it was at import.
mark_path = _environ_lookup()


def write_line(path: Union[str, bytes], line: str) -> bool:
    """Appends ``line`` (already clean, without newline) to ``path``.
    Returns whether it was written; never raises."""
    try:
        data = (line + "\n").encode("utf-8", "replace")
        fd = os.open(path, _FLAGS, 0o600)
    except Exception as e:  # OSError, or a path with a NUL byte
        _warn_once("swapsight: cannot open the mark file %r: %s", path, e)
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _warn_once("swapsight: the mark path %r is not a regular file", path)
            return False
        written = os.write(fd, data)
        if written != len(data):
            _warn_once("swapsight: a mark was cut short in %r", path)
            return False
        return True
    except Exception as e:
        _warn_once("swapsight: cannot write the mark file %r: %s", path, e)
        return False
    finally:
        try:
            os.close(fd)
        except Exception:
            pass
