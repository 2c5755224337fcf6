use super::*;

#[test]
fn names_are_cleaned_and_cut() {
    assert_eq!(clean_name(b"  decode \r"), Some("decode".into()));
    assert_eq!(clean_name(b"a\x1bb\x00c"), Some("a?b?c".into()));
    assert_eq!(clean_name(b"\xff\xfeok"), Some("\u{fffd}\u{fffd}ok".into()));
    assert_eq!(clean_name(b"   "), None);
    let long = "é".repeat(200);
    assert_eq!(
        clean_name(long.as_bytes()).unwrap().chars().count(),
        MAX_NAME_CHARS
    );
    assert_eq!(parse_line(b"/"), Some(MarkLine::End(None)));
    assert_eq!(parse_line(b"/x"), Some(MarkLine::End(Some("x".into()))));
    let lines: Vec<_> = split_lines(b"load\n\nencode\n/\ndec").collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3], MarkLine::Start("dec".into()));
}

#[test]
fn the_rate_limit_keeps_a_burst_then_the_rate() {
    let mut r = RateLimit::new(10);
    let t = Instant::now();
    assert_eq!((0..25).filter(|_| r.allow(t)).count(), 10);
    // Half a second later, five more.
    let t2 = t + Duration::from_millis(500);
    assert_eq!((0..25).filter(|_| r.allow(t2)).count(), 5);
}

#[test]
fn the_inbox_reads_truncating_and_appending_writers() {
    let dir = std::env::temp_dir().join(format!("swapsight-marks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    let mut inbox = MarkInbox::create_in(&dir, &trace).unwrap();
    assert_eq!(inbox.poll(), vec![]);
    // `>` twice with names of the same length, then `>>`.
    std::fs::write(inbox.path(), b"aaaa\n").unwrap();
    assert_eq!(inbox.poll(), vec![MarkLine::Start("aaaa".into())]);
    std::fs::write(inbox.path(), b"bbbb\n").unwrap();
    write_mark(inbox.path(), "/").unwrap();
    assert_eq!(
        inbox.poll(),
        vec![MarkLine::Start("bbbb".into()), MarkLine::End(None)]
    );
    let found = running_in(&dir);
    assert!(
        found.iter().any(|r| r.mark_path == inbox.path()),
        "{found:?}"
    );
    inbox.finish();
    assert!(!running_in(&dir).iter().any(|r| r.mark_path == inbox.path()));
    // After the recorder is done, a write still succeeds.
    write_mark(inbox.path(), "late").unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bidi_override_in_a_mark_is_replaced() {
    assert_eq!(
        clean_name("load\u{202e}ing".as_bytes()),
        Some("load?ing".into())
    );
}
