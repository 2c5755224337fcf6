"""The pytest plugin, run for real: pytest's own pytester runs small test
files in a pytest of their own (a subprocess: its footprint is its own), with
the plugin the installed wheel registered."""

import re

import pytest
from conftest import REPO

pytest_plugins = ["pytester"]
# Hundreds of MB allocated and freed: the machine's memory to this module
# alone (conftest.py's quiet_memory).
pytestmark = pytest.mark.usefixtures("quiet_memory")

BIG = '''
import time
import pytest

@pytest.mark.footprint_limit("16 MiB")
def test_big():
    # Written, not only allocated: untouched pages are no footprint. Held
    # for a few samples.
    data = b"\\x01" * (64 << 20)
    time.sleep(0.6)
    assert len(data) == 64 << 20

@pytest.mark.footprint_limit("1 GiB")
def test_small():
    time.sleep(0.3)

def test_unmarked():
    pass
'''


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:randomly", *args, timeout=300)


def test_a_footprint_over_its_limit_fails_with_the_evidence_and_the_trace(pytester):
    pytester.makepyfile(test_mem=BIG)
    traces = pytester.path / "traces"
    result = run(pytester, "--swapsight", "--swapsight-dir", str(traces))
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*swapsight: footprint_limit: grew * MiB from * MiB at its start to * MiB (in call; *), "
            "limit 16 MiB*",
            "*evidence: footprint peaked at *",
            "*trace: %s*test_mem.py_test_big.jsonl*" % traces,
            "*= swapsight: tests by peak footprint =*",
            "traces: %s" % traces,
        ]
    )
    # Largest first; the unmarked test is not recorded.
    rows = [l for l in out.splitlines() if re.search(r" peak .* swap ", l)]
    assert [r.split()[-1] for r in rows] == ["test_mem.py::test_big", "test_mem.py::test_small"], out
    grew = re.search(r"footprint_limit: grew (\d+) MiB", out)
    assert grew and int(grew.group(1)) >= 64, out
    assert sorted(p.name for p in traces.iterdir()) == [
        "test_mem.py_test_big.jsonl",
        "test_mem.py_test_small.jsonl",
    ]
    # Each trace has pytest's phases.
    text = (traces / "test_mem.py_test_small.jsonl").read_text()
    for when in ("setup", "call", "teardown"):
        assert '"name":"%s"' % when in text.replace(" ", ""), text[:2000]


def test_without_the_flag_the_plugin_does_nothing(pytester):
    pytester.makepyfile(test_mem=BIG)
    result = run(pytester, "--strict-markers")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    assert re.search(r"^plugins: .*swapsight-", out, re.M), out  # loaded, but idle
    assert "peak footprint" not in out and "swapsight:" not in out, out


def test_the_ini_turns_it_on_and_gives_a_default_a_marker_overrides(pytester):
    pytester.makeini("[pytest]\nswapsight = true\nswapsight_footprint_limit = 16 MiB\n")
    pytester.makepyfile(
        test_ini='''
import time, pytest

def test_default():
    data = b"\\x01" * (64 << 20)
    time.sleep(0.4)

@pytest.mark.footprint_limit("2 GiB")
def test_overridden():
    data = b"\\x01" * (64 << 20)
    time.sleep(0.4)
'''
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED test_ini.py::test_default*"])


def test_a_bad_size_is_one_clear_error(pytester):
    pytester.makepyfile(
        test_bad='''
import pytest

@pytest.mark.swap_budget("lots")
def test_bad():
    pass
'''
    )
    result = run(pytester, "--swapsight")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.swap_budget: invalid size 'lots'*"])
    result = run(pytester, "--swapsight", "-o", "swapsight_swap_budget=1 XB")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*swapsight_swap_budget: invalid size '1 XB': unknown unit 'xb'*"])


def test_a_peak_that_grew_since_the_last_passing_run_fails(pytester):
    grow = '''
import os, time, pytest

@pytest.mark.footprint_limit("4 GiB")
def test_grows():
    data = b"\\x01" * (int(os.environ.get("GROW_MIB", "0")) << 20)
    time.sleep(0.6)
'''
    pytester.makepyfile(test_grow=grow)
    first = run(pytester, "--swapsight", "--swapsight-fail-on-increase")
    first.assert_outcomes(passed=1)
    pytester._monkeypatch.setenv("GROW_MIB", "256")
    second = run(pytester, "--swapsight", "--swapsight-fail-on-increase")
    second.assert_outcomes(failed=1)
    second.stdout.fnmatch_lines(
        ["*swapsight: peak footprint * grew past the tolerance (10 %) since the last passing run's *"]
    )
    # Without the flag the increase is not judged.
    run(pytester, "--swapsight").assert_outcomes(passed=1)


def test_swap_past_the_budget_fails_on_real_swap(pytester, real_swap):
    # The testkit's filler writes 768 MiB in a cgroup capped at 256 MiB over a
    # swap file: the test's swap grows by hundreds of MB while its footprint
    # stays under the cap, a false fit.
    pytester.makepyfile(
        test_fill='''
import os, subprocess, sys, pytest

@pytest.mark.swap_budget("128 MiB")
@pytest.mark.no_false_fit
def test_fill():
    subprocess.run(
        ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', os.environ["FILL_CGROUP"],
         sys.executable, os.environ["FILL_MEMFILL"], "--mb", "768", "--hold", "4"],
        check=True, stdout=subprocess.DEVNULL,
    )
'''
    )
    pytester._monkeypatch.setenv("FILL_CGROUP", real_swap["cgroup"])
    pytester._monkeypatch.setenv("FILL_MEMFILL", str(REPO / "crates/testkit/fixtures/memfill.py"))
    result = run(pytester, "--swapsight", "-o", "swapsight_interval=250ms")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    grew = re.search(r"swapsight: swap_budget: swap grew (\d+) MiB, past the budget of 128 MiB", out)
    assert grew and int(grew.group(1)) >= 256, out
    result.stdout.fnmatch_lines(
        [
            "*swapsight: no_false_fit: the run was judged false fit*",
            "*evidence: *",
            "*trace: *test_fill.py_test_fill.jsonl*",
            "* MiB peak * grew * +* MiB swap  false-fit     test_fill.py::test_fill",
        ]
    )
