"""The package as shipped: installed from the wheel, its version, its tag,
`python -m swapsight`, and `import swapsight` on the oldest and newest
Pythons of the machine."""

import glob
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import swapsight
from conftest import REPO, crate_version, installed_binary, wheel_path


def test_the_installed_wheel_is_tested_not_the_source_tree():
    site = Path(sysconfig.get_path("purelib")).resolve()
    assert Path(swapsight.__file__).resolve().parent == site / "swapsight"
    assert not str(Path(swapsight.__file__).resolve()).startswith(str(REPO / "python"))


def test_versions_are_the_crate_version():
    from importlib.metadata import version

    assert swapsight.__version__ == crate_version()
    assert version("swapsight") == crate_version()


def test_python_m_swapsight_version_is_the_crate_version():
    out = subprocess.run(
        [sys.executable, "-m", "swapsight", "--version"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    assert out.strip() == "swapsight " + crate_version()


def test_python_m_swapsight_runs_the_bundled_binary():
    from swapsight.__main__ import find_binary

    assert find_binary() == installed_binary()
    done = subprocess.run(
        [sys.executable, "-m", "swapsight", "mark", "--help"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0 and "SWAPSIGHT_MARK" in done.stdout


def test_the_swapsight_command_is_on_the_venv_path():
    assert os.path.dirname(installed_binary()) == os.path.dirname(sys.executable)


def test_the_wheel_is_one_py3_none_platform_wheel():
    path = wheel_path()
    name = os.path.basename(path)
    with zipfile.ZipFile(path) as z:
        wheel = z.read("swapsight-%s.dist-info/WHEEL" % crate_version()).decode()
        meta = z.read("swapsight-%s.dist-info/METADATA" % crate_version()).decode()
        names = z.namelist()
    tags = [l.split(":", 1)[1].strip() for l in wheel.splitlines() if l.startswith("Tag:")]
    assert len(tags) == 1, tags
    assert re.fullmatch(r"py3-none-(manylinux|musllinux|macosx)_\w+", tags[0]), tags
    assert name == "swapsight-%s-%s.whl" % (crate_version(), tags[0])
    assert "Requires-Python: >=3.9" in meta
    assert "Requires-Dist" not in meta  # no required dependency
    assert "swapsight-%s.data/scripts/swapsight" % crate_version() in names
    assert not [n for n in names if "/tests/" in n or n.startswith("tests/")]
    # Typed (PEP 561), and the pytest plugin registered where it is installed.
    assert "swapsight/py.typed" in names
    assert "swapsight/pytest_plugin.py" in names and "swapsight/_magic.py" in names
    with zipfile.ZipFile(path) as z:
        points = z.read("swapsight-%s.dist-info/entry_points.txt" % crate_version()).decode()
    assert "[pytest11]" in points and "swapsight=swapsight.pytest_plugin" in points.replace(" ", "")
    size = os.path.getsize(path)
    print("wheel %s: %.1f MiB" % (name, size / (1 << 20)))


def interpreters():
    """(label, path) of the oldest and newest Python >= 3.9 found: Debian's
    /usr/bin/python3 and pyenv's versions."""
    found = {}
    candidates = ["/usr/bin/python3"] + sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin/python3"))
    )
    for path in candidates:
        if not os.access(path, os.X_OK):
            continue
        try:
            out = subprocess.run(
                [path, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                capture_output=True, text=True, timeout=30,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if not out:
            continue
        version = tuple(int(x) for x in out.split("."))
        if version >= (3, 9) and version not in found:
            found[version] = path
    if not found:
        return []
    keys = sorted(found)
    picked = {keys[0], keys[-1]}
    if "/usr/bin/python3" in found.values():
        picked.add(next(k for k, v in found.items() if v == "/usr/bin/python3"))
    return [
        pytest.param("%d.%d.%d %s" % (k + (found[k],)), found[k], id="%d.%d.%d-%s" % (k + (found[k],)))
        for k in sorted(picked)
    ]


SMOKE = r"""
import os, sys, swapsight
assert swapsight.__file__.startswith(sys.argv[1]), swapsight.__file__
for _ in range(1000):
    with swapsight.phase("noop"):
        pass
os.environ["SWAPSIGHT_MARK"] = sys.argv[2]

@swapsight.phase("f")
def f():
    with swapsight.phase("g"):
        pass
f()
# An IntEnum's str() is "Level.HIGH" up to Python 3.10: the number is written.
import enum
class Level(enum.IntEnum):
    HIGH = 4
swapsight.counter("level", Level.HIGH)
print(open(sys.argv[2]).read().split("\n"))
"""


@pytest.mark.parametrize("label,python", interpreters())
def test_import_on_the_oldest_and_newest_python(tmp_path, label, python):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", str(target), wheel_path()],
        check=True, timeout=300,
    )
    env = dict(os.environ, PYTHONPATH=str(target), PYTHONNOUSERSITE="1")
    env.pop("SWAPSIGHT_MARK", None)
    out = subprocess.run(
        [python, "-c", SMOKE, str(target), str(tmp_path / "m")],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(["f", "f/g", "f", "/f", "#counter 4 bytes level", ""])
    print("import swapsight ran on", label)


def test_python_m_swapsight_passes_the_exit_code(tmp_path):
    # A trace nothing records: never another recording's mark file.
    done = subprocess.run(
        [sys.executable, "-m", "swapsight", "mark", "x", "--trace", str(tmp_path / "none.jsonl")],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "no running recording writes" in done.stderr


def test_the_pypi_page_names_only_what_the_package_has():
    """python/README.md (the PyPI page): every `swapsight.NAME` and
    `.ATTRIBUTE` of a recording or report it shows exists, and every
    subcommand it lists is one the installed command has."""
    page = (REPO / "python/README.md").read_text()
    names = set(re.findall(r"swapsight\.([A-Za-z_]\w*)", page))
    assert {"record", "phase", "counter", "watch_torch", "Report"} <= names, names
    missing = sorted(n for n in names if not hasattr(swapsight, n))
    assert not missing, missing
    for attr in set(re.findall(r"`rec\.(\w+)", page)):
        assert hasattr(swapsight.record(), attr), attr
    for attr in set(re.findall(r"`\.(\w+)\(?", page)):
        assert hasattr(swapsight.Report, attr), attr
    listed = re.search(r"command line \(([^)]*)", page).group(1)
    commands = [c.split()[0] for c in listed.replace("\n", " ").split(",")]
    assert len(commands) == 11 and commands[-1] == "doctor", commands
    for c in commands:
        done = subprocess.run(
            [installed_binary(), c, "--help"], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (c, done.stderr)
