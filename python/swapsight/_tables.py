"""Figures as swapsight's command line writes them, and the report's tables
as plain rows, for the HTML view and ``to_pandas()``."""

import math
from typing import Any, Dict, Iterable, List, Mapping

from ._generated import WHITE_SPACE

_GIB = float(1 << 30)
_MIB = float(1 << 20)


def format_bytes(value: Any) -> str:
    """``value`` bytes as ``swapsight report`` writes them (``format_bytes``
    in crates/core/src/util/units.rs): ``1.2 GiB``, ``300 MiB``, ``12 KiB``,
    binary units under their binary names (docs/units.md). What is not a number is shown as it is."""
    try:
        # The CLI casts to an integer first (toward zero): so does this.
        b = int(float(value))
    except (TypeError, ValueError, OverflowError):
        return str(value)
    sign = "-" if b < 0 else ""
    a = float(abs(b))
    if a >= _GIB:
        return "%s%.1f GiB" % (sign, a / _GIB)
    if a >= _MIB:
        return "%s%.0f MiB" % (sign, a / _MIB)
    return "%s%.0f KiB" % (sign, a / 1024.0)


def format_figure(value: Any, unit: Any) -> str:
    """A counter's value as the report writes it (``figure`` in
    crates/core/src/record/counters.rs): bytes as :func:`format_bytes`,
    another unit as the number and the unit, ``12 items``, ``0.25 s``."""
    if unit == "bytes":
        return format_bytes(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "%s %s" % (value, unit)
    if v != v or v in (float("inf"), float("-inf")):
        return "%s %s" % (v, unit)
    text = "%.0f" % v if v == int(v) else "%.2f" % v
    return "%s %s" % (text, unit)


def flat_rows(rows: Iterable[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """``rows`` with nothing nested, one plain column per figure: a dict
    (``pressure``) becomes ``pressure_peak``, ``pressure_warning_ms``, …;
    a row's ``counters`` become ``counter_peak:NAME:UNIT`` and
    ``counter_last:NAME:UNIT`` (the columns ``swapsight compare`` writes in
    its CSV), so that a DataFrame's cells are numbers and words."""
    return [_flat(row) for row in rows]


def _flat(row: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in row.items():
        name = prefix + str(key)
        if isinstance(value, Mapping):
            out.update(_flat(value, name + "_"))
        elif key == "counters" and isinstance(value, list):
            for c in value:
                if not isinstance(c, Mapping):
                    continue
                tag = "%s:%s" % (c.get("name"), c.get("unit"))
                out["counter_peak:" + tag] = c.get("peak")
                out["counter_last:" + tag] = c.get("last")
        else:
            out[name] = value
    return out


_SHIFTS = {"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20}
_SHIFTS.update({"g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40})
_SHIFTS.update({"p": 50, "pb": 50, "pib": 50})


def parse_size(text: Any) -> int:
    """A size as ``swapsight`` reads one (``parse_size`` in units.rs, checked
    against it on python/tests/generated_cases.json): bytes as an ``int``,
    or ``"1 GB"``, ``"512M"``, ``"8GiB"`` — binary units, ``1 GB`` = 1024³
    bytes, rounded half away from zero, below 2^64. Raises ``ValueError``
    quoting ``text``."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise ValueError("invalid size %r: a size is not negative" % (text,))
        return text
    if not isinstance(text, str):
        raise ValueError("invalid size %r: expected a number with a unit, like 8G or 512M" % (text,))
    # Rust's str::trim, ASCII digits and '.' (str.isdigit() takes other
    # scripts' digits too), and ASCII case.
    s = text.strip(WHITE_SPACE)
    end = 0
    while end < len(s) and s[end] in "0123456789.":
        end += 1
    try:
        number = float(s[:end])
    except ValueError:
        raise ValueError(
            "invalid size %r: expected a number with a unit, like 8G or 512M" % (text,)
        ) from None
    unit = s[end:].strip(WHITE_SPACE)
    if unit.isascii():
        unit = unit.lower()
    shift = _SHIFTS.get(unit)
    if shift is None:
        raise ValueError(
            "invalid size %r: unknown unit %r (use B, K, M, G, T or P; KiB, MiB, GiB also work)"
            % (text, unit)
        )
    size = number * float(1 << shift)
    if not math.isfinite(size) or size >= 2.0**64:
        raise ValueError("invalid size %r: too large" % (text,))
    whole = math.floor(size)
    return int(whole) + (1 if size - whole >= 0.5 else 0)
