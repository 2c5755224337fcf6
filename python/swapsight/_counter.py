"""counter(): a named figure in the running recording (the samplers that
write a framework's figures as counters, watch_torch() and watch_mlx(), are
in _watch.py).

A counter is one line in the mark file, ``#counter VALUE UNIT NAME`` (the
rule of crates/core/src/record/marks.rs ``counter_line``, its prefix, caps and
unit characters from _generated.py); the recorder writes it to the trace as a
``{"type":"counter",...}`` line at that instant, keeping at most 50 values a
second apart from the marks (the rest are counted in a ``counters-dropped``
event). Without a running recording every call does
nothing; nothing here ever raises into the pipeline (each kind of mistake, a
bad unit, a bool, a value that is no number, not finite or too large, a
blank name, is logged once on the ``swapsight`` logger).
"""

import math
import re
import reprlib
from typing import Any, Optional, Tuple

from ._generated import COUNTER_PREFIX, MAX_COUNTER_VALUE, MAX_UNIT_CHARS, UNIT_CHARS
from ._names import cached_clean_text, clean_text
from ._writer import mark_path, warn_once, write_line

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


def _why_not(name: object, value: Any, unit: object) -> Tuple[str, str]:
    """Why ``counter_line(name, value, unit)`` gave no line: the kind of
    mistake (each is logged once) and its one line. Only on the slow path,
    after a counter was refused."""
    if not isinstance(unit, str) or not _UNIT.match(str.__str__(unit)):
        return "unit", "the unit %s is not 1 to %d of A-Z a-z 0-9 _ %% / . -" % (
            reprlib.repr(unit),
            MAX_UNIT_CHARS,
        )
    if isinstance(value, bool):
        return "bool", "the value %s is a bool, not a number" % reprlib.repr(value)
    try:
        figure = float(value) if not isinstance(value, int) else None
    except Exception:  # float() refused it: a str that is no number, None, …
        why = "the value %s is not a number (an int or what float() takes)"
        return "number", why % reprlib.repr(value)
    if figure is not None and not math.isfinite(figure):
        return "finite", "the value %s is not finite" % reprlib.repr(value)
    try:
        within = _figure(value) is not None
    except Exception:  # a float() or abs() of its own that raises
        within = True
    if not within:
        return "range", "the value %s is beyond 2**53 either way" % reprlib.repr(value)
    try:
        clean_text(name)
    except Exception:
        return "name", "the name's str() raised"
    return "name", "the name is blank once cleaned"


def counter(name: object, value: Any, unit: object = "bytes") -> None:
    """Writes ``value`` of counter ``name`` into the running recording now:
    ``swapsight.counter("queue", len(q), unit="items")``. Without a
    recording it does nothing; a bad value or unit is dropped, each kind of
    mistake logged once. Never raises, never blocks."""
    path = mark_path()
    if not path:
        return
    try:
        line = counter_line(name, value, unit)
    except Exception:  # a float() or str() that raises
        line = None
    if line is None:
        try:
            kind, why = _why_not(name, value, unit)
            # Formatted here: logging formats later, and a repr() that
            # raises there prints a traceback instead of the line.
            text = "swapsight: counter %s not written: %s" % (reprlib.repr(name), why)
        except Exception:  # a repr() that raises: never into the pipeline
            kind, text = "repr", "swapsight: a counter was not written (its repr() raised)"
        warn_once("counter-" + kind, "%s", text)
        return
    write_line(path, line)
