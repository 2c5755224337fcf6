"""The module against the Rust side: the cases crates/core/tests/python_contract.rs
writes from the core's own functions (generated_cases.json, beside this
file), and the constants it writes into the package (swapsight/_generated.py),
which no other module states again. The Rust test fails when either file is
stale; these fail when the Python side gives another answer."""

import ast
import json
from pathlib import Path

import pytest

import swapsight
from swapsight import _counter, _generated, _names, _tables

CASES = json.loads((Path(__file__).parent / "generated_cases.json").read_text(encoding="utf-8"))


def cases(group):
    return CASES[group]["cases"]


def raw(case):
    """A name case's input: a str, or bytes that are not UTF-8."""
    return case["text"] if "text" in case else bytes(case["bytes"])


NAMES = cases("names")
NAME_IDS = [repr(raw(c))[:24] for c in NAMES]


@pytest.mark.parametrize("case", NAMES, ids=NAME_IDS)
def test_a_name_is_cleaned_as_the_core_cleans_it(case):
    assert _names.clean_text(raw(case)) == (case["clean"] or "")
    if "text" in case:
        assert _names.cached_clean_text(case["text"]) == (case["clean"] or "")
        assert _counter.counter_line(case["text"], 1, "items") == case["counter_line"]


@pytest.mark.parametrize("case", NAMES, ids=NAME_IDS)
def test_a_phase_name_is_one_the_core_reads_as_that_phase(case):
    """The core reads a clean name written as a mark line as that phase
    (``start``), or as the end of a phase (``/etc``) or a counter
    (``#counter …``): those name no phase in Python either."""
    want = case["clean"] if case["as_line"] == "start" else ""
    assert swapsight.clean_name(raw(case)) == want
    if "text" in case:
        assert _names.cached_clean(case["text"]) == want


@pytest.mark.parametrize("case", NAMES, ids=NAME_IDS)
def test_mark_and_phase_write_only_lines_the_core_reads_as_that_phase(case, mark_file):
    swapsight.mark(raw(case))
    with swapsight.phase(raw(case)):
        pass
    name = case["clean"] if case["as_line"] == "start" else None
    if name:
        assert mark_file.read_lines() == [name, name, "/" + name]
    else:  # not marked; the phase object is "?", as a blank one is
        assert mark_file.read_lines() == ["?", "/?"]


def test_a_refused_name_is_logged_once(mark_file, caplog):
    swapsight.mark("/etc")
    swapsight.mark("/usr")
    assert mark_file.read_lines() == []
    said = [r.getMessage() for r in caplog.records if r.name == "swapsight"]
    assert len(said) == 1 and "cannot start with '/'" in said[0], said


@pytest.mark.parametrize("unit,ok", cases("units"))
def test_a_unit_is_one_the_core_takes(unit, ok):
    assert (_counter.counter_line("x", 1, unit) is not None) == ok


@pytest.mark.parametrize("value,ok", cases("values"))
def test_a_value_is_one_the_core_takes(value, ok):
    for v in (value, float(value)) if not isinstance(value, str) else (float(value),):
        assert (_counter.counter_line("x", v, "items") is not None) == ok, v


@pytest.mark.parametrize("value,text", cases("format_bytes"))
def test_bytes_are_written_as_the_core_writes_them(value, text):
    assert _tables.format_bytes(value) == text


@pytest.mark.parametrize("value,unit,text", cases("figure"))
def test_a_figure_is_written_as_the_core_writes_it(value, unit, text):
    assert _tables.format_figure(value, unit) == text


@pytest.mark.parametrize("text,size", cases("parse_size"))
def test_a_size_is_read_as_the_core_reads_it(text, size):
    if size is None:
        with pytest.raises(ValueError, match="invalid size"):
            _tables.parse_size(text)
    else:
        assert _tables.parse_size(text) == size


def test_the_public_constants_are_the_generated_ones():
    assert swapsight.ENV_VAR == _generated.ENV_VAR == "SWAPSIGHT_MARK"
    assert swapsight.MAX_NAME_CHARS == _generated.MAX_NAME_CHARS
    assert _counter.MAX_VALUE == _generated.MAX_COUNTER_VALUE == 2**53
    assert _names.NOT_PHASE == (_generated.END_PREFIX, _generated.COUNTER_PREFIX)


def test_no_module_states_a_generated_string_again():
    """The mark variable, the line prefixes and the blanks are written in
    _generated.py only: any other module imports them."""
    strings = {
        getattr(_generated, name)
        for name in ("ENV_VAR", "COUNTER_PREFIX", "UNIT_CHARS", "WHITE_SPACE")
    }
    package = Path(swapsight.__file__).parent
    for path in sorted(package.glob("*.py")):
        if path.name == "_generated.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in strings:
                pytest.fail("%s:%d states %r again" % (path.name, node.lineno, node.value))
