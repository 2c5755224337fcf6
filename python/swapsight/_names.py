"""Phase names cleaned the way swapsight's recorder cleans them.

The rule is crates/core/src/marks.rs `clean_name` with text.rs `is_unsafe`:
invalid UTF-8 becomes U+FFFD, surrounding blanks (Unicode White_Space) are
trimmed, control characters (Cc) and bidi/invisible format characters become
'?', the name is cut to 64 characters and trimmed again. A name that would
start with '/' (which the recorder reads as "end the phase") gets '?' there.
"""

import re
from typing import Callable, Dict

#: Longest phase name kept, in characters (marks.rs MAX_NAME_CHARS).
MAX_NAME_CHARS = 64

# Rust's char::is_whitespace (the White_Space property), which str::trim uses.
# Python's str.strip() also strips U+001C..U+001F, so the set is spelled out.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

# text.rs is_unsafe: char::is_control (general category Cc) and the bidi and
# invisible format characters.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u2028\u2029\u206a-\u206f\ufff9-\ufffb\U000e0000-\U000e007f]"
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


def clean_name(name: object) -> str:
    """``name`` as the trace will show it; ``""`` when nothing is left.

    Not a str: ``str(name)`` (bytes are decoded as UTF-8 with U+FFFD for what
    is invalid). Never raises for a str or bytes.
    """
    text = clean_text(name)
    if text.startswith("/"):
        text = "?" + text[1:]
    return text


def clean_text(name: object) -> str:
    """:func:`clean_name` without the rule for a leading '/' (which only a
    phase line needs): a counter's name as the trace will show it."""
    if isinstance(name, (bytes, bytearray, memoryview)):
        text = bytes(name[: _PREFIX * 4]).decode("utf-8", "replace")
    elif isinstance(name, str):
        text = name
    else:
        text = str(name)
    text = _lossy(text.lstrip(_WHITE_SPACE)[:_PREFIX]).strip(_WHITE_SPACE)
    return _UNSAFE.sub("?", text[:MAX_NAME_CHARS]).strip(_WHITE_SPACE)
