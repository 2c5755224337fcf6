//! `--push`: `serve` and `record` send their series to Debian's real
//! Prometheus, started with `--web.enable-remote-write-receiver` on
//! loopback, and the series are queried back by name and label. Prometheus
//! is stopped mid-run and started again on the same storage and port: the
//! samples of the gap, which the push's queue held, are all found. A
//! receiver that wants credentials (basic auth, a bcrypt hash in
//! `--web.config.file`) refuses wrong ones with 401, said once; the right
//! ones get the series in.
//!
//! Outside CI the tests skip with a note when Prometheus is missing; with
//! `CI=true` they must run.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::prometheus::{prometheus_missing, unix_now, wait_until, Prometheus, Serve};
use super::util::*;

const RECEIVER: &[&str] = &["--web.enable-remote-write-receiver"];

fn write_url(p: &Prometheus) -> String {
    format!("http://{}/api/v1/write", p.addr)
}

/// The sample times (Unix seconds) of a range selector's single series.
fn times(p: &Prometheus, selector: &str) -> Vec<f64> {
    let rows = p.query(selector);
    assert!(rows.len() <= 1, "{selector}: {rows:?}");
    rows.first()
        .and_then(|r| r["values"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v[0].as_f64())
        .collect()
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn serve_pushes_through_an_outage_and_the_queue_fills_the_gap() {
    if skip_unless_ci("the push test", prometheus_missing()).is_none() {
        return;
    }
    let mut p = Prometheus::start_with("global: {}\n", RECEIVER);
    let dir = TempDir::new("push-serve");
    let url = write_url(&p);
    let serve = Serve::start(
        &[
            "--recordings",
            dir.join("rec").to_str().unwrap(),
            "--push",
            &url,
            "--push-interval",
            "1s",
            "--label",
            "instance=ci-box",
            "--label",
            "site=outage",
        ],
        &[],
    );
    let selector = r#"swapsight_free_ratio{instance="ci-box",job="swapsight",site="outage"}"#;
    wait_until(
        Duration::from_secs(30),
        || times(&p, &format!("{selector}[5m]")).len() >= 3,
        || format!("no pushed samples: {}\n{}", serve.stderr(), p.log()),
    );
    // /metrics shows the push's own series too.
    let metrics = serve.metrics(None);
    assert!(
        metrics.contains("swapsight_push_queue_capacity_samples 100000"),
        "{metrics}"
    );

    // The outage: Prometheus stopped as a service manager stops it.
    let down_at = unix_now();
    p.stop();
    std::thread::sleep(Duration::from_secs(8));
    let up_at = unix_now();
    p.restart();
    wait_until(
        Duration::from_secs(60),
        || serve.stderr().contains("takes samples again"),
        || format!("the push did not come back: {}", serve.stderr()),
    );
    // The snapshot after the recovery is in too.
    let back = unix_now();
    wait_until(
        Duration::from_secs(20),
        || times(&p, &format!("{selector}[5m]")).last() > Some(&back),
        || format!("no sample after the recovery: {}", serve.stderr()),
    );
    let all = times(&p, &format!("{selector}[5m]"));
    let gap: Vec<f64> = all
        .iter()
        .copied()
        .filter(|&t| t > down_at && t < up_at)
        .collect();
    let expected = (up_at - down_at).floor() as usize;
    eprintln!(
        "outage of {:.1} s: {} samples of the gap found, {expected} expected (one a second)",
        up_at - down_at,
        gap.len()
    );
    assert!(
        gap.len() + 1 >= expected,
        "samples of the gap found: {} of {expected}: {gap:?}",
        gap.len()
    );
    // Every snapshot, before, during and after: no hole longer than the
    // interval (with slack for a late tick).
    for w in all.windows(2) {
        assert!(
            w[1] - w[0] < 1.9,
            "a hole from {} to {}: {all:?}",
            w[0],
            w[1]
        );
    }
    let stderr = serve.stderr();
    assert_eq!(count(&stderr, "cannot push to"), 1, "{stderr}");
    assert_eq!(count(&stderr, "takes samples again"), 1, "{stderr}");
    // The push's counters, pushed with the rest.
    let q = |name: &str| {
        p.value(&format!(r#"{name}{{instance="ci-box",site="outage"}}"#))
            .unwrap_or(-1.0)
    };
    wait_until(
        Duration::from_secs(10),
        || q("swapsight_push_failed_requests_total") >= 1.0,
        || "no failed requests counted".into(),
    );
    let dropped = p.query(r#"swapsight_push_dropped_samples_total{site="outage"}"#);
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    for d in &dropped {
        assert_eq!(d["value"][1], "0", "nothing dropped: {d}");
    }
    eprintln!(
        "failed requests (retried): {}, sent samples: {}",
        q("swapsight_push_failed_requests_total"),
        q("swapsight_push_sent_samples_total")
    );
}

/// `password`'s bcrypt hash (cost 10), made offline once with libxcrypt:
/// `python3 -c "import crypt; print(crypt.crypt('swapsight-push-pw',
/// crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))"`.
const BCRYPT: &str = "$2b$10$7FjDfrD0P9.79GIxkk2DOu2YqPmc6rUF2C2DJfdHTPFWVN9CA0xXS";
const USER_PASS: &str = "pusher:swapsight-push-pw";

#[test]
fn record_push_wrong_credentials_are_said_once_and_right_ones_get_in() {
    if skip_unless_ci("the push test", prometheus_missing()).is_none() {
        return;
    }
    let dir = TempDir::new("push-auth");
    let web = dir.join("web.yml");
    std::fs::write(&web, format!("basic_auth_users:\n  pusher: {BCRYPT}\n")).unwrap();
    let web_flag = format!("--web.config.file={}", web.display());
    // Basic pusher:swapsight-push-pw, for the test's own queries.
    let auth = "Basic cHVzaGVyOnN3YXBzaWdodC1wdXNoLXB3";
    let p = Prometheus::start_as(
        "global: {}\n",
        &[RECEIVER[0], web_flag.as_str()],
        Some(auth),
    );
    let url = write_url(&p);
    let record = |auth_line: &str, run: &str| {
        let file = dir.join(&format!("auth-{run}"));
        std::fs::write(&file, format!("# test\n{auth_line}\n")).unwrap();
        let started = Instant::now();
        let out = swapsight()
            .args(["record", "-o"])
            .arg(dir.join(&format!("{run}.jsonl")))
            .args([
                "--interval",
                "200ms",
                "--push",
                &url,
                "--push-interval",
                "1s",
            ])
            .arg("--push-auth-file")
            .arg(&file)
            .args(["--label", &format!("run={run}"), "--", "sleep", "4"])
            .env_remove("SWAPSIGHT_PUSH_TOKEN")
            .stdout(Stdio::null())
            .output()
            .unwrap();
        (out, started.elapsed())
    };

    let (out, took) = record("basic pusher:wrong", "refused");
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    let said = "refused the credentials (401 Unauthorized): check the credentials of \
                --push-auth-file or SWAPSIGHT_PUSH_TOKEN";
    assert_eq!(count(&stderr, said), 1, "said once:\n{stderr}");
    assert!(stderr.contains("samples not sent"), "{stderr}");
    assert!(
        !stderr.contains("wrong"),
        "the password is never printed:\n{stderr}"
    );
    // The flush at the end is bounded.
    assert!(took < Duration::from_secs(4 + 12), "took {took:?}");
    assert!(p.query(r#"swapsight_free_ratio{run="refused"}"#).is_empty());

    let (out, _) = record(&format!("basic {USER_PASS}"), "taken");
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("refused"), "{stderr}");
    assert!(!stderr.contains("not sent"), "{stderr}");
    let rows: Vec<Value> = p.query(r#"swapsight_free_ratio{run="taken",job="swapsight"}[1m]"#);
    assert_eq!(rows.len(), 1, "{rows:?}\n{}", p.log());
    let n = rows[0]["values"].as_array().map_or(0, Vec::len);
    // A 4 s command pushed at 0, 1, 2, 3 s and at its end.
    assert!(n >= 4, "{n} samples: {rows:?}");
    assert!(!rows[0]["metric"]["instance"]
        .as_str()
        .unwrap_or("")
        .is_empty());
}
