"""Shared helpers: the installed package (never the source tree), a fake
recorder (a plain mark file) and a real recording run by the installed CLI."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def installed_binary():
    """The swapsight binary the wheel put beside this interpreter."""
    path = Path(sysconfig.get_path("scripts")) / "swapsight"
    assert path.is_file(), f"the wheel's binary is not at {path}"
    return str(path)


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


def which_python(version):
    return shutil.which(version)
