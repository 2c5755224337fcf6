"""Issue 19's real run: a Python program records itself with
``swapsight.record()`` while its middle phase runs the testkit's filler in a
memory cgroup capped below what it fills, over a swap file — a real false
fit — and writes what the filler holds as a counter as it goes."""

import json
import subprocess
import sys

from conftest import REPO, installed_binary

MIB = 1 << 20

PROGRAM = r'''
import json, subprocess, sys, time
import swapsight

cgroup, memfill, trace = sys.argv[1:4]
written = []


def held(pid):
    """What the filler holds: resident plus swapped, in bytes."""
    kb = 0
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmSwap:")):
                    kb += int(line.split()[1])
    except OSError:
        return 0
    return kb * 1024


with swapsight.record(trace, interval="250ms", top=20) as rec:
    with swapsight.phase("prepare"):
        time.sleep(3)
    with swapsight.phase("fill"):
        filler = subprocess.Popen(
            ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup,
             sys.executable, memfill, "--mb", "768", "--hold", "4"],
            stdout=subprocess.DEVNULL,
        )
        while filler.poll() is None:
            value = held(filler.pid)
            if value:
                swapsight.counter("filler.held", value)
                written.append(value)
            time.sleep(0.25)
    with swapsight.phase("finish"):
        time.sleep(3)
print(json.dumps({
    "filler_exit": filler.returncode,
    "error": rec.error,
    "report": rec.report.to_dict(),
    "text": str(rec.report),
    "written": written,
}))
'''


def test_a_python_program_records_its_own_false_fit_on_real_swap(real_swap, tmp_path):
    program = tmp_path / "pipeline.py"
    program.write_text(PROGRAM)
    trace = tmp_path / "run.jsonl"
    memfill = REPO / "crates/testkit/fixtures/memfill.py"
    done = subprocess.run(
        [sys.executable, str(program), real_swap["cgroup"], str(memfill), str(trace)],
        capture_output=True, text=True, timeout=180,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["filler_exit"] == 0, done.stderr
    assert out["error"] is None, out["error"]
    print(out["text"])
    r = out["report"]
    written = out["written"]

    # The run: a false fit, three phase rows, the swap growth in the middle one.
    assert r["verdict"] == "false-fit", out["text"]
    rows = r["phases"]
    assert [p["name"] for p in rows] == ["prepare", "fill", "finish"], out["text"]
    assert [p["verdict"] for p in rows] == ["fits", "false-fit", "fits"], out["text"]
    tolerance = r["swap_tolerance_bytes"]
    assert rows[0]["swap_growth_bytes"] < tolerance, rows[0]
    assert rows[1]["swap_growth_bytes"] >= 256 * MIB, rows[1]
    assert rows[2]["swap_growth_bytes"] < tolerance, rows[2]
    # The footprint stayed under the cap (plus this program) while it swapped.
    assert rows[1]["peak_footprint_bytes"] <= 320 * MIB, rows[1]

    # The counter: what the filler held, well past its footprint, in the
    # fill row only; peak and last as the program wrote them.
    assert len(written) >= 4 and max(written) >= 512 * MIB, written
    run = {c["name"]: c for c in r["counters"]}
    assert run["filler.held"]["peak"] == max(written), run
    assert run["filler.held"]["last"] == written[-1], run
    assert run["filler.held"]["unit"] == "bytes", run
    fill = {c["name"]: c for c in rows[1]["counters"]}
    assert fill["filler.held"]["peak"] == max(written), rows[1]
    assert fill["filler.held"]["peak"] > 2 * rows[1]["peak_footprint_bytes"], rows[1]
    for row in (rows[0], rows[2]):
        assert "filler.held" not in {c["name"] for c in row.get("counters") or []}, row

    # Perfetto: the three phases as slices and the counter's track.
    export = subprocess.run(
        [installed_binary(), "export", "--format", "perfetto", str(trace)],
        capture_output=True, check=True,
    )
    events = json.loads(export.stdout)["traceEvents"]
    slices = [e["name"] for e in events if e.get("ph") == "X" and e.get("tid") == 1]
    assert slices == ["prepare", "fill", "finish"], slices
    track = [e["args"]["bytes"] for e in events
             if e.get("ph") == "C" and e.get("name") == "counter filler.held"]
    assert track == written, (track, written)
