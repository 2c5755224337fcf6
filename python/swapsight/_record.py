"""record(), compare() and advise(): recordings and their reports from
Python, built on the ``swapsight`` command this package installed.

``record()`` runs ``swapsight record --pid <this process> --print-mark-path``
(the recorder watches this process and its children), puts the mark path it
prints in ``$SWAPSIGHT_MARK`` so that this process's phases and counters (and
its children's: they inherit the variable) reach it, and on ``stop()`` ends
it with SIGINT, as Ctrl-C would, and reads ``swapsight report --json``. The
recorder never outlives the program: ``stop()`` runs at exit, and a recorder
whose process is gone (the kernel died, the notebook restarted) ends by itself.

What the CLI says in JSON (``report --json``, ``compare --format json``,
``advise --json``) is what these functions return: one source for the figures.
"""

import atexit
import html
import json
import os
import select
import signal
import subprocess
import tempfile
import time

from ._counter import watch_torch
from ._writer import ENV_VAR, _log


class Error(Exception):
    """What swapsight says when it cannot do what was asked: the recording
    cannot start (the folder is not writable, the command is missing), a
    trace cannot be read. The message is the command line's own one line."""


#: How long start() waits for the recorder to say it records.
START_TIMEOUT = 30.0
#: How long stop() waits for the recorder to finish its trace.
STOP_TIMEOUT = 15.0


def _binary():
    from .__main__ import find_binary

    binary = find_binary()
    if binary is None:
        raise Error(
            "the swapsight command is not installed beside this Python nor on "
            "PATH; reinstall the swapsight package"
        )
    return binary


def _first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _env():
    """This environment without a mark path: the recorder makes its own."""
    env = dict(os.environ)
    env.pop(ENV_VAR, None)
    return env


def _run(args, what):
    """Runs ``swapsight ARGS``; its stdout, or Error with its one line."""
    try:
        done = subprocess.run(
            [_binary()] + [os.fspath(a) for a in args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise Error("cannot run swapsight %s: %s" % (what, e)) from None
    if done.returncode != 0:
        raise Error(
            _first_line(done.stderr)
            or "swapsight %s failed (exit code %d)" % (what, done.returncode)
        )
    return done.stdout


def _run_json(args, what):
    out = _run(args, what)
    try:
        return json.loads(out)
    except ValueError as e:
        raise Error("swapsight %s printed no JSON: %s" % (what, e)) from None


def compare(traces, labels=None):
    """``swapsight compare TRACE… --format json``: one row per run, as a
    dict (``{"runs": [...], ...}``). ``labels`` names the runs."""
    args = ["compare"] + [os.fspath(t) for t in traces]
    for label in labels or ():
        args += ["--label", str(label)]
    return _run_json(args + ["--format", "json"], "compare")


def advise(trace=None, reserve=None, recommended_max=None):
    """``swapsight advise [TRACE] --json``: the PyTorch MPS watermark ratios
    that make a job fail before the Mac swaps, as a dict. ``reserve`` and
    ``recommended_max`` are sizes (``"8G"``) or bytes."""
    args = ["advise"]
    if trace is not None:
        args.append(os.fspath(trace))
    if reserve is not None:
        args += ["--reserve", str(reserve)]
    if recommended_max is not None:
        args += ["--recommended-max", str(recommended_max)]
    return _run_json(args + ["--json"], "advise")


class Report:
    """A run's report: ``swapsight report --json`` of its trace.

    ``.verdict`` (``"fits"``, ``"overflow"``, ``"false-fit"``,
    ``"hidden-memory"``), ``.phases`` and ``.processes`` (lists of dicts, as
    in the JSON), ``.counters``, ``.to_dict()``, ``.to_pandas()``,
    ``.plot(path)``; ``str()`` is the report as ``swapsight report`` prints
    it, and Jupyter shows a table and the chart.
    """

    def __init__(self, data, trace):
        self._data = data
        self.trace = os.fspath(trace)
        self._text = None

    @classmethod
    def of(cls, trace):
        """The report of a trace file."""
        return cls(_run_json(["report", "--json", trace], "report"), trace)

    @property
    def verdict(self):
        return self._data.get("verdict")

    @property
    def phases(self):
        return list(self._data.get("phases", []))

    @property
    def processes(self):
        return list(self._data.get("processes", []))

    @property
    def counters(self):
        return list(self._data.get("counters", []))

    def to_dict(self):
        """The whole report, as ``swapsight report --json`` prints it."""
        return json.loads(json.dumps(self._data))

    def to_pandas(self, table="phases"):
        """``table`` (``"phases"``, ``"processes"`` or ``"counters"``) as a
        pandas DataFrame. Needs pandas (not a dependency of swapsight)."""
        if table not in ("phases", "processes", "counters"):
            raise ValueError("table is 'phases', 'processes' or 'counters', not %r" % (table,))
        try:
            import pandas
        except ImportError:
            raise Error("to_pandas() needs pandas: pip install pandas") from None
        return pandas.DataFrame(self._data.get(table, []))

    def plot(self, path, processes=None, size=None):
        """Draws the run (``swapsight plot``) to ``path`` (``.png`` or
        ``.svg``); returns ``path``."""
        args = ["plot", self.trace, "-o", path]
        if processes is not None:
            args += ["--processes", str(processes)]
        if size is not None:
            args += ["--size", "%dx%d" % tuple(size)]
        _run(args, "plot")
        return path

    @property
    def text(self):
        """The report as ``swapsight report`` prints it."""
        if self._text is None:
            self._text = _run(["report", self.trace], "report")
        return self._text

    def __str__(self):
        try:
            return self.text
        except Error as e:
            return "swapsight report of %s: %s" % (self.trace, e)

    def __repr__(self):
        return "<swapsight.Report %s: %s, %d phases, %d processes>" % (
            self.trace,
            self.verdict,
            len(self.phases),
            len(self.processes),
        )

    def _repr_html_(self):
        esc = lambda v: html.escape(str(v), quote=True)  # noqa: E731
        out = [
            "<div><p><b>%s</b> &mdash; %s</p>"
            % (esc(str(self.verdict).upper()), esc(self._data.get("summary", "")))
        ]
        rows = self.phases
        if rows:
            out.append(
                "<table><tr><th>phase</th><th>start s</th><th>duration s</th>"
                "<th>peak footprint</th><th>swap growth</th><th>min free %</th>"
                "<th>counters</th><th>verdict</th></tr>"
            )
            for r in rows:
                counters = "; ".join(
                    "%s peak %s %s" % (c.get("name"), c.get("peak"), c.get("unit"))
                    for c in r.get("counters", [])
                )
                out.append(
                    "<tr><td>%s</td><td>%.1f</td><td>%.1f</td><td>%s</td><td>%s</td>"
                    "<td>%.0f</td><td>%s</td><td>%s</td></tr>"
                    % (
                        esc(r.get("name")),
                        r.get("start_ms", 0) / 1000,
                        r.get("duration_ms", 0) / 1000,
                        esc(_size(r.get("peak_footprint_bytes", 0))),
                        esc(_size(r.get("swap_growth_bytes", 0))),
                        r.get("min_free_pct", 0),
                        esc(counters),
                        esc(r.get("verdict")),
                    )
                )
            out.append("</table>")
        out.append(
            "<table><tr><th>process</th><th>pid</th><th>peak footprint</th>"
            "<th>swap growth</th><th>verdict</th></tr>"
        )
        for p in self.processes:
            out.append(
                "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                % (
                    esc(p.get("name")),
                    esc(p.get("pid")),
                    esc(_size(p.get("peak_footprint_bytes", 0))),
                    esc(_size(p.get("swap_growth_bytes", 0))),
                    esc(p.get("verdict")),
                )
            )
        out.append("</table>")
        chart = self._svg()
        if chart:
            out.append(chart)
        out.append("</div>")
        return "".join(out)

    def _svg(self):
        """The chart as inline SVG (swapsight's own, escaped as it draws
        it), or "" when it cannot be drawn."""
        try:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "run.svg")
                self.plot(path)
                with open(path, encoding="utf-8") as f:
                    svg = f.read()
        except Exception as e:
            _log.debug("swapsight: no chart for %s: %s", self.trace, e)
            return ""
        start = svg.find("<svg")
        return svg[start:] if start >= 0 else ""


