use std::io::Cursor;

use super::*;

fn lines(input: &[u8], max: usize) -> Vec<String> {
    let mut r = Cursor::new(input.to_vec());
    let mut out = Vec::new();
    loop {
        match read_line(&mut r, max).unwrap() {
            Line::Eof => return out,
            Line::TooLong => out.push("<too long>".into()),
            Line::Text(t) => out.push(String::from_utf8(t).unwrap()),
        }
    }
}

#[test]
fn lines_are_read_whole_and_a_long_one_is_dropped_to_its_end() {
    assert_eq!(lines(b"ab\ncd", 4), ["ab", "cd"]);
    assert_eq!(lines(b"abcdefgh\nxy\n", 4), ["<too long>", "xy"]);
    assert_eq!(lines(b"abcd\n", 4), ["abcd"]);
    assert_eq!(lines(b"abcde", 4), ["<too long>"]);
    assert!(lines(b"", 4).is_empty());
}

#[test]
fn a_known_version_is_kept_and_any_other_gets_the_newest() {
    assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
    assert_eq!(negotiate(Some("2024-11-05")), "2024-11-05");
    assert_eq!(negotiate(Some("1999-01-01")), PROTOCOL_VERSIONS[0]);
    assert_eq!(negotiate(None), PROTOCOL_VERSIONS[0]);
}
