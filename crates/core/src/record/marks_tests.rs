use super::*;
use std::time::Duration;

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

struct Base {
    parent: std::path::PathBuf,
    dir: RuntimeDir,
}

impl Base {
    fn new(tag: &str) -> Base {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let parent =
            std::env::temp_dir().join(format!("swapsight-marks-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir_all(&parent).unwrap();
        let dir = private_dir_in(&parent, "swapsight").unwrap();
        Base { parent, dir }
    }
}

impl Drop for Base {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.parent);
    }
}

/// Polls until `n` marks came in or two seconds passed: the reader takes
/// them on its own thread.
fn poll_for(inbox: &mut MarkInbox, n: usize) -> Vec<MarkLine> {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut got = Vec::new();
    while got.len() < n && Instant::now() < deadline {
        got.extend(inbox.poll());
        std::thread::sleep(Duration::from_millis(20));
    }
    got
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn the_inbox_reads_truncating_and_appending_writers() {
    let base = Base::new("writers");
    let trace = base.parent.join("t.jsonl");
    let mut inbox = MarkInbox::create_in(&base.dir, &trace).unwrap();
    assert_eq!(inbox.poll(), vec![]);
    // `>` twice with names of the same length, then `>>`.
    std::fs::write(inbox.path(), b"aaaa\n").unwrap();
    assert_eq!(
        poll_for(&mut inbox, 1),
        vec![MarkLine::Start("aaaa".into())]
    );
    std::fs::write(inbox.path(), b"bbbb\n").unwrap();
    write_mark(inbox.path(), "/").unwrap();
    assert_eq!(
        poll_for(&mut inbox, 2),
        vec![MarkLine::Start("bbbb".into()), MarkLine::End(None)]
    );
    let found = running_in(&base.dir);
    assert!(
        found.iter().any(|r| r.mark_path == inbox.path()),
        "{found:?}"
    );
    // The last mark, written just before the end, is not lost.
    write_mark(inbox.path(), "last").unwrap();
    assert_eq!(inbox.finish(), vec![MarkLine::Start("last".into())]);
    assert!(!running_in(&base.dir)
        .iter()
        .any(|r| r.mark_path == inbox.path()));
    // After the recorder is done, a write still succeeds.
    write_mark(inbox.path(), "late").unwrap();
}

#[test]
fn a_fifo_at_the_mark_path_never_blocks_the_recorder() {
    // Regression: `mkfifo "$SWAPSIGHT_MARK"` froze record and guard for good.
    let base = Base::new("fifo");
    let mut inbox = MarkInbox::create_in(&base.dir, &base.parent.join("t.jsonl")).unwrap();
    mkfifo(inbox.path());
    let t = Instant::now();
    // The reader takes the FIFO away and refuses it; marks work again after.
    let deadline = Instant::now() + Duration::from_secs(2);
    while inbox.dropped() == 0 && Instant::now() < deadline {
        assert_eq!(inbox.poll(), vec![]);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(inbox.dropped(), 1, "the FIFO is refused and counted");
    write_mark(inbox.path(), "after").unwrap();
    assert_eq!(
        poll_for(&mut inbox, 1),
        vec![MarkLine::Start("after".into())]
    );
    assert!(inbox.finish().is_empty());
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[test]
fn a_link_to_dev_zero_is_not_read() {
    // Regression: `ln -s /dev/zero "$SWAPSIGHT_MARK"` spun the recorder at
    // 100 % CPU for good.
    let base = Base::new("zero");
    let mut inbox = MarkInbox::create_in(&base.dir, &base.parent.join("t.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", inbox.path()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while inbox.dropped() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(inbox.dropped(), 1);
    assert!(inbox.poll().is_empty());
    // `swapsight mark` refuses to write through such a link too.
    std::os::unix::fs::symlink("/dev/null", inbox.path()).unwrap();
    assert!(write_mark(inbox.path(), "x").is_err());
    assert!(inbox.finish().is_empty());
}

#[test]
fn a_huge_write_is_cut_at_the_cap_and_never_read_on() {
    let base = Base::new("huge");
    let mut inbox = MarkInbox::create_in(&base.dir, &base.parent.join("t.jsonl")).unwrap();
    let line = "phase-name-of-some-length\n";
    let big = line.repeat((4 * MAX_READ_BYTES as usize) / line.len());
    std::fs::write(inbox.path(), &big).unwrap();
    let got = poll_for(&mut inbox, MAX_PER_SECOND as usize);
    assert_eq!(got.len(), MAX_PER_SECOND as usize, "the burst is kept");
    std::thread::sleep(Duration::from_millis(300));
    let read_lines = (MAX_READ_BYTES as usize / line.len()) as u64;
    let written_lines = (big.len() / line.len()) as u64;
    // Over the rate: the lines read past the burst, and the cut write. Not
    // the whole file: the rest past the cap is never read.
    let dropped = inbox.dropped();
    assert!(
        dropped >= read_lines - u64::from(MAX_PER_SECOND),
        "{dropped}"
    );
    assert!(
        dropped < 2 * read_lines && dropped < written_lines / 2,
        "{dropped}"
    );
    assert!(
        inbox.poll().is_empty(),
        "the rest of the file is never read"
    );
}

#[test]
fn a_registration_whose_pid_was_reused_is_not_running() {
    // Regression: a recorder killed with SIGKILL left its registration, and
    // `mark` wrote to it whenever its pid was alive again.
    let base = Base::new("reused");
    let name = format!("rec-{}-1", std::process::id());
    let dir = base.dir.path.join(&name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("trace"), "/tmp/old.jsonl").unwrap();
    // Our pid, another process's start time.
    std::fs::write(dir.join("start"), "1").unwrap();
    assert!(running_in(&base.dir).is_empty());
    if let Some(start) = crate::probe::start_time(std::process::id()) {
        std::fs::write(dir.join("start"), start.to_string()).unwrap();
        assert_eq!(running_in(&base.dir).len(), 1);
    }
}

#[test]
fn a_relative_trace_not_yet_written_is_found_by_the_same_name() {
    // Regression: `record -o run.jsonl` registered before the file existed,
    // and `mark --trace run.jsonl` never matched it.
    let base = Base::new("relative");
    std::fs::create_dir(base.parent.join("sub")).unwrap();
    let key_before = trace_key(&base.parent.join("sub/../run.jsonl"));
    std::fs::write(base.parent.join("run.jsonl"), "").unwrap();
    assert_eq!(key_before, trace_key(&base.parent.join("run.jsonl")));
    assert!(key_before.is_absolute());
    assert_eq!(
        trace_key(Path::new("run.jsonl")),
        std::env::current_dir()
            .unwrap()
            .canonicalize()
            .unwrap()
            .join("run.jsonl")
    );
}

#[test]
fn folders_others_could_swap_are_not_trusted() {
    let me = 1000;
    assert!(parent_is_safe(me, 0o700, me));
    assert!(parent_is_safe(0, 0o1777, me), "/tmp: root's and sticky");
    assert!(parent_is_safe(0, 0o755, me), "/run");
    assert!(
        !parent_is_safe(0, 0o777, me),
        "root's but anyone renames in it"
    );
    assert!(
        !parent_is_safe(1001, 0o700, me),
        "another user's XDG_RUNTIME_DIR"
    );
    assert!(is_private(me, 0o40700, me));
    assert!(!is_private(me, 0o40750, me));
    assert!(!is_private(1001, 0o40700, me));
}

#[test]
fn another_users_folder_is_refused_as_the_runtime_dir() {
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "runs as root in CI"
        );
        return;
    }
    // Their XDG_RUNTIME_DIR (after `su` without `-`): not used at all.
    let base = Base::new("theirs");
    let theirs = base.parent.join("xdg");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let err = private_dir_in(&theirs, "swapsight").unwrap_err();
    assert!(err.to_string().contains("uid 65534"), "{err}");
    // A `swapsight-UID` they made first in a folder we may use: refused.
    let planted = base.parent.join("swapsight-0");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
    let err = private_dir_in(&base.parent, "swapsight-0").unwrap_err();
    assert!(err.to_string().contains("not a private directory"), "{err}");
    // A link in its place, even to a private folder of ours: refused.
    std::os::unix::fs::symlink(&base.dir.path, base.parent.join("link")).unwrap();
    assert!(private_dir_in(&base.parent, "link").is_err());
}

#[test]
fn a_bidi_override_in_a_mark_is_replaced() {
    assert_eq!(
        clean_name("load\u{202e}ing".as_bytes()),
        Some("load?ing".into())
    );
}

#[test]
fn counter_lines_are_parsed_and_bad_ones_dropped() {
    let line = counter_line("mps driver\u{7}", 1234.0, "bytes").unwrap();
    assert_eq!(line, "#counter 1234 bytes mps driver?");
    assert_eq!(
        parse_line(line.as_bytes()),
        Some(MarkLine::Counter {
            name: "mps driver?".into(),
            value: 1234.0,
            unit: "bytes".into()
        })
    );
    assert_eq!(
        parse_line(b"#counter 2.5 items queue"),
        Some(MarkLine::Counter {
            name: "queue".into(),
            value: 2.5,
            unit: "items".into()
        })
    );
    for bad in [
        &b"#counter NaN bytes x"[..],
        b"#counter inf bytes x",
        b"#counter 1e300 bytes x",
        b"#counter 1 by\xfftes x",
        b"#counter 1 bytes",
        b"#counter 1 bytes    ",
        b"#counter x bytes y",
        b"#counter 1 averyveryverylongunit x",
    ] {
        assert_eq!(parse_line(bad), None, "{}", String::from_utf8_lossy(bad));
    }
    // Not the prefix: a phase, as before counters.
    assert_eq!(
        parse_line(b"#counterfeit"),
        Some(MarkLine::Start("#counterfeit".into()))
    );
    assert_eq!(counter_line("", 1.0, "bytes"), None);
    assert_eq!(counter_line("x", f64::NAN, "bytes"), None);
    assert_eq!(counter_line("x", 1.0, "a b"), None);
}

#[test]
fn recordings_started_in_the_same_millisecond_get_inboxes_of_their_own() {
    let base = Base::new("same-ms");
    let inboxes: Vec<MarkInbox> = (0..8)
        .map(|i| MarkInbox::create_in(&base.dir, &base.parent.join(format!("t{i}.jsonl"))).unwrap())
        .collect();
    let paths: std::collections::BTreeSet<_> =
        inboxes.iter().map(|b| b.path().to_owned()).collect();
    assert_eq!(paths.len(), inboxes.len(), "{paths:?}");
}

#[test]
fn a_name_is_a_phase_unless_the_line_would_read_as_an_end_or_a_counter() {
    for (name, want) in [
        ("decode", None),
        ("a/b", None),
        ("/etc", Some(NotAPhase::End)),
        ("#counter 1 items x", Some(NotAPhase::Counter)),
        ("#counter", None),
    ] {
        assert_eq!(not_a_phase(name), want, "{name:?}");
        // The rule is parse_line's own.
        let read = parse_line(name.as_bytes());
        assert_eq!(
            matches!(read, Some(MarkLine::Start(ref p)) if p == name),
            want.is_none(),
            "{name:?} reads as {read:?}"
        );
    }
}

#[test]
fn an_inbox_nobody_writes_to_never_looks_and_a_write_rings_at_once() {
    let base = Base::new("watch");
    let (ringer, bell) = crate::util::bell::bell();
    let mut inbox = MarkInbox::create_in(&base.dir, &base.parent.join("t.jsonl")).unwrap();
    inbox.ring_on_marks(ringer);
    assert!(inbox.watching(), "the mark folder is not watched here");
    // On the old 50 ms timer this was six looks.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(inbox.looks(), 0, "looked with nothing written");
    write_mark(inbox.path(), "decode").unwrap();
    assert!(bell.wait(Duration::from_secs(10)), "a mark did not ring");
    assert_eq!(inbox.poll(), vec![MarkLine::Start("decode".into())]);
    // The look, then one more for a writer that had the file open; the
    // reader's own rename and unlink do not keep it looking.
    std::thread::sleep(Duration::from_millis(300));
    let looks = inbox.looks();
    assert!((1..=3).contains(&looks), "{looks} looks for one mark");
    // A burst of writes is read in few looks, every line kept.
    for i in 0..20 {
        write_mark(inbox.path(), &format!("p{i}")).unwrap();
    }
    let got = poll_for(&mut inbox, 20);
    assert_eq!(got.len(), 20, "{got:?}");
    assert!(
        inbox.looks() - looks <= 10,
        "{} looks for a burst",
        inbox.looks() - looks
    );
}

/// A registration folder `name` under `base`, last written two days ago.
fn quiet_two_days(base: &Base, name: String) -> String {
    let two_days_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    let dir = base.dir.path.join(&name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("start"), "1").unwrap();
    std::fs::File::open(&dir)
        .unwrap()
        .set_modified(two_days_ago)
        .unwrap();
    name
}

/// The folders are looked through at most hourly: a stale one made after a
/// look stays until the look is an hour old.
#[test]
fn stale_folders_are_looked_for_at_most_hourly() {
    let base = Base::new("swept");
    registry::remove_stale(&base.dir);
    let swept = base.dir.path.join("swept");
    assert!(swept.is_file(), "the look is not noted");
    let mut child = std::process::Command::new("/bin/true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let long_ago = crate::util::units::unix_now_ms() - 2 * 24 * 3600 * 1000;
    let stale = base
        .dir
        .path
        .join(quiet_two_days(&base, format!("rec-{dead}-{long_ago}")));
    registry::remove_stale(&base.dir);
    assert!(stale.exists(), "looked through again within the hour");
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    let noted = std::fs::File::options().write(true).open(&swept).unwrap();
    noted.set_modified(two_hours_ago).unwrap();
    registry::remove_stale(&base.dir);
    assert!(!stale.exists(), "not looked through after an hour");
    let age = std::fs::metadata(&swept)
        .unwrap()
        .modified()
        .unwrap()
        .elapsed();
    assert!(
        age.unwrap_or_default() < Duration::from_secs(60),
        "the look not noted again"
    );
}

/// A FIFO where the sweep's note goes does not hold a recorder's start: the
/// note is opened without blocking (a writer's open of a FIFO waits for a
/// reader).
#[test]
fn a_fifo_in_the_swept_notes_place_does_not_block_the_sweep() {
    let base = Base::new("swept-fifo");
    let swept = base.dir.path.join("swept");
    let c = std::ffi::CString::new(swept.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Two hours old, so that the sweep is due and the note written.
    let two_hours_ago = rustix::fs::Timespec {
        tv_sec: (crate::util::units::unix_now_ms() / 1000 - 2 * 3600) as _,
        tv_nsec: 0,
    };
    rustix::fs::utimensat(
        rustix::fs::CWD,
        &swept,
        &rustix::fs::Timestamps {
            last_access: two_hours_ago,
            last_modification: two_hours_ago,
        },
        rustix::fs::AtFlags::empty(),
    )
    .unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let dir = RuntimeDir {
        fd: base.dir.fd.try_clone().unwrap(),
        path: base.dir.path.clone(),
    };
    std::thread::spawn(move || {
        registry::remove_stale(&dir);
        let _ = done.send(());
    });
    let ended = finished.recv_timeout(Duration::from_secs(10)).is_ok();
    if !ended {
        // Lets the stuck sweep go before the test fails.
        let _ = std::fs::File::open(&swept);
    }
    assert!(ended, "the sweep waited on the FIFO");
}

/// A folder is removed once its recorder is gone and it was quiet a day;
/// one its name says was made within the day is passed over unread (ended
/// recorders leave theirs for late writers), and a live recorder's stays.
#[test]
fn stale_folders_go_and_young_or_live_ones_stay() {
    let base = Base::new("stale");
    let mut child = std::process::Command::new("/bin/true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let day_ms = 24 * 3600 * 1000;
    let now = crate::util::units::unix_now_ms();
    let made = |name: String| quiet_two_days(&base, name);
    let stale = made(format!("rec-{dead}-{}", now - 2 * day_ms));
    let young = made(format!("rec-{dead}-{}", now - 1000));
    let live = made(format!("rec-{}-{}", std::process::id(), now - 2 * day_ms));
    registry::remove_stale(&base.dir);
    let left: std::collections::BTreeSet<String> = std::fs::read_dir(&base.dir.path)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!left.contains(&stale), "{left:?}");
    assert!(left.contains(&young), "{left:?}");
    assert!(left.contains(&live), "{left:?}");
}
