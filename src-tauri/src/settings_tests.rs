use super::*;

use swapsight_testkit::TempDir as Tmp;

fn write(dir: &Tmp, text: &str) -> PathBuf {
    let path = dir.join(FILE);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn no_file_and_no_push_object_are_off() {
    let dir = Tmp::new("settings-none");
    assert_eq!(read_push(&dir.join(FILE)), Ok(Push::default()));
    assert_eq!(read_push(&write(&dir, "{}")), Ok(Push::default()));
    let off = write(
        &dir,
        r#"{"push": {"url": "http://127.0.0.1:9/api/v1/write"}}"#,
    );
    let p = read_push(&off).unwrap();
    assert!(!p.enabled, "off unless enabled says so");
    assert!(p.settings.is_some());
}

#[test]
fn a_whole_push_setting_is_read_with_paths_from_the_settings_folder() {
    let dir = Tmp::new("settings-whole");
    let path = write(
        &dir,
        r#"{"push": {"enabled": true, "url": "https://mimir.example/api/v1/push",
            "interval": "30s", "queue": 5000, "labels": {"site": "home", "job": "laptops"},
            "auth_file": "push-auth", "ca": "/etc/ssl/private-ca.pem"}, "other": 1}"#,
    );
    let p = read_push(&path).unwrap();
    assert!(p.enabled);
    let s = p.settings.unwrap();
    assert_eq!(s.url, "https://mimir.example/api/v1/push");
    assert_eq!(s.interval, Duration::from_secs(30));
    assert_eq!(s.queue, 5000);
    assert_eq!(
        s.labels,
        [
            ("job".to_string(), "laptops".to_string()),
            ("site".to_string(), "home".to_string())
        ]
    );
    assert_eq!(s.auth_file, Some(dir.join("push-auth")));
    assert_eq!(s.ca, Some(PathBuf::from("/etc/ssl/private-ca.pem")));
}

#[test]
fn bad_settings_are_one_line_naming_the_file_and_the_key() {
    let dir = Tmp::new("settings-bad");
    let cases = [
        (r#"{"push": {"enabled": tru"#, "not JSON"),
        (r#"{"push": {"enabled": true}}"#, "no url"),
        (r#"{"push": {"enabled": true, "url": ""}}"#, "no url"),
        (r#"{"push": {"url": "ftp://h/x"}}"#, "push.url"),
        (r#"{"push": {"url": "https://u:pw@h/x"}}"#, "push.url"),
        (
            r#"{"push": {"url": "http://h/x", "interval": "2h"}}"#,
            "push.interval",
        ),
        (
            r#"{"push": {"url": "http://h/x", "interval": "soon"}}"#,
            "push.interval",
        ),
        (
            r#"{"push": {"url": "http://h/x", "queue": 5}}"#,
            "push.queue",
        ),
        (
            r#"{"push": {"url": "http://h/x", "labels": {"__name__": "x"}}}"#,
            "push.labels",
        ),
        (
            r#"{"push": {"url": "http://h/x", "intervall": "5s"}}"#,
            "unknown field",
        ),
        (
            r#"{"push": {"url": "http://h/x", "token": "s3cret"}}"#,
            "push.auth_file",
        ),
        (
            r#"{"push": {"enabled": "yes", "url": "http://h/x"}}"#,
            "push:",
        ),
    ];
    for (text, want) in cases {
        let err = read_push(&write(&dir, text)).unwrap_err();
        assert!(err.contains(want), "{text}: {err}");
        assert!(err.contains(FILE), "{text}: {err}");
        assert!(!err.contains('\n'), "{text}: {err}");
        assert!(!err.contains("s3cret"), "{err}");
    }
}

#[test]
fn credentials_over_plain_http_to_another_host_are_refused_as_the_cli_refuses_them() {
    let dir = Tmp::new("settings-http");
    std::fs::write(dir.join("push-auth"), "bearer s3cret\n").unwrap();
    let read = |url: &str| {
        let text =
            format!(r#"{{"push": {{"enabled": true, "url": "{url}", "auth_file": "push-auth"}}}}"#);
        read_push(&write(&dir, &text)).unwrap().settings.unwrap()
    };
    let err = read("http://mimir.example/api/v1/push")
        .config(None)
        .err()
        .unwrap();
    assert!(
        err.contains("refusing to send credentials over plain HTTP"),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
    assert!(read("http://127.0.0.1:9/api/v1/write").config(None).is_ok());
    assert!(read("https://mimir.example/api/v1/push")
        .config(None)
        .is_ok());
}

#[test]
fn enabled_is_written_back_and_the_rest_kept() {
    let dir = Tmp::new("settings-write");
    let path = dir.join("new/folder").join(FILE);
    write_push_enabled(&path, false).unwrap();
    assert_eq!(read_push(&path), Ok(Push::default()));
    let path = write(
        &dir,
        r#"{"theme": "dark", "push": {"enabled": false, "url": "http://127.0.0.1:9/w",
            "labels": {"site": "home"}}}"#,
    );
    write_push_enabled(&path, true).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["theme"], "dark");
    assert_eq!(v["push"]["enabled"], true);
    assert_eq!(v["push"]["labels"]["site"], "home");
    assert!(read_push(&path).unwrap().enabled);
}

#[test]
fn a_file_that_is_not_json_is_never_written_over() {
    let dir = Tmp::new("settings-keep");
    let path = write(&dir, "{ half");
    let err = write_push_enabled(&path, true).unwrap_err();
    assert!(err.contains("not JSON"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ half");
    let path = write(&dir, "[1]");
    assert!(write_push_enabled(&path, true).is_err());
}

#[cfg(unix)]
#[test]
fn the_file_is_replaced_not_written_through_a_link() {
    let dir = Tmp::new("settings-link");
    let target = dir.join("elsewhere.json");
    std::fs::write(&target, "{}").unwrap();
    let path = dir.join(FILE);
    std::os::unix::fs::symlink(&target, &path).unwrap();
    write_push_enabled(&path, true).unwrap();
    // The link is this user's own, so outpath follows it: the write lands
    // in the file it names, whole, and leaves no temp file behind.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(v["push"]["enabled"], true);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn the_settings_app_md_shows_are_read_as_shown() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/app.md")).unwrap();
    let (_, after) = doc
        .split_once("settings_tests.rs::the_settings_app_md_shows_are_read_as_shown -->\n```json\n")
        .expect("docs/app.md shows the settings");
    let (block, _) = after.split_once("\n```").unwrap();
    let dir = Tmp::new("settings-doc");
    let p = read_push(&write(&dir, block)).unwrap();
    assert!(p.enabled);
    let s = p.settings.unwrap();
    assert_eq!(s.url, "https://mimir.example/api/v1/push");
    assert_eq!(s.interval, Duration::from_secs(15));
    assert_eq!(s.labels, [("site".to_string(), "home".to_string())]);
    assert_eq!(s.auth_file, Some(dir.join("push-auth")));
    assert_eq!(s.ca, None);
}
