"""``python -m swapsight …``: runs the swapsight command this package installed."""

import os
import shutil
import sys
import sysconfig


def find_binary():
    """The ``swapsight`` executable installed beside this interpreter's
    scripts (also a ``pip install --user`` one), else the first on PATH."""
    exe = "swapsight" + (sysconfig.get_config_var("EXE") or "")
    schemes = [None]
    user_scheme = (
        sysconfig.get_preferred_scheme("user")
        if hasattr(sysconfig, "get_preferred_scheme")
        else ("nt_user" if os.name == "nt" else "posix_user")
    )
    schemes.append(user_scheme)
    for scheme in schemes:
        try:
            scripts = (
                sysconfig.get_path("scripts")
                if scheme is None
                else sysconfig.get_path("scripts", scheme)
            )
        except KeyError:
            continue
        candidate = os.path.join(scripts, exe)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("swapsight")


def main():
    binary = find_binary()
    if binary is None:
        sys.stderr.write(
            "swapsight: the swapsight command is not installed beside this Python "
            "nor on PATH; reinstall the swapsight package\n"
        )
        return 127
    argv = [binary] + sys.argv[1:]
    if os.name == "nt":
        import subprocess

        return subprocess.call(argv)
    os.execv(binary, argv)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
