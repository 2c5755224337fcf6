"""Phase and counter names cleaned the way swapsight's recorder cleans them.

The rule is crates/core/src/record/marks.rs `clean_name` with text.rs
`is_unsafe`, whose tables and caps come from the Rust side (_generated.py):
invalid UTF-8 becomes U+FFFD, surrounding blanks (Unicode White_Space) are
trimmed, control characters (Cc) and bidi/invisible format characters become
'?', the name is cut to 64 characters and trimmed again. A clean name that
starts as another line of the mark file does (``/``, the end of a phase, or
``#counter ``) names no phase: the recorder would read that line as such.
"""

import re
from typing import Callable, Dict

from ._generated import (
    COUNTER_PREFIX,
    END_PREFIX,
    MAX_NAME_CHARS,
    REPLACEMENT,
    UNSAFE_RANGES,
    WHITE_SPACE,
)

# Rust's char::is_whitespace (the White_Space property), which str::trim uses.
# Python's str.strip() also strips U+001C..U+001F, so the set is spelled out.
_WHITE_SPACE = WHITE_SPACE

# text.rs is_unsafe: char::is_control (general category Cc) and the bidi and
# invisible format characters.
_UNSAFE = re.compile(
    "[%s]" % "".join(re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in UNSAFE_RANGES)
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_ESCAPE = re.compile("[\ud800-\udc7f\udd00-\udfff]")

# Enough characters to hold 64 after invalid bytes are merged (up to four
# escaped bytes make one character).
_PREFIX = 4 * MAX_NAME_CHARS + 16


def _lossy(text: str) -> str:
    """Lone surrogates as Rust's from_utf8_lossy would see them: bytes escaped
    by Python's surrogateescape (U+DC80..U+DCFF) are decoded again with U+FFFD
    for what is invalid; any other lone surrogate is U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    text = _NOT_ESCAPE.sub("\ufffd", text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


_CACHE: Dict[str, str] = {}
_TEXT_CACHE: Dict[str, str] = {}
_CACHE_SIZE = 4096


def _remembered(cache: Dict[str, str], clean: Callable[[str], str], text: str) -> str:
    cleaned = cache.get(text)
    if cleaned is None:
        cleaned = clean(text)
        if len(text) <= 4 * _PREFIX:
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[text] = cleaned
    return cleaned


def cached_clean(text: str) -> str:
    """clean_name for a str, remembered: a pipeline uses a few names over and
    over, and phase() must stay cheap."""
    return _remembered(_CACHE, clean_name, text)


def cached_clean_text(text: str) -> str:
    """clean_text for a str, remembered, for counter(): its names repeat too."""
    return _remembered(_TEXT_CACHE, clean_text, text)


#: What a phase name cannot start with: the recorder reads a line that starts
#: so as the end of a phase (``/`` or ``/NAME``) or as a counter.
NOT_PHASE = (END_PREFIX, COUNTER_PREFIX)


def clean_name(name: object) -> str:
    """``name`` as the trace will show it as a phase; ``""`` when it names no
    phase: nothing is left, or the clean name starts with ``/`` or
    ``#counter `` (:data:`NOT_PHASE`), which the recorder reads as the end of
    a phase or as a counter (``swapsight mark /etc`` refuses the first too).

    Not a str: ``str(name)`` (bytes are decoded as UTF-8 with U+FFFD for what
    is invalid). Never raises for a str or bytes.
    """
    text = clean_text(name)
    return "" if text.startswith(NOT_PHASE) else text


def clean_text(name: object) -> str:
    """``name`` cleaned as the recorder cleans any name (marks.rs
    ``clean_name``): a counter's name as the trace will show it, a leading
    ``/`` kept (a counter line is no phase line)."""
    if isinstance(name, (bytes, bytearray, memoryview)):
        text = bytes(name[: _PREFIX * 4]).decode("utf-8", "replace")
    elif isinstance(name, str):
        text = name
    else:
        text = str(name)
    text = _lossy(text.lstrip(_WHITE_SPACE)[:_PREFIX]).strip(_WHITE_SPACE)
    return _UNSAFE.sub(REPLACEMENT, text[:MAX_NAME_CHARS]).strip(_WHITE_SPACE)
