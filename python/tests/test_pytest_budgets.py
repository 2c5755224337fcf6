"""The pytest plugin's budgets a suite can trust (issue 49): a budget that
cannot be broken says so, a recording that ended early fails its test, a
budget broken in a fixture is reported on setup, xdist's workers reach the
summary, footprint_limit counts the test's own growth, and the baseline of
--swapsight-fail-on-increase can be taken again. Each runs a pytest of its
own through pytester, with the plugin the installed wheel registered."""

import json
import re
import sys

import pytest

pytest_plugins = ["pytester"]
# Hundreds of MB allocated and freed: the machine's memory to this module
# alone (conftest.py's quiet_memory).
pytestmark = pytest.mark.usefixtures("quiet_memory")


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:randomly", *args, timeout=300)


TOUCH = '''
import time, pytest

@pytest.mark.swap_budget("64 MiB")
@pytest.mark.no_false_fit
def test_touch():
    data = b"\\x01" * (96 << 20)
    time.sleep(0.5)
    assert len(data) == 96 << 20
'''


def test_a_swap_budget_where_the_cgroup_may_not_swap_says_it_could_not_be_broken(
    pytester, real_swapless_cgroup
):
    pytester.makepyfile(test_touch=TOUCH)
    cgroup = real_swapless_cgroup["cgroup"]

    def in_cgroup(*args):
        # pytest itself (the watched tree's root) joins the cgroup first.
        return pytester.run(
            "sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup,
            sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
            "-v", "--swapsight", *args, timeout=300,
        )

    warned = in_cgroup()
    warned.assert_outcomes(passed=1, warnings=1)
    warned.stdout.fnmatch_lines(
        [
            "*test_touch.py::test_touch PASSED (swapsight: budget could not be broken)*",
            "*swapsight: swap_budget could not be broken: the test's cgroup * allows it no swap "
            "(its swap limit is 0); no_false_fit could not be broken*",
            "1 test with a budget that could not be broken (--swapsight-unbreakable=warn): "
            "swap_budget could not be broken: the test's cgroup *",
        ]
    )
    in_cgroup("--swapsight-unbreakable=skip").assert_outcomes(skipped=1)
    failed = in_cgroup("-o", "swapsight_unbreakable=fail")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*swapsight: swap_budget could not be broken: *"])
    bad = in_cgroup("--swapsight-unbreakable=ignore")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--swapsight-unbreakable 'ignore': one of warn, skip, fail*"])


def test_a_recording_killed_during_the_test_fails_it_with_the_reason(pytester):
    # As the OOM killer would: the recorder (this pytest's child) is killed
    # mid-test, and its partial trace must not pass the test.
    pytester.makepyfile(
        test_killed='''
import os, signal, time, pytest

def recorder_pids():
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/comm" % pid) as f:
                name = f.read().strip()
        except (OSError, IndexError):
            continue
        if fields[1] == me and name == "swapsight":
            yield int(pid)

@pytest.mark.footprint_limit("1 GiB")
def test_killed():
    time.sleep(0.3)
    pids = list(recorder_pids())
    assert pids, "no recorder among this pytest's children"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.3)
'''
    )
    result = run(pytester, "--swapsight")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*swapsight: swapsight's recording of this test ended early: the recorder (pid *) "
            "ended before stop() (killed by SIGKILL)*",
        ]
    )


FIXTURES = '''
import time, pytest

@pytest.fixture
def big_then_skip():
    data = b"\\x01" * (96 << 20)
    time.sleep(0.5)
    pytest.skip("no GPU here")

@pytest.fixture
def big():
    data = b"\\x01" * (96 << 20)
    time.sleep(0.5)
    yield data

@pytest.mark.footprint_limit("16 MiB")
def test_skipped_in_its_fixture(big_then_skip):
    pass

@pytest.mark.footprint_limit("16 MiB")
def test_skips(big):
    pytest.skip("not today")
'''


def test_a_budget_broken_in_a_fixture_is_reported_though_the_test_skipped(pytester):
    pytester.makepyfile(test_fixtures=FIXTURES)
    result = run(pytester, "--swapsight", "-rA")
    # The fixture's skip is on setup: the broken budget is that report's.
    result.assert_outcomes(errors=1, failed=1)
    out = result.stdout.str()
    # Each test's own section says it (-rA's short lines may cut it).
    assert len(re.findall(r"^swapsight: footprint_limit: grew ", out, re.M)) == 2, out
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_skipped_in_its_fixture*",
            "*swapsight: footprint_limit: grew * MiB from * MiB at its start to * MiB (in setup*), "
            "limit 16 MiB*",
        ]
    )


GROWTH = '''
import time, pytest

# What an import of numpy and pandas costs a process: held before any test.
IMPORTED = b"\\x01" * (64 << 20)

@pytest.mark.footprint_limit("24 MiB")
def test_small_growth():
    data = b"\\x01" * (8 << 20)
    time.sleep(0.4)

@pytest.mark.footprint_limit("24 MiB", of="peak")
def test_whole_process():
    time.sleep(0.4)

@pytest.mark.footprint_limit("24 MiB")
def test_big_growth():
    data = b"\\x01" * (48 << 20)
    time.sleep(0.4)
'''


