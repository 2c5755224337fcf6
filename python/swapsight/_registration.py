"""Whether the recording a mark file belongs to goes on: what a watch
looks at before each sample, so that it ends with its recording.

A recorder registers in a folder of its own, ``rec-PID-MS`` under the
per-user runtime directory, holding ``trace`` (unlinked when the recording
ends), ``start`` (the recorder's start time) and the ``mark`` file
(crates/core/src/record/marks/registry.rs and inbox.rs). A recorder killed
outright (SIGKILL, the OOM killer) unlinks nothing, so the pid and start
time are looked at too: the pid alone may have been handed to another
process since.
"""

import os
import re
from typing import Optional, Tuple, Union

_FOLDER = re.compile(r"rec-([0-9]+)-[0-9]+\Z")


class Registration:
    """The registration of the recording whose mark file is ``path``, as far
    as it can be known: a mark path elsewhere (set by hand, a test's plain
    file) has none, and its recording is taken to go on."""

    def __init__(self, path: Optional[Union[str, bytes]]) -> None:
        self.trace: Optional[str] = None
        #: The recorder's pid and start time (None where it is not known).
        self.recorder: Optional[Tuple[int, Optional[int]]] = None
        if not path:
            return
        folder = os.path.dirname(os.fsdecode(path))
        trace = os.path.join(folder, "trace")
        if os.path.exists(trace):
            self.trace = trace
        self.recorder = recorder_of(folder)

    def goes_on(self) -> bool:
        """False once the recording ended or its recorder is gone."""
        if self.trace and not os.path.exists(self.trace):
            return False
        return self.recorder is None or recorder_alive(*self.recorder)


def recorder_of(folder: str) -> Optional[Tuple[int, Optional[int]]]:
    """The pid and start time of the recorder that registered in
    ``folder``; None for a folder that is no registration."""
    match = _FOLDER.match(os.path.basename(folder))
    if match is None:
        return None
    try:
        with open(os.path.join(folder, "start"), "rb") as f:
            start: Optional[int] = int(f.read(64).strip())
    except (OSError, ValueError):  # not written (an OS without start times)
        start = None
    return int(match.group(1)), start


def recorder_alive(pid: int, start: Optional[int]) -> bool:
    """Whether the recorder ``pid`` that started at ``start`` still runs:
    its start time is compared where it can be read (Linux's /proc, as the
    recorder wrote it); elsewhere the pid is all there is."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, another user's
        pass
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return True
    # Counted after the name in parentheses (which may hold anything, a ")"
    # too): field 3, the state, and 22, the start time.
    fields = stat[stat.rfind(b")") + 2 :].split()
    if fields[:1] in ([b"Z"], [b"X"]):
        return False  # killed, not yet reaped: record()'s recorder is our child
    return start is None or len(fields) < 20 or fields[19] == str(start).encode()
