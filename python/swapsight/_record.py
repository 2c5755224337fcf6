"""record(): a recording of this process from inside it, built on the
``swapsight`` command this package installed.

``record()`` runs ``swapsight record --pid <this process> --print-mark-path``
(the recorder watches this process and its children), puts the mark path it
prints in ``$SWAPSIGHT_MARK`` so that this process's phases and counters (and
its children's: they inherit the variable) reach it, and on ``stop()`` ends
it with SIGINT, as Ctrl-C would, and reads ``swapsight report --json``. The
recorder never outlives the program: ``stop()`` runs at exit, and a recorder
whose process is gone (the kernel died, the notebook restarted) ends by itself.
"""

import atexit
import numbers
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from typing import IO, Any, Dict, List, Literal, Optional, Tuple, Union

from ._cli import Error, _binary, _env
from ._generated import ENV_VAR
from ._report import Report
from ._watch import MlxWatch, TorchWatch, Watch, _start_watch
from ._writer import _log

#: How long start() waits for the recorder to say it records.
START_TIMEOUT = 30.0
#: How long stop() waits for the recorder to finish its trace.
STOP_TIMEOUT = 15.0


# $SWAPSIGHT_MARK is one per process, while recordings (nested blocks,
# threads) may start and stop in any order: the recordings routed to, oldest
# first, as (recording, mark path), and what the variable held before them.
_routes: List[Tuple["record", str]] = []
_before_routes: Optional[str] = None
_routes_lock = threading.Lock()
# The traces this process's recordings write, by real path: two recorders
# appending to one trace interleave their lines into a file neither can
# read back. (Another process's recorder is the command line's to refuse.)
_writing: Dict[str, "record"] = {}


def _claim(rec: "record") -> str:
    """Takes ``rec``'s trace for it; raises Error when a recording of this
    process, not stopped yet, writes it."""
    key = os.path.realpath(rec.path)
    with _routes_lock:
        other = _writing.get(key)
        if other is not None and other is not rec:
            raise Error(
                "cannot record to %s: another recording in this process writes it "
                "until its stop() (a record() inside another to the same path)" % rec.path
            )
        _writing[key] = rec
    return key


def _release(rec: "record") -> None:
    with _routes_lock:
        for key in [k for k, r in _writing.items() if r is rec]:
            del _writing[key]


def _route_marks(rec: "record", path: str) -> None:
    """Sends this process's marks to ``path``, ``rec``'s mark file."""
    global _before_routes
    with _routes_lock:
        if not _routes:
            _before_routes = os.environ.get(ENV_VAR)
        _routes.append((rec, path))
        os.environ[ENV_VAR] = path


def _unroute_marks(rec: "record") -> None:
    """Gives the marks back when $SWAPSIGHT_MARK still names ``rec``'s mark
    file: to the newest recording still running, else to what held it before
    the first. Marks someone else routed since stay where they go."""
    with _routes_lock:
        mine = [path for r, path in _routes if r is rec]
        _routes[:] = [(r, path) for r, path in _routes if r is not rec]
        if not mine or os.environ.get(ENV_VAR) != mine[0]:
            return
        back = _routes[-1][1] if _routes else _before_routes
        if back is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = back


#: The recorder's range of intervals, in seconds (MIN_INTERVAL and
#: MAX_INTERVAL in crates/cli/src/args.rs): a number outside it is refused
#: here, in seconds as it was given, not as the milliseconds passed on.
MIN_SECONDS = 0.01
MAX_SECONDS = 3600.0


def _interval_arg(interval: object) -> str:
    """``--interval``'s argument for ``interval``: a string as it is (the
    recorder says what is wrong with it), a number of seconds in
    milliseconds. Raises TypeError or ValueError naming it."""
    if isinstance(interval, str):
        return interval
    if isinstance(interval, bool) or not isinstance(interval, numbers.Real):
        raise TypeError(
            "swapsight.record: the interval %r is neither a number of seconds nor a "
            "duration like '500ms'" % (interval,)
        )
    seconds = float(interval)
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:  # NaN too
        raise ValueError(
            "swapsight.record: the interval %r is not a number of seconds from %g to %g"
            % (interval, MIN_SECONDS, MAX_SECONDS)
        )
    return "%.3fms" % (seconds * 1000)


def _describe(returncode: Optional[int]) -> str:
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "signal %d" % -returncode
        return "killed by %s" % name
    return "exit code %s" % returncode


