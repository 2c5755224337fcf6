# Generated from crates/core/tests/python_contract.rs: do not edit by hand
# (SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight --test python_contract).
"""What the module shares with the recorder (crates/core), read from the
Rust side itself: the mark file's variable and lines, its caps, and the
tables of the name cleaning."""

#: The environment variable that holds the mark path (marks::ENV_VAR).
ENV_VAR = "SWAPSIGHT_MARK"
#: Longest phase or counter name kept, in characters (marks::MAX_NAME_CHARS).
MAX_NAME_CHARS = 64
#: What starts a counter line, ``#counter VALUE UNIT NAME`` (marks::COUNTER_PREFIX).
COUNTER_PREFIX = "#counter "
#: What starts a line that ends the phase (``/`` or ``/NAME``, marks::parse_line):
#: a phase name cannot start with it.
END_PREFIX = "/"
#: Longest counter unit, in characters (marks::MAX_UNIT_CHARS).
MAX_UNIT_CHARS = 16
#: The characters of a counter unit (marks::is_unit).
UNIT_CHARS = "%-./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
#: The largest magnitude of a counter value, 2^53 (marks::is_counter_value,
#: units::MAX_BYTES).
MAX_COUNTER_VALUE = 9007199254740992
#: Marks a second the recorder keeps (marks::MAX_PER_SECOND).
MAX_MARKS_PER_SECOND = 50
#: Counter values a second the recorder keeps, apart from the marks
#: (marks::MAX_COUNTERS_PER_SECOND).
MAX_COUNTERS_PER_SECOND = 50
#: What an unsafe character of a name becomes (text::REPLACEMENT).
REPLACEMENT = "?"
#: The unsafe characters, as (first, last) code points (text::is_unsafe).
UNSAFE_RANGES = (
    (0x0000, 0x001F),
    (0x007F, 0x009F),
    (0x061C, 0x061C),
    (0x200E, 0x200F),
    (0x2028, 0x202E),
    (0x2066, 0x206F),
    (0xFFF9, 0xFFFB),
    (0xE0000, 0xE007F),
)
#: The blanks trimmed around a name: char::is_whitespace (Unicode
#: White_Space), what str::trim trims in marks::clean_name.
WHITE_SPACE = "\x09\x0a\x0b\x0c\x0d \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
