"""Appends mark lines to the file named by $SWAPSIGHT_MARK.

The rules of crates/core/src/record/marks.rs `write_mark`: the file is opened
``O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOFOLLOW`` (never blocks on a
FIFO, never writes through a link), taken only when it is a regular file,
and each line goes out in one ``write()`` of at most a few hundred bytes, so
lines from threads and processes never interleave.

The file is held open between lines, so that a line is one ``write()``. The
recorder renames the file away each time it reads it, unlinks the new name,
and reads that file once more a round (50 ms) later, for a writer that held
it. So the held file is looked at (``fstat()``) before a line when it was
not looked at in the last :data:`CHECK_EVERY` seconds: it is written to
while it still has a name (``st_nlink``) and is the file opened (device and
inode: a descriptor number the program closed and opened another file on is
left alone from the next look on), else the path is opened anew. Lines in
a burst skip the look; one written more than CHECK_EVERY after the last
costs an ``fstat()`` too. One thread uses the held file at a time; another
thread, or a signal handler inside the writing one, writes its line through
a descriptor of its own, opened and closed for it, as every line once was.
A forked child opens its own.

Nothing here raises: a failure is logged once through :mod:`logging`
(logger ``"swapsight"``) and the line is dropped.
"""

import logging
import os
import stat
import threading
import time
from typing import Any, Callable, Optional, Set, Tuple, Union

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
#: The kinds of mistake already logged by warn_once().
_said: Set[str] = set()


def _warn_once(message: str, *args: Any) -> None:
    """Logs a problem with the mark file itself, once: after it, phase marks
    are skipped too, as the message says."""
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


def warn_once(kind: str, message: str, *args: Any) -> None:
    """Logs ``message`` the first time a mistake of ``kind`` happens. Each
    kind has its own once: a bad counter value must neither silence a later
    bad unit nor claim that phase marks are skipped (they are not)."""
    if kind in _said:
        return
    _said.add(kind)
    try:
        _log.warning(message + " (logged once)", *args)
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


Path = Union[str, bytes]

# The mark file held open: its path, descriptor, st_dev and st_ino (-1: none).
# Read and changed only by the thread holding _lock.
_held_path: Optional[Path] = None
_held_fd = -1
_held_dev = -1
_held_ino = -1
_lock = threading.Lock()
#: How long the held file is written to without a look at it (seconds): far
#: below the round after which the recorder reads a taken file no more
#: (LOOK_EVERY, 50 ms, in crates/core/src/record/marks/watch.rs), so a line
#: written within it of a look that found the file named is still read.
CHECK_EVERY = 0.002
# When the held file was last found named and ours (time.monotonic()).
_checked = float("-inf")
_monotonic = time.monotonic
_fstat = os.fstat
_write_fd = os.write


def _after_fork_in_child() -> None:
    # A thread of the parent may have held the lock at the fork: the child's
    # copy would stay taken. The child opens the file for itself: the
    # descriptor it inherited is closed now, before the child's own code
    # can close its number and open another file there.
    global _lock
    _lock = threading.Lock()
    _forget(True)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def write_line(path: Path, line: str) -> bool:
    """Appends ``line`` (already clean, without newline) to ``path``.
    Returns whether it was written; never raises."""
    global _checked
    try:
        data = (line + "\n").encode("utf-8", "replace")
    except Exception:  # not a str: a caller's bug, which never reaches the pipeline
        return False
    lock = _lock
    if not lock.acquire(False):
        return _write_once(path, data)
    try:
        if _held_path is path or _held_path == path:
            now = _monotonic()
            try:
                if now - _checked >= CHECK_EVERY:
                    st = _fstat(_held_fd)
                    if not (st.st_nlink and st.st_ino == _held_ino and st.st_dev == _held_dev):
                        return _reopen(path, data)
                    _checked = now
                if _write_fd(_held_fd, data) == len(data):
                    return True
                _warn_once("swapsight: a mark was cut short in %r", path)
                return False
            except Exception:  # closed behind our back, or the write failed
                pass
        return _reopen(path, data)
    finally:
        lock.release()


def _forget(close: bool) -> None:
    """No file is held any more; its descriptor is closed when ``close`` and
    it is still the file opened (else the number is not ours to close)."""
    global _held_path, _held_fd
    fd, _held_path, _held_fd = _held_fd, None, -1
    if close and fd >= 0:
        try:
            st = _fstat(fd)
            if st.st_ino == _held_ino and st.st_dev == _held_dev:
                os.close(fd)
        except Exception:
            pass


def _reopen(path: Path, data: bytes) -> bool:
    """``data`` through ``path`` opened anew and held from now on: the held
    file was taken by the recorder (no name left), is another path's, or is
    no more. Called with _lock held."""
    global _held_path, _held_fd, _held_dev, _held_ino, _checked
    _forget(True)
    opened = _open(path)
    if opened is None:
        return False
    fd, st = opened
    _held_path, _held_fd, _held_dev, _held_ino = path, fd, st.st_dev, st.st_ino
    _checked = _monotonic()
    return _write(fd, data, path)


def _write_once(path: Path, data: bytes) -> bool:
    """``data`` through a descriptor of its own, closed after."""
    opened = _open(path)
    if opened is None:
        return False
    try:
        return _write(opened[0], data, path)
    finally:
        _close(opened[0])


def _open(path: Path) -> "Optional[Tuple[int, os.stat_result]]":
    """``path`` opened for appending and its fstat, if it is a regular file;
    else None (logged once)."""
    try:
        fd = os.open(path, _FLAGS, 0o600)
    except Exception as e:  # OSError, or a path with a NUL byte
        _warn_once("swapsight: cannot open the mark file %r: %s", path, e)
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            return fd, st
        _warn_once("swapsight: the mark path %r is not a regular file", path)
    except Exception as e:
        _warn_once("swapsight: cannot read the mark file %r: %s", path, e)
    _close(fd)
    return None


def _write(fd: int, data: bytes, path: Path) -> bool:
    try:
        written = os.write(fd, data)
    except Exception as e:
        _warn_once("swapsight: cannot write the mark file %r: %s", path, e)
        return False
    if written != len(data):
        _warn_once("swapsight: a mark was cut short in %r", path)
        return False
    return True


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except Exception:
        pass
