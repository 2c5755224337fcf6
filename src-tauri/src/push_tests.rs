//! The push setting for real: the app, as `run_app` wires it on Tauri's
//! mock runtime, reads a settings file that enables the push to a real
//! Prometheus (Debian's, its remote-write receiver on, on loopback), and
//! the pushed series are queried back; then the tray's toggle turns it off
//! and writes `enabled` back.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use swapsight::live::Live;
use swapsight_testkit::TempDir as Tmp;
use tauri::Manager;

use super::Push;
use crate::tests::app_with;

/// Debian's Prometheus on a free loopback port, its remote-write receiver
/// on; killed on drop.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: Tmp,
}

impl Prometheus {
    fn start() -> Prometheus {
        let dir = Tmp::new("app-prometheus");
        std::fs::write(
            dir.join("prometheus.yml"),
            "global:\n  scrape_interval: 1m\n",
        )
        .unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--web.enable-remote-write-receiver")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus");
        let p = Prometheus { child, addr, dir };
        let until = Instant::now() + Duration::from_secs(60);
        while p.get("/-/ready").is_none_or(|(st, _)| st != 200) {
            assert!(Instant::now() < until, "prometheus not ready:\n{}", p.log());
            std::thread::sleep(Duration::from_millis(250));
        }
        p
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// An HTTP/1.0 GET (no chunked answer to undo): status and body.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr).ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let (head, body) = text.split_once("\r\n\r\n")?;
        let status = head.split(' ').nth(1)?.parse().ok()?;
        Some((status, body.to_string()))
    }

    /// The series an instant query finds.
    fn query(&self, q: &str) -> Vec<Value> {
        let encoded: String = q
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let Some((200, body)) = self.get(&format!("/api/v1/query?query={encoded}")) else {
            return Vec::new();
        };
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn prometheus_missing() -> Option<String> {
    swapsight_testkit::which("prometheus")
        .is_none()
        .then(|| "no prometheus on PATH (scripts/setup installs Debian's)".to_string())
}

#[test]
fn the_app_pushes_when_its_settings_say_so_and_the_toggle_turns_it_off() {
    let test = "the_app_pushes_when_its_settings_say_so_and_the_toggle_turns_it_off";
    if swapsight_testkit::skip_unless_ci(test, prometheus_missing()).is_none() {
        return;
    }
    let prom = Prometheus::start();
    let settings = format!(
        r#"{{"push": {{"enabled": true, "url": "http://{}/api/v1/write", "interval": "1s",
            "labels": {{"via": "app"}}}}}}"#,
        prom.addr
    );
    let t = app_with("app-push", Some(&settings));
    let push = t.app.state::<Push>();
    assert!(push.is_on(), "enabled in the settings: on at start");
    let until = Instant::now() + Duration::from_secs(30);
    let found = loop {
        let found = prom.query(r#"{via="app", job="swapsight"}"#);
        if !found.is_empty() || Instant::now() > until {
            break found;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        !found.is_empty(),
        "no pushed series in 30 s; the app's push says {:?}:\n{}",
        push.label(),
        prom.log()
    );
    let names: Vec<&str> = found
        .iter()
        .filter_map(|s| s["metric"]["__name__"].as_str())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("swapsight_")),
        "{names:?}"
    );
    assert!(
        names.contains(&"swapsight_push_sent_samples_total"),
        "the push's own series go too: {names:?}"
    );
    assert_eq!(
        push.label(),
        format!("Push to Prometheus: on → {}", prom.addr)
    );

    let live = t.app.state::<std::sync::Arc<Live>>();
    push.toggle(&live);
    assert!(!push.is_on());
    assert_eq!(push.label(), "Push to Prometheus: off");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(t.dir.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(file["push"]["enabled"], false, "{file}");
    assert_eq!(
        file["push"]["labels"]["via"], "app",
        "the rest is kept: {file}"
    );

    // And on again, from the file as it is now.
    push.toggle(&live);
    assert!(push.is_on());
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(t.dir.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(file["push"]["enabled"], true, "{file}");
    push.finish();
    assert!(!push.is_on());
}

#[test]
fn a_bad_settings_file_leaves_the_push_off_and_the_app_up() {
    let t = app_with(
        "app-push-bad",
        Some(r#"{"push": {"enabled": true, "url": "#),
    );
    let push = t.app.state::<Push>();
    assert!(!push.is_on());
    assert_eq!(push.label(), "Push to Prometheus: off");
    // A toggle with no usable settings stays off and writes nothing.
    let live = t.app.state::<std::sync::Arc<Live>>();
    push.toggle(&live);
    assert!(!push.is_on());
    assert_eq!(
        std::fs::read_to_string(t.dir.join("settings.json")).unwrap(),
        r#"{"push": {"enabled": true, "url": "#
    );
}

#[test]
fn a_receiver_that_is_not_there_shows_as_failing() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let settings = format!(
        r#"{{"push": {{"enabled": true, "url": "http://127.0.0.1:{port}/api/v1/write", "interval": "1s"}}}}"#
    );
    let t = app_with("app-push-down", Some(&settings));
    let push = t.app.state::<Push>();
    let until = Instant::now() + Duration::from_secs(20);
    while !push.label().contains("failing") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    let label = push.label();
    assert!(
        label.starts_with("Push to Prometheus: failing: "),
        "{label}"
    );
}

#[test]
fn errors_name_the_settings_keys_not_the_cli_flags() {
    let t = app_with(
        "app-push-words",
        Some(r#"{"push": {"url": "https://h.example/w", "auth_file": "/nonexistent/auth"}}"#),
    );
    let push = t.app.state::<Push>();
    let p = crate::settings::read_push(push.path()).unwrap();
    let live = t.app.state::<std::sync::Arc<Live>>();
    let err = push.start(p, &live).unwrap_err();
    assert!(err.contains("push.auth_file /nonexistent/auth"), "{err}");
    assert!(!err.contains("--push"), "{err}");
}
