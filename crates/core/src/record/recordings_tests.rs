use super::*;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swapsight-recordings-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn recording_names() {
    for ok in [
        "swapsight-20250101-120000.jsonl",
        "a.jsonl",
        "A_b-c.d.jsonl",
        "a.b.jsonl",
    ] {
        assert!(valid_name(ok), "{ok}");
    }
    for bad in [
        "../etc/passwd",
        "..jsonl",
        "a/b.jsonl",
        "a\\b.jsonl",
        "x.txt",
        ".jsonl",
        "a..b.jsonl",
        "a b.jsonl",
        ".hidden.jsonl",
        "a.jsonl\0",
        "é.jsonl",
        "a.JSONL",
        "",
        "/etc/x.jsonl",
    ] {
        assert!(!valid_name(bad), "{bad:?}");
    }
    assert!(!valid_name(&format!("{}.jsonl", "a".repeat(251))));
    assert!(valid_name(&format!("{}.jsonl", "a".repeat(249))));
}

#[test]
fn resolves_only_plain_files_in_the_folder() {
    let dir = tmp("resolve");
    let outside = tmp("resolve-outside");
    std::fs::write(outside.join("secret.jsonl"), "{}\n").unwrap();
    std::fs::write(dir.join("run.jsonl"), "{}\n").unwrap();
    // Files a looser rule let through: a space, a `..` inside the name.
    std::fs::write(dir.join("a b.jsonl"), "{}\n").unwrap();
    std::fs::write(dir.join("a..b.jsonl"), "{}\n").unwrap();
    std::fs::create_dir(dir.join("sub.jsonl")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.jsonl"), dir.join("link.jsonl")).unwrap();

    assert_eq!(resolve(&dir, "run.jsonl").unwrap(), dir.join("run.jsonl"));
    for bad in ["a b.jsonl", "a..b.jsonl", "../x.jsonl", ".hidden.jsonl"] {
        let e = resolve(&dir, bad).unwrap_err();
        assert!(matches!(e, RecordingError::BadName(_)), "{bad}: {e}");
        assert!(e.to_string().starts_with("bad recording name"), "{e}");
    }
    for absent in ["link.jsonl", "sub.jsonl", "missing.jsonl"] {
        let e = resolve(&dir, absent).unwrap_err();
        assert_eq!(e.to_string(), format!("no recording named {absent}"));
    }
    let names: Vec<String> = list(&dir).unwrap().into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["run.jsonl"]);
    assert!(list(&dir.join("not-made-yet")).unwrap().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}

#[test]
fn lists_newest_first() {
    let dir = tmp("list");
    for (name, secs) in [
        ("old.jsonl", 1_000),
        ("new.jsonl", 2_000),
        ("b.jsonl", 1_000),
    ] {
        let f = std::fs::File::create(dir.join(name)).unwrap();
        f.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    }
    let got: Vec<(String, u64)> = list(&dir)
        .unwrap()
        .into_iter()
        .map(|r| (r.name, r.modified_ms))
        .collect();
    assert_eq!(
        got,
        [
            ("new.jsonl".into(), 2_000_000),
            ("old.jsonl".into(), 1_000_000),
            ("b.jsonl".into(), 1_000_000)
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn trace_names_carry_utc_date_and_time() {
    // 2026-11-29 17:56:45 UTC
    let p = default_trace_path(Path::new("/tmp"), 1_795_975_005_000);
    assert_eq!(p, Path::new("/tmp/swapsight-20261129-175645.jsonl"));
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    let dir = tmp("names");
    let first = default_trace_path(&dir, 1_795_975_005_000);
    std::fs::write(&first, b"").unwrap();
    let second = default_trace_path(&dir, 1_795_975_005_900);
    assert_eq!(second, dir.join("swapsight-20261129-175645-2.jsonl"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(civil_from_days(11_016), (2000, 2, 29));
}

#[test]
fn default_recordings_dir_is_under_the_data_dir() {
    let d = default_recordings_dir();
    assert!(d.ends_with("swapsight-recordings"), "{}", d.display());
}
