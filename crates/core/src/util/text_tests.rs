use super::*;

#[test]
fn terminal_escapes_are_replaced_one_for_one() {
    assert_eq!(
        clean("\u{1b}]52;c;ZXZpbA==\u{7}x\u{1b}[2J"),
        "?]52;c;ZXZpbA==?x?[2J"
    );
    assert_eq!(clean("a\tb\nc\rd\u{7f}e\u{9b}f\u{0}"), "a?b?c?d?e?f?");
}

#[test]
fn bidi_override_is_replaced_though_not_a_control() {
    assert!(!'\u{202e}'.is_control());
    assert_eq!(clean("evil\u{202e}gpj.exe"), "evil?gpj.exe");
    for c in [
        '\u{061c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
        '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    ] {
        assert!(is_unsafe(c), "{:04x}", c as u32);
    }
}

#[test]
fn separators_annotations_and_tags_are_replaced() {
    for c in [
        '\u{2028}',
        '\u{2029}',
        '\u{206a}',
        '\u{206f}',
        '\u{fff9}',
        '\u{fffb}',
        '\u{e0000}',
        '\u{e0041}',
        '\u{e007f}',
    ] {
        assert_eq!(clean(&format!("a{c}b")), "a?b", "{:04x}", c as u32);
    }
}

#[test]
fn ordinary_text_is_kept_and_borrowed() {
    for s in [
        "python3.12",
        "generate.py (uv run)",
        "Grüße, naïve café",
        "日本語のプロセス",
        "русский",
        "עברית and العربية",
        "हिन्दी",
        "می‌خواهم",
        "ภาษาไทย\u{200b}คำ",
        "👩\u{200d}💻 ❤\u{fe0f} 🇩🇪",
        "",
    ] {
        assert!(matches!(clean(s), Cow::Borrowed(b) if b == s), "{s}");
    }
}

#[test]
fn cleaning_twice_changes_nothing() {
    let once = clean("\u{1b}[31m\u{202e}red\u{2029}").into_owned();
    assert_eq!(clean(&once), once);
    let mut s = "x\u{7}".to_string();
    clean_in_place(&mut s);
    assert_eq!(s, "x?");
}

#[test]
fn text_cells_that_start_a_formula_get_a_quote() {
    for s in ["=1+1", "+1", "-1", "@x", "\tx", "\rx"] {
        assert_eq!(text_cell(s), format!("'{s}"));
    }
    for s in ["python", "", "1-1", "a=b", " =x", "'=x"] {
        assert!(matches!(text_cell(s), Cow::Borrowed(b) if b == s), "{s}");
    }
}