class record:
    """Records this process and its children from inside the script or
    notebook::

        with swapsight.record("run.jsonl") as rec:
            run_pipeline()
        print(rec.report.verdict)

    or ``rec = swapsight.record("run.jsonl"); rec.start(); ...; rec.stop()``.
    ``start()`` raises :class:`Error` when the recording cannot start (the
    folder is missing or not writable, no swapsight command); after that
    nothing raises: ``stop()`` ends the recorder, sets ``.report`` (a
    :class:`Report`, or None when the trace has nothing to judge) and, when
    something went wrong (the recorder was killed), ``.error``, logged once.
    ``torch=True`` also runs :func:`watch_torch` while recording,
    ``mlx=True`` :func:`watch_mlx` (both may); each stops with the recording.
    Without ``path`` the trace is ``swapsight-YYYYMMDD-HHMMSS.jsonl`` in the
    current folder (``.path``). ``interval`` is a number of seconds (0.01 to
    3600) or the recorder's duration (``"250ms"``).
    """

    def __init__(
        self,
        path: Optional[Union[str, "os.PathLike[str]"]] = None,
        interval: Union[str, float] = "500ms",
        top: int = 10,
        torch: bool = False,
        mlx: bool = False,
    ) -> None:
        for name, flag in (("torch", torch), ("mlx", mlx)):
            # "yes" or "no" would both turn the watch on.
            if not isinstance(flag, bool):
                raise TypeError("swapsight.record: %s is True or False, not %r" % (name, flag))
        self._interval_arg = _interval_arg(interval)
        if path is None:
            path = time.strftime("swapsight-%Y%m%d-%H%M%S.jsonl")
        self.path: str = os.path.abspath(os.fspath(path))
        self.interval: Union[str, float] = interval
        self.top: int = top
        self.torch: bool = torch
        self.mlx: bool = mlx
        self.report: Optional[Report] = None
        self.error: Optional[str] = None
        #: The recorder's pid while it runs.
        self.recorder_pid: Optional[int] = None
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._stderr: Optional[IO[bytes]] = None
        self._watches: List[Watch] = []
        #: The process that started the recorder: only it may end it.
        self._owner: Optional[int] = None

    def __enter__(self) -> "record":
        self.start()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.stop()
        return False

    def start(self) -> "record":
        """Starts the recorder; returns ``self``. Raises :class:`Error` when
        it cannot record."""
        if self._proc is not None:
            raise Error("this recording is already running (%s)" % self.path)
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise Error("cannot record to %s: the folder %s does not exist" % (self.path, folder))
        if not os.access(folder, os.W_OK | os.X_OK):
            raise Error("cannot record to %s: the folder %s is not writable" % (self.path, folder))
        argv = [
            _binary(),
            "record",
            "--pid",
            str(os.getpid()),
            "-o",
            self.path,
            "--interval",
            self._interval_arg,
            "--top",
            str(self.top),
            "--print-mark-path",
        ]
        _claim(self)
        try:
            return self._start(argv)
        except BaseException:
            _release(self)
            raise

    def _start(self, argv: List[str]) -> "record":
        self._stderr = tempfile.TemporaryFile()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=_env(),
                # Ctrl-C at the terminal is for the program: the recorder is
                # stopped by stop(), after the program's last phase.
                start_new_session=True,
            )
        except OSError as e:
            raise Error("cannot start swapsight record: %s" % e) from None
        line = self._first_line_of(proc)
        if line is None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            why = self._stderr_line() or "the recorder did not start (%s)" % _describe(
                proc.returncode
            )
            raise Error(why)
        self._proc = proc
        self.recorder_pid = proc.pid
        self.report = None
        self.error = None
        self._owner = os.getpid()
        atexit.register(self.stop)
        if line:
            _route_marks(self, line)
            # This recording's own watches, on its mark path: never those of
            # a recording it runs inside, which go on after it.
            if self.torch:
                self._watches.append(_start_watch(TorchWatch, None, line))
            if self.mlx:
                self._watches.append(_start_watch(MlxWatch, None, line))
        return self

    def _first_line_of(self, proc: "subprocess.Popen[bytes]") -> Optional[str]:
        """The line the recorder prints once it records ("" without marks);
        None when it ended first or took too long."""
        assert proc.stdout is not None  # stdout=PIPE
        fd = proc.stdout.fileno()
        data = b""
        until = time.monotonic() + START_TIMEOUT
        while b"\n" not in data:
            left = until - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 0.1))
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    return None
                data += chunk
            elif proc.poll() is not None:
                return None
        return os.fsdecode(data.split(b"\n", 1)[0])

    def _stderr_line(self) -> str:
        """The recorder's last word on stderr (its error line)."""
        err = self._stderr
        if err is None:
            return ""
        try:
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
        except Exception:
            return ""
        lines = [l.strip() for l in text.replace("\r", "\n").splitlines()]
        lines = [l for l in lines if l and not l.startswith("\x1b")]
        for l in reversed(lines):
            if "error" in l or "cannot" in l:
                return l
        return lines[-1] if lines else ""

    def stop(self) -> Optional[Report]:
        """Ends the recording (if it runs) and returns the :class:`Report`
        (None when the trace has nothing to judge; then ``.error`` says
        why). In a child forked meanwhile it does nothing: only the process
        that started the recorder ends it. Never raises."""
        proc = self._proc
        # A child forked meanwhile has this object and its atexit call, but
        # the recorder is its parent's to end.
        if proc is None or self._owner != os.getpid():
            return self.report
        self._proc = None
        try:
            return self._stop(proc)
        except Exception as e:  # never into the pipeline
            self.error = self.error or "stopping the recorder: %s" % e
            _log.warning("swapsight: %s", self.error)
            return self.report

    def _stop(self, proc: "subprocess.Popen[bytes]") -> Optional[Report]:
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass
        watches, self._watches = self._watches, []
        for watch in watches:
            watch.stop()
        _unroute_marks(self)
        _release(self)
        problems = []
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                problems.append(
                    "the recorder (pid %d) did not stop within %.0f s and was killed"
                    % (proc.pid, STOP_TIMEOUT)
                )
            else:
                if proc.returncode not in (0, 130):
                    problems.append(
                        "the recorder (pid %d) failed (%s): %s"
                        % (proc.pid, _describe(proc.returncode), self._stderr_line())
                    )
        else:
            problems.append(
                "the recorder (pid %d) ended before stop() (%s)%s"
                % (
                    proc.pid,
                    _describe(proc.returncode),
                    ": " + self._stderr_line() if proc.returncode >= 0 else "",
                )
            )
        if proc.stdout is not None:
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
        self.recorder_pid = None
        try:
            self.report = Report.of(self.path)
        except Error as e:
            problems.append("no report: %s" % e)
        if problems:
            self.error = "; ".join(problems)
            _log.warning("swapsight: %s", self.error)
        return self.report