def _size(b):
    try:
        b = float(b)
    except (TypeError, ValueError):
        return str(b)
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(b) >= div:
            return "%.1f %s" % (b / div, unit)
    return "%d B" % b


def _describe(returncode):
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
    ``torch=True`` also runs :func:`watch_torch` while recording.
    """

    def __init__(self, path=None, interval="500ms", top=10, torch=False):
        if path is None:
            path = time.strftime("swapsight-%Y%m%d-%H%M%S.jsonl")
        self.path = os.path.abspath(os.fspath(path))
        self.interval = interval
        self.top = top
        self.torch = torch
        self.report = None
        self.error = None
        #: The recorder's pid while it runs.
        self.recorder_pid = None
        self._proc = None
        self._stderr = None
        self._old_mark = None
        self._watch = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
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
            str(self.interval),
            "--top",
            str(self.top),
            "--print-mark-path",
        ]
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
            proc.stdout.close()
            why = self._stderr_line() or "the recorder did not start (%s)" % _describe(
                proc.returncode
            )
            raise Error(why)
        self._proc = proc
        self.recorder_pid = proc.pid
        self.report = None
        self.error = None
        if line:
            self._old_mark = os.environ.get(ENV_VAR)
            os.environ[ENV_VAR] = line
        atexit.register(self.stop)
        if self.torch:
            self._watch = watch_torch()
        return self

    def _first_line_of(self, proc):
        """The line the recorder prints once it records ("" without marks);
        None when it ended first or took too long."""
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

    def _stderr_line(self):
        """The recorder's last word on stderr (its error line)."""
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode("utf-8", "replace")
        except Exception:
            return ""
        lines = [l.strip() for l in text.replace("\r", "\n").splitlines()]
        lines = [l for l in lines if l and not l.startswith("\x1b")]
        for l in reversed(lines):
            if "error" in l or "cannot" in l:
                return l
        return lines[-1] if lines else ""

    def stop(self):
        """Ends the recording (if it runs) and returns the :class:`Report`
        (None when the trace has nothing to judge; then ``.error`` says
        why). Never raises."""
        proc = self._proc
        if proc is None:
            return self.report
        self._proc = None
        try:
            return self._stop(proc)
        except Exception as e:  # never into the pipeline
            self.error = self.error or "stopping the recorder: %s" % e
            _log.warning("swapsight: %s", self.error)
            return self.report

    def _stop(self, proc):
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass
        if self._watch is not None:
            self._watch.stop()
            self._watch = None
        if self._old_mark is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = self._old_mark
        self._old_mark = None
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
        proc.stdout.close()
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
