"""record()'s arguments and its trace (issue 49 §4): a flag that is no
bool, an interval in seconds or as the recorder's string, and a second
recording of this process into a trace one is writing."""

import json
import math

import pytest

import swapsight


def header_of(trace):
    with open(trace, encoding="utf-8") as f:
        return json.loads(f.readline())


@pytest.mark.parametrize("flags", [{"torch": "yes"}, {"mlx": 1}, {"torch": None}, {"mlx": "no"}])
def test_a_watch_flag_that_is_no_bool_is_refused(tmp_path, flags):
    # torch="no" would have turned the watch on: only True or False.
    with pytest.raises(TypeError) as e:
        swapsight.record(tmp_path / "t.jsonl", **flags)
    (name, value), = flags.items()
    assert str(e.value) == "swapsight.record: %s is True or False, not %r" % (name, value)


@pytest.mark.parametrize("interval, ms", [(0.25, 250), (1, 1000), ("100ms", 100), ("2s", 2000)])
def test_the_interval_is_seconds_or_the_recorders_string(tmp_path, interval, ms):
    trace = tmp_path / "t.jsonl"
    rec = swapsight.record(trace, interval=interval).start()
    rec.stop()
    assert rec.error is None, rec.error
    assert header_of(trace)["interval_ms"] == ms
    assert rec.interval == interval


@pytest.mark.parametrize("interval", [0.001, 3601, math.nan, math.inf, -1])
def test_an_interval_out_of_range_is_said_in_seconds(tmp_path, interval):
    with pytest.raises(ValueError) as e:
        swapsight.record(tmp_path / "t.jsonl", interval=interval)
    assert str(e.value) == (
        "swapsight.record: the interval %r is not a number of seconds from 0.01 to 3600"
        % (interval,)
    )


@pytest.mark.parametrize("interval", [True, None, [1]])
def test_an_interval_that_is_no_number_nor_string_is_a_type_error(tmp_path, interval):
    with pytest.raises(TypeError, match="interval"):
        swapsight.record(tmp_path / "t.jsonl", interval=interval)


def test_a_bad_interval_string_is_the_recorders_one_line(tmp_path):
    with pytest.raises(swapsight.Error) as e:
        swapsight.record(tmp_path / "t.jsonl", interval="lots").start()
    assert "invalid value 'lots' for '--interval" in str(e.value)


def test_a_recording_inside_another_to_the_same_trace_is_refused(tmp_path):
    trace = tmp_path / "same.jsonl"
    with swapsight.record(trace, interval="100ms") as outer:
        with pytest.raises(swapsight.Error) as e:
            swapsight.record(trace).start()
        assert str(e.value) == (
            "cannot record to %s: another recording in this process writes it until its "
            "stop() (a record() inside another to the same path)" % trace
        )
        # Through another name for the same file too.
        (tmp_path / "link").symlink_to(tmp_path)
        with pytest.raises(swapsight.Error, match="another recording"):
            swapsight.record(tmp_path / "link" / "same.jsonl").start()
        # Another trace is fine.
        with swapsight.record(tmp_path / "other.jsonl", interval="100ms") as inner:
            pass
        assert inner.error is None, inner.error
    assert outer.error is None and outer.report is not None, outer.error
    # Stopped, the trace is free again.
    with swapsight.record(trace, interval="100ms") as again:
        pass
    assert again.error is None, again.error
