use super::*;

#[test]
fn a_command_line_is_written_once_while_its_process_stays_kept() {
    let p = |pid: u32, start: u64, cmd: &str| ProcessSample {
        pid,
        start_time: start,
        cmdline: Some(cmd.into()),
        ..ProcessSample::default()
    };
    let cmdlines = |ps: &[ProcessSample]| -> Vec<Option<String>> {
        ps.iter()
            .map(|p| p.cmdline.as_deref().map(str::to_owned))
            .collect()
    };
    let mut once = CmdlineOnce::default();
    let mut s1 = vec![p(1, 10, "python3 a.py"), p(2, 20, "node b.js")];
    once.strip(&mut s1);
    assert_eq!(
        cmdlines(&s1),
        [Some("python3 a.py".into()), Some("node b.js".into())]
    );
    // Same processes: nothing new to say.
    let mut s2 = vec![p(1, 10, "python3 a.py"), p(2, 20, "node b.js")];
    once.strip(&mut s2);
    assert_eq!(cmdlines(&s2), [None, None]);
    // pid 1 reused by another program; pid 2 exec'd; pid 3 is new.
    let mut s3 = vec![p(1, 99, "sleep 5"), p(2, 20, "bash x.sh"), p(3, 30, "cc")];
    once.strip(&mut s3);
    assert!(cmdlines(&s3).iter().all(Option::is_some));
    // pid 3 left the kept set, then came back: written again.
    let mut s4 = vec![p(1, 99, "sleep 5")];
    once.strip(&mut s4);
    let mut s5 = vec![p(1, 99, "sleep 5"), p(3, 30, "cc")];
    once.strip(&mut s5);
    assert_eq!(cmdlines(&s5), [None, Some("cc".into())]);
}

#[test]
fn a_shared_command_line_is_known_by_its_pointer_and_a_new_text_is_written() {
    let shared: std::sync::Arc<str> = "python3 train.py --epochs 3".into();
    let p = |cmd: &std::sync::Arc<str>| ProcessSample {
        pid: 7,
        start_time: 70,
        cmdline: Some(std::sync::Arc::clone(cmd)),
        uid: Some(1000),
        ..ProcessSample::default()
    };
    let mut once = CmdlineOnce::default();
    let mut s1 = vec![p(&shared)];
    once.strip(&mut s1);
    assert!(s1[0].cmdline.is_some());
    // The probe's own shared text, tick after tick: dropped.
    let mut s2 = vec![p(&shared)];
    once.strip(&mut s2);
    assert_eq!((s2[0].cmdline.as_deref(), s2[0].uid), (None, None));
    // Arguments read again, to the same text: still dropped.
    let mut s3 = vec![p(&"python3 train.py --epochs 3".into())];
    once.strip(&mut s3);
    assert!(s3[0].cmdline.is_none());
    // The same length, other text (a rewritten argv): written.
    let mut s4 = vec![p(&"python3 train.py --epochs 4".into())];
    once.strip(&mut s4);
    assert_eq!(
        s4[0].cmdline.as_deref(),
        Some("python3 train.py --epochs 4")
    );
}

#[test]
fn the_owner_is_written_beside_its_command_line_only() {
    let p = |cmd: Option<&str>, uid| ProcessSample {
        pid: 1,
        start_time: 10,
        cmdline: cmd.map(Into::into),
        uid,
        ..ProcessSample::default()
    };
    let mut once = CmdlineOnce::default();
    let mut s1 = vec![p(Some("db --password=x"), Some(1000)), p(None, Some(0))];
    s1[1].pid = 2;
    once.strip(&mut s1);
    assert_eq!((s1[0].uid, s1[1].uid), (Some(1000), None));
    let mut s2 = vec![p(Some("db --password=x"), Some(1000))];
    once.strip(&mut s2);
    assert_eq!((s2[0].cmdline.as_deref(), s2[0].uid), (None, None));
    // A new owner (privileges dropped) writes both again.
    let mut s3 = vec![p(Some("db --password=x"), Some(1001))];
    once.strip(&mut s3);
    assert_eq!(
        (s3[0].cmdline.as_deref(), s3[0].uid),
        (Some("db --password=x"), Some(1001))
    );
}

#[test]
fn a_trace_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("swapsight-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.jsonl");
    let rec = Recorder::create(&path, &header_now(HostInfo::default(), 500, 10)).unwrap();
    drop(rec);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}
