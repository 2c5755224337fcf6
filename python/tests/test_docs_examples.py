"""Every code block in README.md, docs/*.md and python/README.md runs here,
or says why it does not: one mechanism for all the docs (docs/ci.md,
"The docs' examples").

The line right above a block's opening fence is an HTML comment (hidden
when the page is rendered) that says which of four it is:

    <!-- example: run -->                   run it here, as written
    <!-- example: run (needs=torch) -->     ... where torch imports (skipped
                                            only where it does not)
    <!-- example: output: WHERE -->         output copied from a real run;
                                            WHERE says which run
    <!-- example: checked by PATH::NAME --> a test elsewhere runs or reads it
                                            (PATH must hold NAME)
    <!-- example: not run: WHY -->          with the reason (macOS only, a
                                            server that runs until stopped,
                                            a long run, …)

A `run` block runs in a fresh folder holding the stand-ins the docs name
(STAND_INS: a pipeline `generate.py`, its recording `run.jsonl`, the
`my_pipeline` module a Python block imports its model from), with the
installed package's `swapsight` first on PATH: `sh` blocks by bash with
-euo pipefail, `console` blocks their `$ ` lines, `python` blocks by this
interpreter, and blocks holding IPython's `%` lines by an IPython shell, `(pytest)` ones as a test file by pytest
with the plugin on;
`json` blocks are parsed (each line, or the fragment as an object's
members), and `(trace)` ones reported by `swapsight report` as a trace.
A console block's `exit code: N` lines must be what its commands print,
and with `(same)` every line of output it shows, in order.
`(cwd=repo)` runs a block in the repository instead (scripts, deploy/).
Blocks marked `(session=NAME)` in one file run in order in one process."""

import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "python" / "README.md"]
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_NOTE = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
_KIND = re.compile(r"^(run|output|checked by|not run)\b\s*(?:\(([^)]*)\))?\s*:?\s*(.*)$")
#: Longest a block may run.
TIMEOUT = 120

#: The stand-ins a `run` block finds in its folder, as the docs name them.
GENERATE = '''\
"""A stand-in pipeline: three phases, memory touched in the middle one."""
import time
import swapsight

with swapsight.phase("load"):
    time.sleep(0.3)
with swapsight.phase("denoise"):
    data = b"\\x01" * (32 << 20)
    time.sleep(0.6)
with swapsight.phase("decode"):
    time.sleep(0.3)
'''
MY_PIPELINE = '''\
"""A stand-in for the reader's own pipeline: load() returns a callable
"model" that touches some memory, as a real one would, in a moment."""
prompt = "a lighthouse at dawn"
queue = [prompt] * 3


def load():
    weights = b"\\x01" * (16 << 20)

    class Pipe:
        def __call__(self, prompt):
            return self.decode(self.denoise(self.encode(prompt)))

        def encode(self, prompt):
            return bytearray(weights[: 1 << 20]) + prompt.encode()

        def denoise(self, emb):
            return bytearray(weights) + emb

        def decode(self, latents):
            return len(latents)

    return Pipe()
'''


class Block:
    def __init__(self, doc, line, lang, body, note):
        self.doc, self.line, self.lang, self.body, self.note = doc, line, lang, body, note
        self.kind = self.options = self.detail = None
        m = _KIND.match(note or "")
        if m:
            self.kind = m.group(1)
            # `needs=torch`, `session=nb`, a bare word (`trace`) as ""
            self.options = dict(
                (kv.split("=", 1) + [""])[:2]
                for kv in (m.group(2) or "").replace(" ", "").split(",")
                if kv
            )
            self.detail = m.group(3).strip()

    @property
    def where(self):
        return "%s:%d" % (self.doc.relative_to(REPO), self.line)

    def __repr__(self):
        return self.where


def blocks_of(doc):
    lines = doc.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = textwrap.dedent("\n".join(l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j]))
        note = _NOTE.match(lines[i - 1]) if i > 0 else None
        out.append(Block(doc, i + 1, lang, body, note.group(1) if note else None))
        i = j + 1
    return out


ALL = [b for doc in DOCS for b in blocks_of(doc)]


def test_every_block_says_whether_it_runs():
    bad = []
    for b in ALL:
        if b.kind is None:
            bad.append("%s: no <!-- example: run | output: … | checked by … | not run: … --> "
                       "on the line above its fence%s" % (b.where, " (has %r)" % b.note if b.note else ""))
        elif b.kind in ("output", "not run", "checked by") and not b.detail:
            bad.append("%s: `%s` says nothing of %s" % (
                b.where, b.kind, {"output": "where it came from", "not run": "why",
                                  "checked by": "which test"}[b.kind]))
        elif b.kind == "run" and b.lang not in ("sh", "bash", "console", "python", "json"):
            bad.append("%s: cannot run a %r block" % (b.where, b.lang))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "checked by"], ids=repr)
def test_a_block_checked_elsewhere_names_a_test_that_exists(block):
    path, _, name = block.detail.partition("::")
    target = REPO / path.strip()
    assert target.is_file(), "%s: no file %s" % (block.where, path)
    assert name.strip() and name.strip() in target.read_text(encoding="utf-8"), (
        "%s: %s does not hold %r" % (block.where, path, name.strip())
    )