def test_footprint_limit_counts_the_tests_own_growth_and_of_peak_the_process(pytester):
    pytester.makepyfile(test_growth=GROWTH)
    result = run(pytester, "--swapsight")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "swapsight: footprint_limit: peak footprint * MiB (in call; test_growth.py:* was "
            "running at the peak), over the limit of 24 MiB",
        ]
    )
    grew = re.search(
        r"footprint_limit: grew (\d+) MiB from (\d+) MiB at its start to (\d+) MiB \(in call; "
        r"test_growth.py:(\d+) was running at the peak\), limit 24 MiB",
        out,
    )
    assert grew, out
    growth, start, peak, line = (int(g) for g in grew.groups())
    # The stack looked at names a line of the test that grew: its
    # allocation or the sleep after it.
    written = GROWTH.strip("\n").splitlines()  # as pytester writes the file
    alloc = written.index('    data = b"\\x01" * (48 << 20)') + 1
    assert line in (alloc, alloc + 1), out
    assert 48 <= growth < 64 and start >= 64 and peak == pytest.approx(start + growth, abs=1), out
    assert "test_small_growth" not in out.split("short test summary")[-1], out


def test_the_flags_of_the_baseline_need_the_plugin(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    for flag in ("--swapsight-fail-on-increase", "--swapsight-update-baseline"):
        result = run(pytester, flag)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        result.stderr.fnmatch_lines(["*swapsight: %s needs --swapsight*" % flag])


GROW = '''
import os, time

def test_grows():
    data = b"\\x01" * (int(os.environ.get("GROW_MIB", "0")) << 20)
    time.sleep(0.4)
'''


def test_an_unmarked_test_is_tracked_and_a_new_baseline_can_be_taken(pytester):
    pytester.makepyfile(test_grow=GROW)
    flags = ("--swapsight", "--swapsight-fail-on-increase")
    run(pytester, *flags).assert_outcomes(passed=1)
    pytester._monkeypatch.setenv("GROW_MIB", "256")
    grew = run(pytester, *flags)
    grew.assert_outcomes(failed=1)
    grew.stdout.fnmatch_lines(["*(--swapsight-update-baseline takes the new figure)*"])
    # Failing again until the new figure is taken; then it is the mark.
    run(pytester, *flags).assert_outcomes(failed=1)
    run(pytester, "--swapsight", "--swapsight-update-baseline").assert_outcomes(passed=1)
    run(pytester, *flags).assert_outcomes(passed=1)


XDIST = '''
import time, pytest

@pytest.mark.parametrize("mib", [8, 16, 32, 64])
def test_each(mib):
    data = b"\\x01" * (mib << 20)
    time.sleep(0.4)
'''


def test_under_xdist_every_workers_tests_reach_the_summary_and_the_cache(pytester):
    pytester.makepyfile(test_par=XDIST)
    traces = pytester.path / "traces"
    args = ("-n", "2", "--swapsight", "--swapsight-fail-on-increase", "--swapsight-dir", str(traces))
    result = run(pytester, *args)
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    rows = [l for l in out.splitlines() if re.search(r" peak .* swap ", l)]
    assert sorted(r.split()[-1] for r in rows) == [
        "test_par.py::test_each[%d]" % m for m in (16, 32, 64, 8)
    ], out
    result.stdout.fnmatch_lines(
        [
            "swap and free memory are the machine's: 2 xdist workers ran tests side by side*",
            "traces: %s" % traces,
        ]
    )
    assert len(list(traces.glob("*.jsonl"))) == 4
    # Each test's baseline is its own entry: no worker overwrote another's.
    cache = pytester.path / ".pytest_cache" / "v" / "swapsight" / "peak"
    entries = [json.loads(p.read_text()) for p in cache.iterdir()]
    assert sorted(e["nodeid"] for e in entries) == sorted(
        "test_par.py::test_each[%d]" % m for m in (8, 16, 32, 64)
    )
    run(pytester, *args).assert_outcomes(passed=4)


def test_the_traces_go_to_pytests_own_temporary_folder(pytester):
    pytester.makepyfile(test_x='''
import pytest

@pytest.mark.footprint_limit("1 GiB")
def test_x():
    pass
''')
    result = run(pytester, "--swapsight")
    result.assert_outcomes(passed=1)
    where = re.search(r"^traces: (.+)$", result.stdout.str(), re.M)
    assert where, result.stdout.str()
    # pytester runs it with --basetemp under its own folder: pytest's
    # numbered folders, of which it keeps the last 3.
    assert where.group(1).startswith(str(pytester.path)), where.group(1)
    assert re.search(r"swapsight\d+$", where.group(1)), where.group(1)
