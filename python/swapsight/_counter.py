"""counter(): a named figure in the running recording (the samplers that
write a framework's figures as counters, watch_torch() and watch_mlx(), are
in _watch.py).

A counter is one line in the mark file, ``#counter VALUE UNIT NAME`` (the
rule of crates/core/src/record/marks.rs ``counter_line``, its prefix, caps and
unit characters from _generated.py); the recorder writes it to the trace as a
``{"type":"counter",...}`` line at that instant, keeping at most 50 values a
second apart from the marks (the rest are counted in a ``counters-dropped``
event). Without a running recording every call does
nothing; nothing here ever raises into the pipeline (a problem is logged once
on the ``swapsight`` logger).
"""

import math
import re
from typing import Any, Optional

from ._generated import COUNTER_PREFIX, MAX_COUNTER_VALUE, MAX_UNIT_CHARS, UNIT_CHARS
from ._names import cached_clean_text, clean_text
from ._writer import _warn_once, mark_path, write_line

#: The largest magnitude a counter value may have: 2^53 (what a double and
#: the web UI hold exactly as an integer).
MAX_VALUE = MAX_COUNTER_VALUE
_UNIT = re.compile("[%s]{1,%d}\\Z" % (re.escape(UNIT_CHARS), MAX_UNIT_CHARS))
_PREFIX = COUNTER_PREFIX
#: Units already found good ("bytes" first): most calls skip the pattern.
_UNITS_SEEN = {"bytes"}


def _figure(value: Any) -> Optional[str]:
    """``value`` as the line writes it, or None when it is no finite number
    within ±2^53. Through int's and float's own methods: a subclass's
    ``__str__``, ``__format__`` or ``__abs__`` (an enum's ``Color.RED``, a
    second line forged into the mark file, a bound dodged) never counts."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if int.__abs__(value) > MAX_VALUE:
            return None
        return int.__repr__(value)
    value = float.__float__(value) if isinstance(value, float) else float(value)
    if not math.isfinite(value) or abs(value) > MAX_VALUE:
        return None
    return float.__repr__(value)


def counter_line(name: object, value: Any, unit: object = "bytes") -> Optional[str]:
    """The line that writes a counter, or ``None`` when the name is empty
    once cleaned, the unit is not 1 to 16 of ``A-Z a-z 0-9 _ % / . -`` or
    the value is not a finite number within ±2^53. Raises nothing for a
    str name, a number and a str unit."""
    if type(unit) is not str:
        if not isinstance(unit, str):
            return None
        # Its characters, not its own __eq__ and __hash__ (which could pass
        # for a unit already seen).
        unit = str.__str__(unit)
    if unit not in _UNITS_SEEN:
        if not _UNIT.match(unit):
            return None
        if len(_UNITS_SEEN) < 64:
            _UNITS_SEEN.add(unit)
    figure = _figure(value)
    if figure is None:
        return None
    text = cached_clean_text(name) if type(name) is str else clean_text(name)
    if not text:
        return None
    return _PREFIX + figure + " " + unit + " " + text


def counter(name: object, value: Any, unit: object = "bytes") -> None:
    """Writes ``value`` of counter ``name`` into the running recording now:
    ``swapsight.counter("queue", len(q), unit="items")``. Without a
    recording it does nothing; a bad value or unit is dropped and logged
    once. Never raises, never blocks."""
    path = mark_path()
    if not path:
        return
    try:
        line = counter_line(name, value, unit)
    except Exception as e:  # a float() or str() that raises
        _warn_once("swapsight: counter %r not written: %s", name, e)
        return
    if line is None:
        _warn_once(
            "swapsight: counter %r not written: the name is empty, the unit %r is "
            "not 1 to %d of A-Z a-z 0-9 _ %% / . -, or the value %r is not a "
            "finite number within 2**53",
            name,
            unit,
            MAX_UNIT_CHARS,
            value,
        )
        return
    write_line(path, line)
