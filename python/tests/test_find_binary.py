"""Which swapsight command `python -m swapsight` and record()/compare()/
advise() run: only the one pip installed with this package (beside it for
`pip install --target` and `--prefix`, in the environment's or the user's
scripts), never one found on PATH — another version, or a `./swapsight` an
empty PATH entry stands for."""

import glob
import os
import subprocess
import sys

import pytest

import swapsight
from conftest import crate_version, wheel_path

# An empty entry is the current directory to shutil.which and to exec*p.
PLANTED_PATH = "/usr/bin:/bin:"


def planted(directory):
    """A `swapsight` in ``directory`` that leaves a file behind if it is
    ever run; returns that file's path."""
    directory.mkdir(parents=True, exist_ok=True)
    ran = directory / "planted-ran"
    fake = directory / "swapsight"
    fake.write_text('#!/bin/sh\ntouch "%s"\necho "{}"\n' % ran)
    fake.chmod(0o755)
    return ran


def test_path_is_never_searched_and_the_error_names_every_place(tmp_path, monkeypatch, capsys):
    import swapsight.__main__ as main

    work, on_path = tmp_path / "work", tmp_path / "on-path"
    ran = [planted(work), planted(on_path)]
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", "%s:%s" % (on_path, PLANTED_PATH))
    monkeypatch.setattr(main.sysconfig, "get_path", lambda *a, **k: str(tmp_path / "scripts"))
    site = tmp_path / "p" / "lib" / "python3.11" / "site-packages"
    # raising=False: the code before this fix had no such function, and
    # should fail below, on what it found.
    monkeypatch.setattr(main, "_package_dir", lambda: str(site / "swapsight"), raising=False)
    assert main.find_binary() is None
    tried = [
        tmp_path / "p" / "bin" / "swapsight",  # pip install --prefix
        site / "bin" / "swapsight",  # pip install --target
        tmp_path / "scripts" / "swapsight",  # the environment's, the user's
    ]
    assert main.main() == 127
    err = capsys.readouterr().err
    assert err.startswith("swapsight: ") and err.count("\n") == 1, err
    with pytest.raises(swapsight.Error) as e:
        swapsight.compare([tmp_path / "a.jsonl"])
    for message in (err, str(e.value)):
        places = [str(p) for p in tried]
        assert all(p in message for p in places), (places, message)
        assert [message.index(p) for p in places] == sorted(message.index(p) for p in places)
        assert "PATH" in message
    assert not any(r.exists() for r in ran)


def base_python(tmp_path):
    """The interpreter this venv was made from, with a user scheme of its
    own: its scripts hold no swapsight, so only the lookup beside the
    package can find one."""
    python = getattr(sys, "_base_executable", None) or sys.executable
    env = dict(os.environ, PYTHONUSERBASE=str(tmp_path / "user"), PYTHONNOUSERSITE="1")
    env.pop("SWAPSIGHT_MARK", None)
    env.pop("PYTHONPATH", None)
    scripts = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('scripts'))"],
        capture_output=True, text=True, check=True, env=env, timeout=60,
    ).stdout.strip()
    if os.path.exists(os.path.join(scripts, "swapsight")):
        pytest.skip("%s has a swapsight in its scripts (%s)" % (python, scripts))
    return python, env


def pip_install(how, into):
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         # --ignore-installed: this venv has swapsight already, and pip
         # would leave a --prefix install at that.
         "--no-deps", "--no-index", "--ignore-installed", how, str(into), wheel_path()],
        check=True, timeout=300,
    )
    found = glob.glob(str(into / "**" / "swapsight" / "__init__.py"), recursive=True)
    assert len(found) == 1, found
    return os.path.dirname(os.path.dirname(found[0]))


@pytest.mark.parametrize("how", ["--target", "--prefix"])
def test_a_target_or_prefix_install_runs_its_own_binary_never_a_planted_one(tmp_path, how):
    wheel_path()
    python, env = base_python(tmp_path)
    into = tmp_path / "install"
    env["PYTHONPATH"] = pip_install(how, into)
    binary = str(into / "bin" / "swapsight")
    assert os.access(binary, os.X_OK), "pip put the binary elsewhere"
    work = tmp_path / "work"
    ran = planted(work)
    env["PATH"] = PLANTED_PATH

    def run(*args):
        done = subprocess.run(
            [python] + list(args), cwd=str(work), env=env,
            capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run("-c", "import swapsight.__main__ as m; print(m.find_binary())") == binary
    assert run("-m", "swapsight", "--version") == "swapsight " + crate_version()
    compare = (
        "import swapsight\n"
        "try:\n"
        "    swapsight.compare(['missing.jsonl', 'missing-too.jsonl'])\n"
        "except swapsight.Error as e:\n"
        "    print(e)\n"
    )
    assert "missing.jsonl" in run("-c", compare)
    assert not ran.exists(), "the planted ./swapsight ran"
