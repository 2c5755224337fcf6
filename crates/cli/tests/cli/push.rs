//! `--push`: `serve` and `record` send their series to Debian's real
//! Prometheus, started with `--web.enable-remote-write-receiver` on
//! loopback, and the series are queried back by name and label. Prometheus
//! is stopped mid-run and started again on the same storage and port: the
//! samples of the gap, which the push's queue held, are all found. A
//! receiver that wants credentials (basic auth, a bcrypt hash in
//! `--web.config.file`) refuses wrong ones with 401, said once; the right
//! ones get the series in. Over TLS (a CA and a leaf made by openssl,
//! Prometheus's `tls_server_config`): `--push-ca` gets the series in, and
//! without it the server is refused as unverified, said once.
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

/// `record --push URL` every 1 s of `sleep SECS`, labelled `run=RUN`, with
/// `extra` flags, its trace in `dir`.
fn record_push(
    dir: &TempDir,
    url: &str,
    run: &str,
    secs: &str,
    extra: &[&std::ffi::OsStr],
) -> std::process::Output {
    swapsight()
        .args(["record", "-o"])
        .arg(dir.join(&format!("{run}.jsonl")))
        .args([
            "--interval",
            "200ms",
            "--push",
            url,
            "--push-interval",
            "1s",
        ])
        .args(extra)
        .args(["--label", &format!("run={run}"), "--", "sleep", secs])
        .env_remove("SWAPSIGHT_PUSH_TOKEN")
        .stdout(Stdio::null())
        .output()
        .unwrap()
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
        let out = record_push(
            &dir,
            &url,
            run,
            "4",
            &["--push-auth-file".as_ref(), file.as_os_str()],
        );
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

/// A CA and a leaf it signed for 127.0.0.1 (serverAuth), by Debian's
/// openssl: `(ca.pem, leaf.pem, leaf.key)`. rustls takes no self-signed CA
/// as a server's own certificate, as a real deployment's is not either.
fn tls_files(dir: &TempDir) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("/usr/bin/openssl")
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("run /usr/bin/openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            stderr_of(&out)
        );
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=swapsight test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
    ]);
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        "leaf.pem",
        "-extfile",
        "leaf.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("leaf.pem"),
        dir.join("leaf.key"),
    )
}

/// GET `path` of an https Prometheus, trusting `ca` only (Debian's curl).
fn https_get(port: u16, ca: &std::path::Path, path: &str) -> Option<String> {
    let out = std::process::Command::new("/usr/bin/curl")
        .args(["-sf", "--max-time", "5", "--cacert"])
        .arg(ca)
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_push_over_tls_trusts_the_ca_given_and_refuses_a_server_it_cannot_verify() {
    if skip_unless_ci("the push test", prometheus_missing()).is_none() {
        return;
    }
    let dir = TempDir::new("push-tls");
    let (ca, cert, key) = tls_files(&dir);
    let web = dir.join("web.yml");
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
            cert.display(),
            key.display()
        ),
    )
    .unwrap();
    let port = super::prometheus::free_port();
    std::fs::write(dir.join("prometheus.yml"), "global: {}\n").unwrap();
    let argv: Vec<String> = vec![
        format!("--config.file={}", dir.join("prometheus.yml").display()),
        format!("--storage.tsdb.path={}", dir.join("data").display()),
        format!("--web.listen-address=127.0.0.1:{port}"),
        format!("--web.config.file={}", web.display()),
        RECEIVER[0].to_string(),
    ];
    let mut prom = super::prometheus::spawn_prometheus(&dir, &argv);
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _kill = Kill(&mut prom);
    wait_until(
        Duration::from_secs(60),
        || https_get(port, &ca, "/-/ready").is_some(),
        || std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default(),
    );
    let url = format!("https://127.0.0.1:{port}/api/v1/write");
    let record = |run: &str, ca: Option<&std::path::Path>| {
        let args: Vec<&std::ffi::OsStr> = match ca {
            Some(ca) => vec!["--push-ca".as_ref(), ca.as_os_str()],
            None => Vec::new(),
        };
        record_push(&dir, &url, run, "3", &args)
    };

    // Trusting the CA given: in, and found by name and label over https.
    let out = record("trusted", Some(&ca));
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("cannot push"), "{stderr}");
    let q = format!(
        "/api/v1/query?query={}",
        super::prometheus::encode(r#"count_over_time(swapsight_free_ratio{run="trusted"}[5m])"#)
    );
    let body = https_get(port, &ca, &q).expect("query over https");
    let v: Value = serde_json::from_str(&body).unwrap();
    let n: f64 = v["data"]["result"][0]["value"][1]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0);
    assert!(n >= 3.0, "{n} pushed samples: {body}");

    // The system's roots do not hold the test's CA: the server is not
    // verified, said once, and nothing is sent.
    let out = record("unverified", None);
    let stderr = stderr_of(&out);
    eprintln!("--- record --push to a server it cannot verify ---\n{stderr}");
    assert!(out.status.success(), "{stderr}");
    assert_eq!(count(&stderr, "cannot push to"), 1, "said once:\n{stderr}");
    assert!(
        stderr.contains("invalid peer certificate")
            && stderr.contains("a server behind a private CA needs it in --push-ca FILE"),
        "says why, and the way out:\n{stderr}"
    );
    let q = format!(
        "/api/v1/query?query={}",
        super::prometheus::encode(r#"swapsight_free_ratio{run="unverified"}"#)
    );
    let body = https_get(port, &ca, &q).unwrap();
    assert!(body.contains(r#""result":[]"#), "{body}");
}
