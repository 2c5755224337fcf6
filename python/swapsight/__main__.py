"""``python -m swapsight …``: runs the swapsight command this package installed.

Only that one: PATH is never searched, since a ``swapsight`` there may be
another version (or, through an empty PATH entry, a ``./swapsight`` in the
current folder). The command is looked for where pip puts the scripts of the
install that holds this package (the way uv's ``_find_uv.py`` finds uv).
"""

import fnmatch
import os
import sys
import sysconfig
from typing import List, Optional, Sequence

#: Installs that hold this package beside their scripts: the folders between
#: the install's root and the folder holding the package (fnmatch patterns,
#: outermost first), and the scripts folder under that root.
_LAYOUTS = (
    # pip install --prefix P (and a venv, a --user install): P/lib/python3.12/site-packages
    (("lib*", "python*", "*-packages"), "bin"),
    # the same on Windows: P/Lib/site-packages
    (("Lib", "site-packages"), "Scripts"),
    # pip install --target DIR: DIR/swapsight, and DIR/bin
    ((), "bin"),
)


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def _root_of(folder: str, between: Sequence[str]) -> Optional[str]:
    """The folder ``len(between)`` levels above ``folder`` when the names on
    the way match ``between``; else None."""
    for pattern in reversed(between):
        folder, name = os.path.split(folder)
        if not name or not fnmatch.fnmatch(name, pattern):
            return None
    return folder


def _user_scheme() -> str:
    if hasattr(sysconfig, "get_preferred_scheme"):  # Python 3.10+
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def _scripts_dirs() -> List[str]:
    """Where pip may have put this package's scripts. Beside the package
    first: the environment's own scripts may come from another install."""
    holding = os.path.dirname(_package_dir())
    dirs: List[str] = []
    for between, scripts in _LAYOUTS:
        root = _root_of(holding, between)
        if root:
            dirs.append(os.path.join(root, scripts))
    dirs.append(sysconfig.get_path("scripts"))
    try:
        dirs.append(sysconfig.get_path("scripts", _user_scheme()))
    except KeyError:  # a Python without a user scheme
        pass
    return dirs


def binary_candidates() -> List[str]:
    """Every path the command is looked for at, in order."""
    exe = "swapsight" + (sysconfig.get_config_var("EXE") or "")
    out: List[str] = []
    for folder in _scripts_dirs():
        path = os.path.join(folder, exe)
        if folder and path not in out:
            out.append(path)
    return out


def find_binary() -> Optional[str]:
    """The ``swapsight`` command installed with this package, or None."""
    for path in binary_candidates():
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def missing_binary_message() -> str:
    return (
        "the swapsight command installed with this package is at none of %s "
        "(PATH is not searched: a swapsight there may be another version); "
        "reinstall the swapsight package" % ", ".join(binary_candidates())
    )


def main() -> int:
    binary = find_binary()
    if binary is None:
        sys.stderr.write("swapsight: %s\n" % missing_binary_message())
        return 127
    argv = [binary] + sys.argv[1:]
    if os.name == "nt":
        import subprocess

        return subprocess.call(argv)
    os.execv(binary, argv)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
