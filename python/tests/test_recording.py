"""Phases reach a real recording: the installed `swapsight record` runs a
Python script, and the trace's {"type":"mark",…} lines are read back."""

import subprocess
import sys

from conftest import installed_binary, record

THREADS_AND_CHILDREN = r"""
import multiprocessing, threading, time
import swapsight

def child(name):
    with swapsight.phase(name):
        time.sleep(0.1)

def worker(i):
    with swapsight.phase("t%d" % i):
        time.sleep(0.1)

if __name__ == "__main__":
    with swapsight.phase("main"):
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
        for t in threads: t.start()
        for t in threads: t.join()
        for method in ("fork", "spawn"):
            p = multiprocessing.get_context(method).Process(target=child, args=(method,))
            p.start(); p.join()
            assert p.exitcode == 0
"""


def test_phases_from_threads_and_child_processes_reach_the_trace(tmp_path):
    marks, _ = record(tmp_path, THREADS_AND_CHILDREN)
    starts = [m["name"] for m in marks if not m.get("end")]
    ends = [m for m in marks if m.get("end")]
    # A thread starts with no enclosing phase; a forked child keeps its
    # parent's path, a spawned one starts afresh.
    for name in ("main", "t0", "t1", "t2", "main/fork", "spawn"):
        assert name in starts, (name, marks)
    assert starts[0] == "main"
    assert ends and ends[-1]["name"] == "main"
    assert marks == sorted(marks, key=lambda m: m["t_ms"])


BAD_NAMES = r"""
import json, os, subprocess, sys
import swapsight

trace, binary, not_phases = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
names = [
    "two\nlines", "cr\r\nlf", "\x1b[31mred", "\u202eevil\u202c", "a\u2028b",
    "  padded  ", "x" * 100_000, "\u00e9" * 70, "\u061c\u2066iso\u2069",
]
for name in names:
    swapsight.mark(name)
    subprocess.run([binary, "mark", name, "--trace", trace], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# 1 MB: too long for a command line (128 KiB per argument), so only from Python.
swapsight.mark("y" * 1_000_000)
# Not UTF-8: the raw bytes written straight to the mark file, then the same
# bytes as Python sees them in a file name (surrogateescape).
with open(os.environ["SWAPSIGHT_MARK"], "ab") as f:
    f.write(b"raw\xff\xfe\xe2\x82end\n")
swapsight.mark(b"raw\xff\xfe\xe2\x82end".decode("utf-8", "surrogateescape"))
# Names the core reads as the end of a phase ('/etc'): neither side marks
# them, the CLI says so with exit 2.
codes = []
for name in not_phases:
    swapsight.mark(name)
    codes.append(subprocess.run([binary, "mark", name, "--trace", trace],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)
print(json.dumps(codes))
swapsight.end_phase()
"""


def test_bad_names_are_cleaned_as_the_cli_cleans_them(tmp_path):
    import json

    from test_generated import NAMES

    # The generated cases the core reads as an end once cleaned (a command
    # line holds no NUL).
    not_phases = [c["text"] for c in NAMES
                  if c["as_line"] == "end" and "\x00" not in c.get("text", "\x00")]
    assert "/etc" in not_phases and "\u00a0/etc" in not_phases
    trace = tmp_path / "t.jsonl"
    script = tmp_path / "bad.py"
    script.write_text(BAD_NAMES)
    done = subprocess.run(
        [installed_binary(), "record", "-o", str(trace), "--",
         sys.executable, str(script), str(trace), installed_binary(), json.dumps(not_phases)],
        cwd=str(tmp_path), capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [2] * len(not_phases)

    marks = [json.loads(l) for l in trace.read_text().splitlines()]
    names = [m["name"] for m in marks if m.get("type") == "mark" and not m.get("end")]
    assert len(names) == 9 * 2 + 3, names
    import swapsight

    for i in range(9):
        python_side, cli_side = names[2 * i], names[2 * i + 1]
        assert python_side == cli_side
    assert names[:2] == ["two?lines", "two?lines"]
    assert names[12] == "x" * 64
    assert names[18] == "y" * 64
    assert names[19] == names[20] == swapsight.clean_name(b"raw\xff\xfe\xe2\x82end")
    # One end, end_phase()'s, of the phase still running: no '/etc' ended it.
    ends = [m["name"] for m in marks if m.get("type") == "mark" and m.get("end")]
    assert ends == [names[20]]
    assert all(len(n) <= 64 for n in names)


def test_record_report_shows_the_phases(tmp_path):
    script = r"""
import time, swapsight
with swapsight.phase("load"):
    time.sleep(0.3)
    with swapsight.phase("unet"):
        time.sleep(0.3)
"""
    marks, _ = record(tmp_path, script)
    assert [(m["name"], bool(m.get("end"))) for m in marks] == [
        ("load", False), ("load/unet", False), ("load", False), ("load", True),
    ]
    report = subprocess.run(
        [installed_binary(), "report", str(tmp_path / "t.jsonl")],
        capture_output=True, text=True, timeout=60,
    )
    assert "load/unet" in report.stdout, report.stdout + report.stderr