def _sessions():
    """The `run` blocks grouped: each alone, or a file's session in order."""
    groups, by_name = [], {}
    for b in ALL:
        if b.kind != "run":
            continue
        name = b.options.get("session")
        if name is None:
            groups.append([b])
        elif (b.doc, name) in by_name:
            by_name[(b.doc, name)].append(b)
        else:
            by_name[(b.doc, name)] = [b]
            groups.append(by_name[(b.doc, name)])
    return groups


def _safetensors(path):
    """A model file as the format lays it out (an 8-byte little-endian
    header length, the JSON header, the data): 1 MiB of float32."""
    import json
    import struct

    n = 1 << 18
    header = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * (4 * n))


def _folder(tmp_path):
    (tmp_path / "generate.py").write_text(GENERATE)
    _safetensors(tmp_path / "model" / "model.safetensors")
    (tmp_path / "my_pipeline.py").write_text(MY_PIPELINE)
    env = dict(os.environ)
    env.pop("SWAPSIGHT_MARK", None)
    env["PATH"] = sysconfig.get_path("scripts") + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(tmp_path)
    # `python` in a block is the venv's (its scripts folder is first), as
    # in the reader's venv.
    subprocess.run(
        [sysconfig.get_path("scripts") + "/swapsight", "record", "-o", "run.jsonl", "--interval",
         "100ms", "--", sys.executable, "generate.py"],
        cwd=tmp_path, env=env, check=True, capture_output=True, timeout=TIMEOUT,
    )
    subprocess.run(
        [sysconfig.get_path("scripts") + "/swapsight", "export", "run.jsonl", "-o", "run.csv"],
        cwd=tmp_path, env=env, check=True, capture_output=True, timeout=TIMEOUT,
    )
    return env


def _script(group):
    """The group's program and the interpreter to run it with."""
    langs = {b.lang for b in group}
    assert len(langs) == 1, "%s: a session mixes %s" % (group[0].where, sorted(langs))
    lang = langs.pop()
    if lang in ("sh", "bash"):
        return ["bash", "-euo", "pipefail", "-c", "\n".join(b.body for b in group)]
    if lang == "console":
        cmds = [l[2:] for b in group for l in b.body.splitlines() if l.startswith("$ ")]
        assert cmds, "%s: a console block with no `$ ` line" % group[0].where
        # Not -e: a console shows commands that fail, with their exit codes.
        return ["bash", "-uo", "pipefail", "-c", "\n".join(cmds)]
    if "pytest" in group[0].options:
        return [sys.executable, "-c", "import sys, pytest\n"
                "open('test_doc.py', 'w').write(%r)\n"
                "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--swapsight', 'test_doc.py']))"
                % "\n".join(b.body for b in group)]
    if any(l.lstrip().startswith("%") for b in group for l in b.body.splitlines()):
        cells = [b.body for b in group]
        program = (
            "import sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\n"
            "for cell in %r:\n"
            "    r = shell.run_cell(cell)\n"
            "    if not r.success:\n"
            "        sys.exit('cell failed: %%r' %% (r.error_before_exec or r.error_in_exec))\n" % cells
        )
        return [sys.executable, "-c", program]
    return [sys.executable, "-c", "\n".join(b.body for b in group)]


def _json_lines(block):
    import json

    try:
        return [json.loads(block.body)]
    except ValueError:
        pass
    lines = [l for l in block.body.splitlines() if l.strip()]
    try:
        return [json.loads(l) for l in lines]
    except ValueError:
        # A fragment: an object's members, as a table's row shows them.
        return [json.loads("{" + block.body + "}")]


@pytest.mark.parametrize("group", _sessions(), ids=lambda g: repr(g[0]))
def test_a_run_block_runs_as_written(group, tmp_path):
    needs = [n for b in group for n in b.options.get("needs", "").split("+") if n]
    for module in needs:
        pytest.importorskip(module, reason="%s needs %s" % (group[0].where, module))
    env = _folder(tmp_path)
    if group[0].lang == "json":
        for b in group:
            records = _json_lines(b)
            if "trace" in b.options:
                (tmp_path / "example.jsonl").write_text(b.body + "\n")
                done = subprocess.run(["swapsight", "report", "example.jsonl"], cwd=tmp_path,
                                      env=env, capture_output=True, text=True, timeout=TIMEOUT)
                assert done.returncode == 0 and records, "%s: %s" % (b.where, done.stderr)
        return
    cwd = REPO if group[0].options.get("cwd") == "repo" else tmp_path
    done = subprocess.run(
        _script(group), cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, "%s exited %d:\n%s\n%s" % (
        ", ".join(map(repr, group)), done.returncode, done.stdout[-3000:], done.stderr[-3000:]
    )
    if group[0].lang == "console":
        shown = [l for b in group for l in b.body.splitlines() if re.match(r"^exit code: \d+$", l)]
        got = [l for l in done.stdout.splitlines() if re.match(r"^exit code: \d+$", l)]
        assert got == shown, "%s: the docs show %s, the commands printed %s\n%s" % (
            group[0].where, shown, got, done.stderr[-3000:]
        )
        if "same" in group[0].options:
            printed = iter(l.strip() for l in (done.stdout + done.stderr).splitlines())
            for line in (l.strip() for b in group for l in b.body.splitlines()):
                if line and not line.startswith("$ "):
                    assert any(p == line for p in printed), "%s: %r is not printed (in order):\n%s" % (
                        group[0].where, line, done.stdout + done.stderr
                    )
