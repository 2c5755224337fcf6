//! Text from outside swapsight — process names and command lines, every
//! string of a trace, file names — and the one rule that makes it safe to
//! show in a terminal, an SVG (XML), a CSV cell, the UI and `/metrics`.
//!
//! A process chooses its own name and arguments and a trace may come from
//! anywhere, so such text may hold terminal escapes (`ESC]52;c;…BEL` writes
//! the clipboard, `ESC[2J` clears the screen), characters XML forbids, or a
//! bidi override that shows `exe.txt` for `txt.exe`. Each such character is
//! replaced one for one by [`REPLACEMENT`], as `ps` shows control
//! characters: the text keeps its length and shows that something was there.

use std::borrow::Cow;

/// What a replaced character becomes.
pub const REPLACEMENT: char = '?';

/// Whether `c` is replaced in text from outside:
///
/// - **control characters** (`char::is_control`, Unicode `Cc`): C0
///   (U+0000–U+001F, tab and newline too), DEL (U+007F) and C1
///   (U+0080–U+009F, where U+009B is an 8-bit CSI). They drive terminals,
///   break lines of a report or a CSV row, and XML 1.0 forbids most of them;
/// - **bidi controls** (the Unicode `Bidi_Control` property): U+061C,
///   U+200E, U+200F, U+202A–U+202E, U+2066–U+2069. They reorder the text
///   around them, so what is shown is not what is there (CVE-2021-42574,
///   "Trojan Source"); `is_control` does not catch them (they are `Cf`);
/// - **line and paragraph separators** U+2028, U+2029: many renderers break
///   the line there, so one name could forge a second line of a report;
/// - **deprecated format controls** U+206A–U+206F: they change how the
///   characters after them are shaped and mirrored;
/// - **interlinear annotation** U+FFF9–U+FFFB: a renderer that honours them
///   hides the annotation text;
/// - **tags** U+E0000–U+E007F: invisible copies of ASCII that carry hidden
///   text ("ASCII smuggling"). The price: the three subdivision flags
///   (England, Scotland, Wales) show as a black flag followed by `?`s.
///
/// Kept, because ordinary text needs them and they hide or reorder nothing:
/// ZWNJ and ZWJ (U+200C, U+200D: Persian and Indic shaping, emoji
/// sequences such as 👩‍💻), variation selectors (emoji presentation), and the
/// invisible breaks U+200B, U+2060, U+00AD and U+FEFF (Thai and Khmer mark
/// word breaks with U+200B). They can make two names look alike, as
/// look-alike letters (Cyrillic `а` for Latin `a`) can: no character rule
/// tells those apart.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{206A}'..='\u{206F}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// `c`, or [`REPLACEMENT`] when it [`is_unsafe`].
pub fn safe_char(c: char) -> char {
    if is_unsafe(c) {
        REPLACEMENT
    } else {
        c
    }
}

/// `s` with every unsafe character replaced; borrowed when there is none
/// (the common case: a trace's names are cleaned as they are read).
pub fn clean(s: &str) -> Cow<'_, str> {
    if s.chars().any(is_unsafe) {
        Cow::Owned(s.chars().map(safe_char).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// [`clean`] in place, for the fields of a record (a `String`, or shared
/// text such as a process's name): replaced only where cleaning changed it.
pub fn clean_in_place<T: AsRef<str> + From<String>>(s: &mut T) {
    if let Cow::Owned(cleaned) = clean(s.as_ref()) {
        *s = cleaned.into();
    }
}

/// A text cell from outside (a process name, a phase, a run's label or
/// host) for every CSV swapsight writes: one a spreadsheet would take for a
/// formula — it starts with `=`, `+`, `-`, `@`, a tab or a carriage return —
/// gets a leading `'`, as OWASP recommends against CSV injection, so that a
/// process named `=HYPERLINK(…)` stays text. Figures swapsight writes
/// itself never pass here: a negative swap growth stays a number.
pub fn text_cell(s: &str) -> Cow<'_, str> {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
