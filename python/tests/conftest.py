"""Shared helpers: the installed package (never the source tree), a fake
recorder (a plain mark file) and a real recording run by the installed CLI."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def installed_binary():
    """The swapsight binary the wheel put beside this interpreter."""
    path = Path(sysconfig.get_path("scripts")) / "swapsight"
    assert path.is_file(), f"the wheel's binary is not at {path}"
    return str(path)


def wheel_path():
    """The wheel under test (scripts/test sets $SWAPSIGHT_WHEEL)."""
    path = os.environ.get("SWAPSIGHT_WHEEL")
    if not path:
        pytest.skip("SWAPSIGHT_WHEEL is not set (scripts/test sets it to scripts/wheel's wheel)")
    return path


def crate_version():
    """[workspace.package] version of the Cargo workspace."""
    section = None
    for line in (REPO / "Cargo.toml").read_text().splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[workspace.package]" and line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    raise AssertionError("no [workspace.package] version in Cargo.toml")


def counters_in(lines):
    """(name, value, unit) of each ``#counter`` line among mark file lines."""
    out = []
    for line in lines:
        if line.startswith("#counter "):
            value, unit, name = line[len("#counter "):].split(" ", 2)
            out.append((name, float(value), unit))
    return out


def wait_for(cond, timeout=5.0):
    """Whether ``cond()`` came true within ``timeout`` seconds."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if cond():
            return True
        time.sleep(0.02)
    return False


def record(tmp_path, script, timeout=120):
    """Runs ``script`` (Python source) under the installed
    ``swapsight record -o t.jsonl -- python script.py``; returns the trace's
    mark lines (dicts) and the completed process."""
    path = tmp_path / "script.py"
    path.write_text(script)
    trace = tmp_path / "t.jsonl"
    env = dict(os.environ)
    env.pop("SWAPSIGHT_MARK", None)
    done = subprocess.run(
        [installed_binary(), "record", "-o", str(trace), "--", sys.executable, str(path)],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    marks = []
    for line in trace.read_text().splitlines():
        item = json.loads(line)
        if item.get("type") == "mark":
            marks.append(item)
    return marks, done


@pytest.fixture
def mark_file(tmp_path, monkeypatch):
    """A fake recorder: $SWAPSIGHT_MARK names a file; read_lines() returns
    the lines written so far."""
    import swapsight._writer

    path = tmp_path / "mark"
    monkeypatch.setenv("SWAPSIGHT_MARK", str(path))
    monkeypatch.setattr(swapsight._writer, "_warned", False)
    monkeypatch.setattr(swapsight._writer, "_said", set())

    class Marks:
        def __init__(self):
            self.path = path

        def read_lines(self):
            if not path.exists():
                return []
            return path.read_text(encoding="utf-8").splitlines()

    return Marks()


@pytest.fixture
def no_recorder(monkeypatch):
    import swapsight._writer

    monkeypatch.delenv("SWAPSIGHT_MARK", raising=False)
    monkeypatch.setattr(swapsight._writer, "_warned", False)
    monkeypatch.setattr(swapsight._writer, "_said", set())


def which_python(version):
    return shutil.which(version)


def in_ci():
    """CI=true (or 1): tests that need root and real swap must run."""
    return os.environ.get("CI") in ("true", "1")


def pinned_import(name, pins, install):
    """The module ``name``, the real one; skipped outside CI when it does
    not import, failed under CI=true (python/requirements-test.txt pins
    ``pins`` in the test venv; ``install`` is what a developer runs)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        if in_ci():
            pytest.fail(
                "%s must be tested in CI, but %s does not import: %s "
                "(python/requirements-test.txt pins %s)" % (name, name, e, pins)
            )
        pytest.skip("no %s here (pip install %s), skipped outside CI: %s" % (name, install, e))


#: crates/testkit/src/realswap.rs: SWAP_LOCK_FILE and SWAP_LOCK_HELD_BY_ENV.
SWAP_LOCK = "/var/tmp/swapsight-test-swap.lock"
SWAP_LOCK_HELD_BY = "SWAPSIGHT_SWAP_LOCK_HELD_BY"


@pytest.fixture(scope="module")
def quiet_memory():
    """The machine's memory to this module alone: the testkit's swap lock,
    which the Rust tests that judge system-wide figures hold (a freed copy
    is not hidden memory: the kernel's anonymous memory must fall with the
    footprint). A module whose tests allocate hundreds of MiB or start a
    browser takes it, so that its memory never lands in their windows
    (once, in CI, another lane's allocations made a freed 768 MiB copy look
    477 MiB hidden). The realswap helpers its tests start are told it is
    theirs (their parent's pid), or they would wait on it forever."""
    import fcntl

    fd = os.open(SWAP_LOCK, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.environ[SWAP_LOCK_HELD_BY] = str(os.getpid())
        yield
    finally:
        os.environ.pop(SWAP_LOCK_HELD_BY, None)
        os.close(fd)


@pytest.fixture
def real_swap():
    """A swap file and a memory cgroup capped at 256 MiB that may swap: see
    ``_real_swap``."""
    yield from _real_swap("2048", "256")


@pytest.fixture
def real_swapless_cgroup():
    """A memory cgroup capped at 256 MiB that may not swap (its swap limit
    0), over the same swap file: see ``_real_swap``."""
    yield from _real_swap("2048", "256", "no-cgroup-swap")


def _real_swap(*args):
    """A swap file and a capped memory cgroup, made and removed by the
    testkit's ``swapsight-realswap`` (crates/testkit/src/bin: the same
    set-up as the Rust real-swap tests), whose path scripts/test puts in
    $SWAPSIGHT_REALSWAP. Yields ``{"cgroup", "version", "swapfile"}``.
    Outside CI a machine that cannot do it skips the test; under CI=true
    it fails."""
    helper = os.environ.get("SWAPSIGHT_REALSWAP")
    why = None
    if os.geteuid() != 0:
        why = "not root"
    elif not helper or not os.access(helper, os.X_OK):
        why = ("no swapsight-realswap helper at $SWAPSIGHT_REALSWAP "
               f"({helper!r}; scripts/test builds it)")
    if why:
        if in_ci():
            pytest.fail(f"real-swap tests must run in CI, but: {why}")
        pytest.skip(f"real-swap test skipped outside CI: {why}")
    proc = subprocess.Popen(
        [helper, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if not line:
        code = proc.wait()
        err = proc.stderr.read().strip()
        if code == 3 and not in_ci():
            pytest.skip(f"real-swap test skipped outside CI: {err}")
        pytest.fail(f"swapsight-realswap could not set up real swap (exit {code}): {err}")
    try:
        yield json.loads(line)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
