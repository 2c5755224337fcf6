//! In-process tests of every route: requests go straight into the router
//! (`tower::ServiceExt::oneshot`), around a [`Live`] session driven by the
//! library's scripted probe (swap climbs 40 MiB a tick while pid 7 pages
//! in), so they need no root, no network and no real memory pressure.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use futures_util::StreamExt;
use serde_json::Value;
use swapsight::live::{Live, LiveConfig};
use swapsight::probe::scripted::ScriptedProbe;
use swapsight::probe::Probe;
use swapsight::SamplerConfig;
use tower::ServiceExt;

use super::{app, contract, App, Options};

use swapsight_testkit::TempDir as Tmp;

struct Server {
    app: App,
    live: Arc<Live>,
    dir: Tmp,
}

/// A session on [`ScriptedProbe::false_fit`] (swap climbs 40 MiB a tick
/// while pid 7 pages in; pids 1..=50), whose first sample waits
/// `first_delay`.
fn live_in(dir: &Path, interval_ms: u64, first_delay: Duration) -> Arc<Live> {
    let cfg = config(dir, interval_ms);
    let mut script = ScriptedProbe::false_fit();
    let probe = ScriptedProbe::new(16 << 30, move |n| {
        if n == 1 {
            std::thread::sleep(first_delay);
        }
        script.sample().expect("scripted")
    });
    Arc::new(Live::start(Box::new(probe), cfg).unwrap())
}

/// A session sampling every `interval_ms`, 10 rows, recording into `dir`.
fn config(dir: &Path, interval_ms: u64) -> LiveConfig {
    LiveConfig {
        sampler: SamplerConfig {
            interval: Duration::from_millis(interval_ms),
            history: 2,
            ..SamplerConfig::default()
        },
        rows: 10,
        recordings_dir: dir.to_path_buf(),
        ..LiveConfig::default()
    }
}

fn server_with(tag: &str, opts: Options) -> Server {
    let dir = Tmp::new(tag);
    let live = live_in(dir.path(), 20, Duration::ZERO);
    let app = app(Arc::clone(&live), opts).unwrap();
    Server { app, live, dir }
}

/// A server behind a token, and the token.
fn token_server(tag: &str) -> (Server, &'static str) {
    let token = "s3cret-Token_0123";
    let opts = Options {
        token: Some(token.into()),
        ..Options::default()
    };
    (server_with(tag, opts), token)
}

fn server(tag: &str) -> Server {
    server_with(tag, Options::default())
}

fn request(method: Method, uri: &str, body: &str) -> Request<Body> {
    let mut b = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::HOST, "127.0.0.1:7878");
    if !body.is_empty() {
        b = b.header(header::CONTENT_TYPE, "application/json");
    }
    b.body(Body::from(body.to_string())).unwrap()
}

fn get(uri: &str) -> Request<Body> {
    request(Method::GET, uri, "")
}

fn post(uri: &str, body: &str) -> Request<Body> {
    request(Method::POST, uri, body)
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(&name)
            .map_or("", |v| v.to_str().unwrap_or(""))
    }

    /// An error answer: the status and a JSON `{"error": ...}` saying it.
    #[track_caller]
    fn assert_error(&self, status: StatusCode, words: &str) {
        assert_eq!(self.status, status, "{}", self.text());
        let e = self.json();
        let msg = e["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error field: {e}"));
        assert!(msg.contains(words), "{msg:?} does not say {words:?}");
    }
}

async fn call(router: &Router, req: Request<Body>) -> Answer {
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), 64 << 20)
        .await
        .unwrap();
    Answer {
        status,
        headers,
        body,
    }
}

/// Waits until the session has `n` chart points.
async fn wait_points(live: &Live, n: usize) {
    let until = Instant::now() + Duration::from_secs(10);
    while live.history(None).len() < n {
        assert!(Instant::now() < until, "no {n} points in 10 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn healthz_snapshot_history_and_process() {
    let s = server("snap");
    let r = &s.app.router;
    let a = call(r, get("/healthz")).await;
    assert_eq!((a.status, a.text().as_str()), (StatusCode::OK, "ok"));

    let a = call(r, get("/api/snapshot")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert!(a
        .header(header::CONTENT_TYPE)
        .starts_with("application/json"));
    let snap = a.json();
    assert_eq!(snap["process_count"], 50);
    assert!(snap["processes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["pid"] == 50));
    assert!(snap["system"]["phys_bytes"].as_u64().unwrap() > 0);

    wait_points(&s.live, 5).await;
    let all = call(r, get("/api/history")).await.json();
    assert!(all.as_array().unwrap().len() >= 5, "{all}");
    let p = &all[0];
    for field in [
        "t_ms",
        "swap_growth_bytes",
        "swap_used_bytes",
        "free_pct",
        "footprints",
    ] {
        assert!(!p[field].is_null(), "{field} missing in {p}");
    }
    let recent = call(r, get("/api/history?seconds=0")).await.json();
    assert!(recent.as_array().unwrap().len() < all.as_array().unwrap().len() + 5);
    call(r, get("/api/history?seconds=abc"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "bad seconds 'abc'");
    call(r, get("/api/history?seconds=-1"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "bad seconds");

    let a = call(r, get("/api/process/50")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let v = a.json();
    assert_eq!(v["row"]["pid"], 50);
    assert_eq!(v["row"]["name"], "p50");
    let series = v["series"].as_array().unwrap();
    assert!(!series.is_empty());
    assert_eq!(series[0][1], 50u64 << 20);

    call(r, get("/api/process/999999"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "no process 999999");
    for bad in ["abc", "-1", "0", "1.5", "99999999999"] {
        call(r, get(&format!("/api/process/{bad}")))
            .await
            .assert_error(StatusCode::BAD_REQUEST, &format!("bad pid '{bad}'"));
    }
}

#[tokio::test]
async fn snapshot_and_metrics_wait_for_the_first_tick_then_503() {
    let dir = Tmp::new("slow");
    let live = live_in(dir.path(), 20, Duration::from_millis(1500));
    let opts = Options {
        first_tick_wait: Duration::from_millis(100),
        ..Options::default()
    };
    let app = app(Arc::clone(&live), opts).unwrap();
    call(&app.router, get("/api/snapshot"))
        .await
        .assert_error(StatusCode::SERVICE_UNAVAILABLE, "no sample yet");
    call(&app.router, get("/metrics"))
        .await
        .assert_error(StatusCode::SERVICE_UNAVAILABLE, "no sample yet");
    // The default wait (2 s) covers a slow first sample.
    let app = super::app(live, Options::default()).unwrap();
    assert_eq!(
        call(&app.router, get("/api/snapshot")).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn pin_reset_and_bad_bodies() {
    let s = server("pin");
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    let a = call(r, post("/api/pin", r#"{"pid": 3}"#)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.json()["pinned"], 3);
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let snap = call(r, get("/api/snapshot")).await.json();
        let row = snap["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pid"] == 3)
            .cloned();
        if snap["pinned"] == 3 && row.is_some_and(|p| p["pinned"] == true) {
            break;
        }
        assert!(Instant::now() < until, "pid 3 never shown pinned: {snap}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let a = call(r, post("/api/pin", r#"{"pid": null}"#)).await;
    assert_eq!(a.json()["pinned"], Value::Null);

    call(r, post("/api/pin", "{pid: 3"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid JSON body");
    call(r, post("/api/pin", r#"{"pid": "3"}"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid JSON body");
    call(r, post("/api/pin", r#"{"pid": -4}"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid JSON body");
    call(r, post("/api/pin", r#"{"pid": 0}"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "bad pid 0");
    call(r, post("/api/pin", "[1]"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid JSON body");
    let big = format!(r#"{{"pid": 1, "x": "{}"}}"#, "a".repeat(64 * 1024));
    let a = call(r, post("/api/pin", &big)).await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);

    let a = call(r, post("/api/reset-baseline", "")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.json()["ok"], true);
    // Swap growth restarts from the baseline.
    let until = Instant::now() + Duration::from_secs(5);
    while call(r, get("/api/snapshot")).await.json()["view"]["swap_growth_bytes"]
        .as_i64()
        .unwrap()
        > 200 << 20
    {
        assert!(Instant::now() < until, "swap growth not reset");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn recording_lifecycle_list_replay_report_and_exports() {
    let s = server("rec");
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    call(r, post("/api/recording/stop", ""))
        .await
        .assert_error(StatusCode::CONFLICT, "not recording");
    call(r, post("/api/recording/start", "{pid:"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid JSON body");
    // A pid no kernel hands out was taken and written as a negative
    // watch_pid (issue 33 item 13).
    call(r, post("/api/recording/start", r#"{"pid": 2147483648}"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "no process 2147483648 to watch");

    let a = call(r, post("/api/recording/start", r#"{"pid": 7}"#)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let started = a.json();
    let name = started["name"].as_str().unwrap().to_string();
    assert!(
        name.starts_with("swapsight-") && name.ends_with(".jsonl"),
        "{name}"
    );
    // Names only: the server's folder is not the client's business.
    let dir = s.dir.path().canonicalize().unwrap();
    let folder = dir.to_str().unwrap();
    assert_eq!(started, serde_json::json!({ "name": name }));
    let path = dir.join(&name);
    assert!(path.is_file(), "{}", path.display());
    let busy = call(r, post("/api/recording/start", "")).await;
    busy.assert_error(StatusCode::CONFLICT, "already recording");
    assert!(!busy.text().contains(folder), "{}", busy.text());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let snap = call(r, get("/api/snapshot")).await;
    assert_eq!(snap.json()["recording"]["path"], name.as_str());
    assert!(!snap.text().contains(folder), "{}", snap.text());
    let a = call(r, post("/api/recording/stop", "")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let stopped = a.json();
    assert_eq!(stopped["name"], name.as_str());
    assert!(!a.text().contains(folder), "{}", a.text());
    let samples = stopped["samples"].as_u64().unwrap();
    assert!(samples >= 3, "{stopped}");

    // A file that is not a recording is not listed.
    std::fs::write(s.dir.path().join("notes.txt"), "x").unwrap();
    let list = call(r, get("/api/recordings")).await.json();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["name"], name.as_str());
    assert_eq!(
        list[0]["bytes"].as_u64(),
        Some(std::fs::metadata(&path).unwrap().len())
    );
    assert!(list[0]["modified_ms"].as_u64().unwrap() > 1_600_000_000_000);

    let replay = call(r, get(&format!("/api/recordings/{name}/replay"))).await;
    assert_eq!(replay.status, StatusCode::OK, "{}", replay.text());
    assert!(
        !replay.text().contains(folder),
        "the replay names the folder"
    );
    let replay = replay.json();
    assert_eq!(replay["path"], name.as_str());
    // A short recording is drawn a point a sample, unthinned (issue 33
    // item 6: a long one is thinned, replay_tests.rs).
    assert_eq!(replay["points"].as_array().unwrap().len() as u64, samples);
    assert!(replay.get("thinned_from").is_none(), "{replay}");
    assert!(replay["report"]["samples"].as_u64().is_some());
    assert!(replay["processes"]
        .as_array()
        .is_some_and(|p| !p.is_empty()));

    let report = call(r, get(&format!("/api/recordings/{name}/report"))).await;
    assert_eq!(report.status, StatusCode::OK, "{}", report.text());
    assert_eq!(report.json()["samples"].as_u64(), Some(samples));

    let stem = name.strip_suffix(".jsonl").unwrap();
    for (format, mime, ext) in [
        ("jsonl", "application/x-ndjson", "jsonl"),
        ("csv", "text/csv", "csv"),
        ("perfetto", "application/json", "json"),
        ("png", "image/png", "png"),
    ] {
        let a = call(
            r,
            get(&format!("/api/recordings/{name}/export?format={format}")),
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{format}: {}", a.text());
        assert!(a.header(header::CONTENT_TYPE).starts_with(mime), "{format}");
        assert_eq!(
            a.header(header::CONTENT_DISPOSITION),
            format!("attachment; filename=\"{stem}.{ext}\""),
        );
        match format {
            "jsonl" => assert_eq!(a.body, std::fs::read(&path).unwrap()),
            "csv" => assert!(a.text().lines().count() > samples as usize, "{}", a.text()),
            "perfetto" => assert!(a.json()["traceEvents"]
                .as_array()
                .is_some_and(|e| !e.is_empty())),
            _ => assert_eq!(&a.body[..8], b"\x89PNG\r\n\x1a\n"),
        }
    }
    for bad in ["xml", "prometheus", "", "CSV"] {
        call(
            r,
            get(&format!("/api/recordings/{name}/export?format={bad}")),
        )
        .await
        .assert_error(StatusCode::BAD_REQUEST, &format!("bad format '{bad}'"));
    }
    call(r, get(&format!("/api/recordings/{name}/export")))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "bad format ''");
}

#[tokio::test]
async fn recording_names_never_leave_the_folder() {
    let s = server("names");
    let r = &s.app.router;
    // A trace outside the folder, and a symlink to it inside.
    let outside = Tmp::new("outside");
    let secret = outside.path().join("secret.jsonl");
    std::fs::write(&secret, "{}\n").unwrap();
    std::os::unix::fs::symlink(&secret, s.dir.path().join("link.jsonl")).unwrap();
    std::fs::write(s.dir.path().join("junk.jsonl"), "this is not a trace\n").unwrap();
    std::fs::write(s.dir.path().join("empty.jsonl"), "").unwrap();

    for what in ["replay", "report", "export?format=jsonl"] {
        for bad in [
            "..%2Fetc%2Fpasswd",
            "..%2F..%2Fetc%2Fpasswd.jsonl",
            "a%2Fb.jsonl",
            "x.txt",
            "..",
            "%2Fetc%2Fpasswd",
            "a%5Cb.jsonl",
            "a%00.jsonl",
            "...jsonl",
            ".hidden.jsonl",
            "a..b.jsonl",
            "a%20b.jsonl",
        ] {
            let a = call(r, get(&format!("/api/recordings/{bad}/{what}"))).await;
            a.assert_error(StatusCode::BAD_REQUEST, "bad recording name");
        }
        // Unencoded slashes do not even reach a route.
        let a = call(r, get(&format!("/api/recordings/../etc/passwd/{what}"))).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{}", a.text());
        let a = call(r, get(&format!("/api/recordings/a/b.jsonl/{what}"))).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{}", a.text());

        call(r, get(&format!("/api/recordings/missing.jsonl/{what}")))
            .await
            .assert_error(StatusCode::NOT_FOUND, "no recording named missing.jsonl");
        call(r, get(&format!("/api/recordings/link.jsonl/{what}")))
            .await
            .assert_error(StatusCode::NOT_FOUND, "no recording named link.jsonl");
    }
    for what in ["replay", "report", "export?format=csv"] {
        call(r, get(&format!("/api/recordings/junk.jsonl/{what}")))
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "not a swapsight trace");
        call(r, get(&format!("/api/recordings/empty.jsonl/{what}")))
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "empty file");
    }
    let list = call(r, get("/api/recordings")).await.json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(!names.contains(&"link.jsonl"), "{names:?}");
    assert!(names.contains(&"junk.jsonl"), "{names:?}");
}

#[tokio::test]
async fn token_is_needed_everywhere_but_healthz() {
    let (s, token) = token_server("token");
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    let with = |mut req: Request<Body>, value: &str| {
        req.headers_mut()
            .insert(header::AUTHORIZATION, value.parse().unwrap());
        req
    };
    assert_eq!(call(r, get("/healthz")).await.status, StatusCode::OK);
    // Every route of the contract but the event stream (its answer never
    // ends), and what lies beside the API.
    let mut routes: Vec<(Method, String)> = contract::ROUTES
        .iter()
        .filter(|c| c.command != contract::EVENTS.command)
        .map(|c| (method_of(c), uri_of(c)))
        .collect();
    routes.extend([
        (Method::GET, "/metrics".to_owned()),
        (Method::GET, "/".to_owned()),
        (Method::GET, "/api/no-such-thing".to_owned()),
    ]);
    for (m, uri) in &routes {
        let a = call(r, request(m.clone(), uri, "")).await;
        a.assert_error(StatusCode::UNAUTHORIZED, "needs its token");
        assert_eq!(
            a.header(header::WWW_AUTHENTICATE),
            "Bearer realm=\"swapsight\""
        );
        let a = call(
            r,
            with(request(m.clone(), uri, ""), "Bearer wrong-token-123"),
        )
        .await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{uri}");
        let a = call(
            r,
            with(request(m.clone(), uri, ""), &format!("Bearer {token}x")),
        )
        .await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{uri}");
        let a = call(
            r,
            with(request(m.clone(), uri, ""), &format!("Bearer {token}")),
        )
        .await;
        assert_ne!(a.status, StatusCode::UNAUTHORIZED, "{uri}");
    }
    let a = call(r, with(get("/api/snapshot"), &format!("Bearer {token}"))).await;
    assert_eq!(a.status, StatusCode::OK);
    let a = call(r, with(get("/metrics"), &format!("bearer {token}"))).await;
    assert_eq!(a.status, StatusCode::OK);

    // ?token= only where a browser cannot send the header.
    let a = call(r, get(&format!("/api/snapshot?token={token}"))).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let a = call(r, get(&format!("/metrics?token={token}"))).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let a = call(r, get("/api/events?token=nope-nope-nope")).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let res = s
        .app
        .router
        .clone()
        .oneshot(get(&format!("/api/events?token={token}")))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    drop(res);

    // The UI page with ?token= sets a cookie its assets load with; the API
    // does not take the cookie.
    let a = call(r, get(&format!("/?token={token}"))).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.text());
    assert_eq!(a.header(header::LOCATION), "/");
    let a2 = call(r, get(&format!("/js/main.js?v=2&token={token}&x=1"))).await;
    assert_eq!(a2.status, StatusCode::SEE_OTHER);
    assert_eq!(a2.header(header::LOCATION), "/js/main.js?v=2&x=1");
    let a3 = call(r, get("/?token=wrong-wrong-wrong")).await;
    assert_eq!(a3.status, StatusCode::UNAUTHORIZED);
    let cookie = a.header(header::SET_COOKIE).to_string();
    assert!(
        cookie.starts_with(&format!("swapsight_token={token};")),
        "{cookie}"
    );
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let with_cookie = |uri: &str, c: &str| {
        let mut req = get(uri);
        req.headers_mut().insert(header::COOKIE, c.parse().unwrap());
        req
    };
    let c = format!("swapsight_token={token}");
    assert_eq!(
        call(r, with_cookie("/index.html", &c)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        call(r, with_cookie("/", "swapsight_token=bad-bad-bad"))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call(r, with_cookie("/api/snapshot", &c)).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call(r, with_cookie("/metrics", &c)).await.status,
        StatusCode::UNAUTHORIZED
    );

    // With a token, any Host is fine (the token is the guard).
    let mut req = with(get("/api/snapshot"), &format!("Bearer {token}"));
    req.headers_mut()
        .insert(header::HOST, "monitor.example:7878".parse().unwrap());
    assert_eq!(call(r, req).await.status, StatusCode::OK);
}

#[tokio::test]
async fn without_a_token_only_loopback_names_and_own_origin() {
    let s = server("local");
    let r = &s.app.router;
    let with = |mut req: Request<Body>, name: header::HeaderName, value: &str| {
        req.headers_mut().insert(name, value.parse().unwrap());
        req
    };
    for host in [
        "localhost:7878",
        "127.0.0.1:7878",
        "[::1]:7878",
        "localhost",
    ] {
        let a = call(r, with(get("/api/recordings"), header::HOST, host)).await;
        assert_eq!(a.status, StatusCode::OK, "{host}");
    }
    // DNS rebinding: a foreign name that resolves to 127.0.0.1.
    for host in ["evil.example", "evil.example:7878", "192.168.1.2:7878"] {
        call(r, with(get("/api/recordings"), header::HOST, host))
            .await
            .assert_error(StatusCode::FORBIDDEN, "refused");
    }
    // Cross-site state changes are refused; the page's own are not.
    call(
        r,
        with(
            post("/api/reset-baseline", ""),
            header::ORIGIN,
            "http://evil.example",
        ),
    )
    .await
    .assert_error(
        StatusCode::FORBIDDEN,
        "cross-origin request from 'http://evil.example'",
    );
    call(
        r,
        with(
            post("/api/recording/start", ""),
            header::ORIGIN,
            "http://localhost:3000",
        ),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "cross-origin");
    call(r, with(post("/api/pin", "{}"), header::ORIGIN, "null"))
        .await
        .assert_error(StatusCode::FORBIDDEN, "cross-origin");
    let a = call(
        r,
        with(
            post("/api/reset-baseline", ""),
            header::ORIGIN,
            "http://127.0.0.1:7878",
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
}

#[tokio::test]
async fn metrics_are_prometheus_text() {
    let s = server("metrics");
    let a = call(&s.app.router, get("/metrics")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(
        a.header(header::CONTENT_TYPE),
        swapsight::export::prometheus::CONTENT_TYPE
    );
    let text = a.text();
    for line in [
        "# TYPE swapsight_swap_used_bytes gauge",
        "swapsight_memory_bytes 17179869184",
        "# TYPE swapsight_process_footprint_bytes gauge",
        "swapsight_process_footprint_bytes{pid=\"50\",name=\"p50\"} 52428800",
        "# TYPE swapsight_serve_event_clients gauge",
        "swapsight_serve_event_clients 0",
        "swapsight_serve_event_clients_lagged_total 0",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
    // Bounded cardinality: 10 processes by default.
    let pids: std::collections::HashSet<&str> = text
        .lines()
        .filter(|l| l.starts_with("swapsight_process_footprint_bytes{"))
        .collect();
    assert_eq!(pids.len(), 10);
}

/// The next `event: update` of an SSE body, parsed; `None` when the stream ended.
async fn next_update(
    body: &mut (impl futures_util::Stream<Item = Result<Bytes, axum::Error>> + Unpin),
    buf: &mut String,
) -> Option<Value> {
    loop {
        if let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            if frame.starts_with(':') {
                continue;
            }
            let mut lines = frame.lines();
            assert_eq!(lines.next(), Some("event: update"), "{frame}");
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            return Some(serde_json::from_str(data).unwrap());
        }
        let chunk = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .expect("an event within 5 s")?
            .unwrap();
        buf.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test]
async fn events_stream_one_update_per_tick() {
    let s = server("sse");
    let res = s
        .app
        .router
        .clone()
        .oneshot(get("/api/events"))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()[header::CONTENT_TYPE], "text/event-stream");
    assert_eq!(res.headers()[header::CACHE_CONTROL], "no-cache");
    let mut body = res.into_body().into_data_stream();
    let mut buf = String::new();
    let first = next_update(&mut body, &mut buf).await.unwrap();
    let second = next_update(&mut body, &mut buf).await.unwrap();
    for u in [&first, &second] {
        assert!(u["snapshot"]["processes"].is_array(), "{u}");
        assert!(u["point"]["t_ms"].is_u64(), "{u}");
        assert!(u["notices"].is_array(), "{u}");
    }
    assert!(second["snapshot"]["t_ms"].as_u64() > first["snapshot"]["t_ms"].as_u64());
    assert_eq!(s.clients().await, 1);
    drop(body);
    assert_eq!(s.clients().await, 0, "a closed stream gives its seat back");
}

#[tokio::test]
async fn every_event_client_shares_one_copy_of_each_update() {
    // Regression: each client got its own copy of every update (axum's
    // `Event` copies the data), so 256 stalled streams held 30 MiB.
    let s = server("sse-shared");
    let open = || async {
        let res = s.app.router.clone().oneshot(get("/api/events")).await;
        res.unwrap().into_body().into_data_stream()
    };
    let (mut a, mut b) = (open().await, open().await);
    let mut from_a = Vec::new();
    let mut from_b = Vec::new();
    for _ in 0..4 {
        from_a.push(a.next().await.unwrap().unwrap());
        from_b.push(b.next().await.unwrap().unwrap());
    }
    let both: Vec<_> = from_a
        .iter()
        .filter_map(|x| from_b.iter().find(|y| y == &x).map(|y| (x, y)))
        .collect();
    assert!(!both.is_empty(), "no update reached both clients");
    for (x, y) in both {
        assert!(x.starts_with(b"event: update\ndata: {") && x.ends_with(b"}\n\n"));
        assert_eq!(x.as_ptr(), y.as_ptr(), "one shared buffer, not a copy each");
    }
}

#[tokio::test]
async fn a_recording_without_a_valid_sample_is_nothing_to_judge() {
    // As `swapsight report` says it (exit 1, "nothing to judge"): a 422
    // with one line, not a 200 with an empty verdict.
    let s = server("nosample");
    let r = &s.app.router;
    let a = call(r, post("/api/recording/start", "")).await;
    let name = a.json()["name"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(100)).await;
    call(r, post("/api/recording/stop", "")).await;
    let text = std::fs::read_to_string(s.dir.path().join(&name)).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.contains(r#""type":"header""#), "{header}");
    let sample = text
        .lines()
        .find(|l| l.contains(r#""type":"sample""#))
        .unwrap();
    std::fs::write(s.dir.path().join("header.jsonl"), format!("{header}\n")).unwrap();
    // Only bad samples: the first is named.
    let bad = sample.replacen(r#""t_ms":"#, r#""t_ms":-"#, 1);
    std::fs::write(
        s.dir.path().join("bad.jsonl"),
        format!("{header}\n{bad}\n{{}}\n"),
    )
    .unwrap();
    for what in ["replay", "report"] {
        let a = call(r, get(&format!("/api/recordings/header.jsonl/{what}"))).await;
        a.assert_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "header.jsonl: the trace has no samples: nothing to judge",
        );
        let a = call(r, get(&format!("/api/recordings/bad.jsonl/{what}"))).await;
        a.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "bad.jsonl: line 2");
        a.assert_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "(and 1 more malformed lines); the trace has no samples left: nothing to judge",
        );
    }
    for file in ["header.jsonl", "bad.jsonl"] {
        for format in ["jsonl", "csv", "perfetto", "png"] {
            let a = call(
                r,
                get(&format!("/api/recordings/{file}/export?format={format}")),
            )
            .await;
            a.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "nothing to export");
            assert_eq!(a.text().lines().count(), 1, "{}", a.text());
        }
    }
}

impl Server {
    /// Event-stream clients now, as an operator sees them: in `/metrics`.
    async fn clients(&self) -> usize {
        let text = call(&self.app.router, get("/metrics")).await.text();
        text.lines()
            .find_map(|l| l.strip_prefix("swapsight_serve_event_clients "))
            .unwrap()
            .parse()
            .unwrap()
    }
}

#[tokio::test]
async fn events_are_capped_and_a_lagging_client_is_dropped() {
    let s = server_with(
        "cap",
        Options {
            max_event_clients: 2,
            event_backlog: 2,
            ..Options::default()
        },
    );
    let r = &s.app.router;
    let a = r.clone().oneshot(get("/api/events")).await.unwrap();
    let b = r.clone().oneshot(get("/api/events")).await.unwrap();
    assert_eq!((a.status(), b.status()), (StatusCode::OK, StatusCode::OK));
    call(r, get("/api/events"))
        .await
        .assert_error(StatusCode::SERVICE_UNAVAILABLE, "too many event streams");
    drop(b);
    let mut b = r
        .clone()
        .oneshot(get("/api/events"))
        .await
        .unwrap()
        .into_body()
        .into_data_stream();

    // `a` reads nothing while 20 ticks go by: it lags and its stream ends.
    let mut a = a.into_body().into_data_stream();
    let mut buf = String::new();
    for _ in 0..20 {
        assert!(next_update(&mut b, &mut buf).await.is_some());
    }
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        let mut events = 0;
        while let Some(chunk) = a.next().await {
            events += String::from_utf8_lossy(&chunk.unwrap())
                .matches("event: update")
                .count();
        }
        events
    })
    .await
    .expect("the lagging stream ends");
    assert!(ended <= 2, "a lagging client got {ended} stale updates");
    drop(a);
    let text = call(r, get("/metrics")).await.text();
    assert!(
        text.contains("swapsight_serve_event_clients_lagged_total 1\n"),
        "{text}"
    );
    assert!(text.contains("swapsight_serve_event_clients 1\n"), "{text}");
}

#[tokio::test]
async fn shutdown_ends_event_streams() {
    let s = server("down");
    let res = s
        .app
        .router
        .clone()
        .oneshot(get("/api/events"))
        .await
        .unwrap();
    let mut body = res.into_body().into_data_stream();
    let mut buf = String::new();
    assert!(next_update(&mut body, &mut buf).await.is_some());
    (s.app.shutdown_handle())();
    let rest = tokio::time::timeout(Duration::from_secs(2), async {
        while body.next().await.is_some() {}
    })
    .await;
    assert!(rest.is_ok(), "the stream did not end on shutdown");
    call(&s.app.router, get("/api/events"))
        .await
        .assert_error(StatusCode::SERVICE_UNAVAILABLE, "shutting down");
}

#[tokio::test]
async fn ui_is_embedded_with_security_headers() {
    let s = server("ui");
    let r = &s.app.router;
    let a = call(r, get("/")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.header(header::CONTENT_TYPE), "text/html; charset=utf-8");
    assert_eq!(
        a.body,
        super::assets::UI.get_file("index.html").unwrap().contents()
    );
    let csp = a.header(header::CONTENT_SECURITY_POLICY);
    for part in [
        "default-src 'self'",
        "img-src 'self' data:",
        "style-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert_eq!(a.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert_eq!(a.header(header::REFERRER_POLICY), "no-referrer");
    assert_eq!(a.header(header::X_FRAME_OPTIONS), "DENY");
    assert_eq!(call(r, get("/index.html")).await.body, a.body);
    // Every embedded file is served with its type.
    for f in super::assets::all_files() {
        let path = f.path().to_str().unwrap();
        let a = call(r, get(&format!("/{path}"))).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        if path.ends_with(".js") {
            assert_eq!(
                a.header(header::CONTENT_TYPE),
                "text/javascript; charset=utf-8"
            );
        }
    }
    call(r, get("/no-such-page.html"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "no such page");
    call(r, get("/../Cargo.toml"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "no such page");
    call(r, post("/index.html", ""))
        .await
        .assert_error(StatusCode::METHOD_NOT_ALLOWED, "POST is not allowed");
    // API answers carry nosniff but no page policy.
    let a = call(r, get("/api/recordings")).await;
    assert_eq!(a.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert_eq!(a.header(header::CONTENT_SECURITY_POLICY), "");
}

#[tokio::test]
async fn unknown_endpoints_and_methods_answer_json() {
    let s = server("unknown");
    let r = &s.app.router;
    call(r, get("/api/nope"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "no such endpoint: /api/nope");
    call(r, get("/api/pin")).await.assert_error(
        StatusCode::METHOD_NOT_ALLOWED,
        "GET is not allowed on /api/pin",
    );
    call(r, post("/api/snapshot", ""))
        .await
        .assert_error(StatusCode::METHOD_NOT_ALLOWED, "POST is not allowed");
    call(r, post("/metrics", ""))
        .await
        .assert_error(StatusCode::METHOD_NOT_ALLOWED, "POST is not allowed");
}

#[test]
fn tokens_and_addresses() {
    assert!(super::check_token("abcdefgh").is_ok());
    assert!(super::check_token("A-b_c.d~e0123456789").is_ok());
    assert!(super::check_token("short")
        .unwrap_err()
        .contains("8 to 256"));
    assert!(super::check_token("has space in it")
        .unwrap_err()
        .contains("' '"));
    assert!(super::check_token("plus+sign+").is_err());
    assert!(super::check_token(&"a".repeat(257)).is_err());
    assert_eq!(super::addr("127.0.0.1:7878").unwrap().port(), 7878);
    assert!(super::addr("localhost:9").unwrap().ip().is_loopback());
    assert!(super::addr("[::1]:9").unwrap().ip().is_loopback());
    assert!(super::addr("nowhere").is_err());
    assert!(super::addr("localhost:x").is_err());
}

#[tokio::test]
async fn a_body_over_the_limit_is_the_apis_json_413() {
    let s = server("big");
    let big = "x".repeat(10 << 20);
    for uri in ["/api/pin", "/api/recording/start"] {
        let a = call(&s.app.router, post(uri, &big)).await;
        a.assert_error(StatusCode::PAYLOAD_TOO_LARGE, "request body over 16 KiB");
        assert_eq!(a.header(header::CONTENT_TYPE), "application/json", "{uri}");
    }
}

#[tokio::test]
async fn absolute_targets_and_two_host_headers_do_not_pass_as_loopback() {
    let s = server("absolute");
    let r = &s.app.router;
    // `GET http://evil.example/… HTTP/1.1`: the target's authority is the
    // host the request names, whatever `Host` says (RFC 9112 §3.2.2).
    call(r, get("http://evil.example/api/recordings"))
        .await
        .assert_error(StatusCode::FORBIDDEN, "host 'evil.example' refused");
    let a = call(r, get("http://127.0.0.1:7878/api/recordings")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    for second in ["evil.example", "127.0.0.1:7878"] {
        let mut req = get("/api/recordings");
        req.headers_mut()
            .append(header::HOST, second.parse().unwrap());
        call(r, req)
            .await
            .assert_error(StatusCode::BAD_REQUEST, "more than one Host header");
    }
}

/// Serves `app` through the connection layer on a loopback port, for the
/// rest of the test.
async fn listen(app: &App) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(super::conn::serve(
        listener,
        app.router.clone(),
        app.limits,
        std::future::pending(),
    ));
    addr
}

/// Sends `request` on a new connection; everything the server sends until
/// it closes (within `limit`), and how long that took.
async fn exchange(
    addr: std::net::SocketAddr,
    request: &str,
    limit: Duration,
) -> (String, Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let t0 = Instant::now();
    let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
    c.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(limit, c.read_to_end(&mut out))
        .await
        .unwrap_or_else(|_| panic!("no end within {limit:?} for {request:?}"))
        .unwrap();
    (String::from_utf8_lossy(&out).into_owned(), t0.elapsed())
}

const METRICS: &str = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_and_idle_connections_are_shed_and_metrics_answers() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let header_timeout = Duration::from_secs(2);
    let s = server_with(
        "slowloris",
        Options {
            header_timeout,
            max_connections: 32,
            ..Options::default()
        },
    );
    assert_eq!(s.app.limits.max_connections, 32);
    let addr = listen(&s.app).await;
    // 100 connections, 3 times the cap: half silent, half with a request
    // head that never ends.
    let mut held = Vec::new();
    for i in 0..100 {
        let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
        if i % 2 == 0 {
            c.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Wait: ")
                .await
                .unwrap();
        }
        held.push(c);
    }
    // /metrics answers well before any of them times out: the oldest
    // half-open connections make room for it.
    for _ in 0..3 {
        let (answer, took) = exchange(addr, METRICS, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
        assert!(
            answer.contains("swapsight_swap_used_bytes"),
            "{answer:.200}"
        );
        assert!(took < header_timeout, "/metrics took {took:?}");
    }
    // Every held connection is closed by the server: made room for, or
    // timed out without a whole request head.
    let t0 = Instant::now();
    for mut c in held {
        let mut sink = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), c.read_to_end(&mut sink))
            .await
            .expect("a half-open connection stayed open")
            .ok();
    }
    assert!(t0.elapsed() < header_timeout * 3, "{:?}", t0.elapsed());

    // A keep-alive connection idle after its answer is closed after the
    // timeout, not before.
    let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
    c.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let answered = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"\r\n\r\nok") {
        let n = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed before answering");
        got.extend_from_slice(&buf[..n]);
    }
    let n = tokio::time::timeout(Duration::from_secs(10), c.read(&mut buf))
        .await
        .expect("an idle keep-alive connection stayed open")
        .unwrap_or(0);
    assert_eq!(n, 0, "{:?}", String::from_utf8_lossy(&buf[..n]));
    let idle = answered.elapsed();
    assert!(
        idle >= header_timeout - Duration::from_millis(200) && idle < header_timeout * 3,
        "closed after {idle:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absolute_targets_and_two_hosts_are_refused_over_a_socket() {
    let s = server("absolute-socket");
    let addr = listen(&s.app).await;
    let (a, _) = exchange(
        addr,
        "GET http://evil.example/api/recordings HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(a.starts_with("HTTP/1.1 403"), "{a}");
    let (a, _) = exchange(
        addr,
        "GET /api/recordings HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(a.starts_with("HTTP/1.1 400"), "{a}");
}

/// A lagged count from `/metrics`.
async fn lagged(router: &Router) -> u64 {
    let text = call(router, get("/metrics")).await.text();
    text.lines()
        .find_map(|l| l.strip_prefix("swapsight_serve_event_clients_lagged_total "))
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_clients_that_never_read_are_dropped_and_free_their_seats() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = server_with(
        "stalled",
        Options {
            max_event_clients: 4,
            write_timeout: Duration::from_millis(500),
            ..Options::default()
        },
    );
    let addr = listen(&s.app).await;
    // Four streams that never read, with a small receive buffer so that
    // the socket fills soon.
    let mut stalled = Vec::new();
    for _ in 0..4 {
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.set_recv_buffer_size(4096).unwrap();
        let mut c = sock.connect(addr).await.unwrap();
        c.write_all(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        stalled.push(c);
    }
    let until = Instant::now() + Duration::from_secs(5);
    while s.clients().await < 4 {
        assert!(Instant::now() < until, "the 4 streams did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (busy, _) = exchange(
        addr,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(busy.starts_with("HTTP/1.1 503"), "{busy:.200}");

    // Their sockets fill, their writes stall past the timeout: dropped,
    // counted as lagged, seats given back.
    let t0 = Instant::now();
    while lagged(&s.app.router).await < 4 || s.clients().await > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "after {:?}: {} lagged, {} clients",
            t0.elapsed(),
            lagged(&s.app.router).await,
            s.clients().await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("4 stalled streams dropped after {:?}", t0.elapsed());
    assert_eq!(lagged(&s.app.router).await, 4);

    // A new stream is served again.
    let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
    c.write_all(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("event: update") {
        let n = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf))
            .await
            .expect("an update within 5 s")
            .unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"));
    drop(stalled);
}

/// A command of `ui/js/transport.js` as its route does it.
fn route(cmd: &str, args: &Value) -> Request<Body> {
    let body = |v: &Value| v.to_string();
    match cmd {
        "process" => get(&format!("/api/process/{}", args["pid"])),
        "pin" => post(
            "/api/pin",
            &body(&serde_json::json!({ "pid": args["pid"] })),
        ),
        "reset_baseline" => post("/api/reset-baseline", ""),
        "start_recording" => post("/api/recording/start", &body(args)),
        "stop_recording" => post("/api/recording/stop", ""),
        "recordings" => get("/api/recordings"),
        "replay" => get(&format!(
            "/api/recordings/{}/replay",
            args["name"].as_str().unwrap()
        )),
        "report" => get(&format!(
            "/api/recordings/{}/report",
            args["name"].as_str().unwrap()
        )),
        _ => panic!("no route for {cmd}"),
    }
}

#[tokio::test]
async fn answers_have_the_shapes_the_app_answers() {
    let s = server("shapes");
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let calls: Value = serde_json::from_str(swapsight_testkit::VIEW_SHAPES).unwrap();
    let mut name = String::new();
    for c in calls.as_array().unwrap() {
        let cmd = c["call"].as_str().unwrap();
        let a = call(r, route(cmd, &c["args"])).await;
        assert_eq!(a.status, StatusCode::OK, "{cmd}: {}", a.text());
        let v = a.json();
        let depth = c["depth"].as_u64().unwrap() as usize;
        assert_eq!(
            swapsight_testkit::json_shape(&v, depth),
            c["shape"],
            "{cmd} {}: {v}",
            c["args"]
        );
        if cmd == "start_recording" {
            name = v["name"].as_str().unwrap().to_owned();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // Replay and report are the core's own views, unwrapped.
    let args = serde_json::json!({ "name": name });
    let replay = call(r, route("replay", &args)).await.json();
    let own = serde_json::to_value(s.live.replay_recording(&name).unwrap()).unwrap();
    assert_eq!(
        swapsight_testkit::json_shape(&replay, 1),
        swapsight_testkit::json_shape(&own, 1)
    );
    assert_eq!(replay["path"], name.as_str());
    let report = call(r, route("report", &args)).await.json();
    let own = serde_json::to_value(s.live.report_recording(&name).unwrap()).unwrap();
    assert_eq!(
        swapsight_testkit::json_shape(&report, 1),
        swapsight_testkit::json_shape(&own, 1)
    );
}

/// A server on [`ScriptedProbe::two_users`] whose session shows the
/// command lines of `commands_of` (as `serve` runs: its own user's, or
/// every one with `--show-all-commands`).
fn two_users_server(tag: &str, commands_of: Option<u32>) -> Server {
    let dir = Tmp::new(tag);
    let cfg = LiveConfig {
        commands_of,
        ..config(dir.path(), 20)
    };
    let probe = ScriptedProbe::two_users();
    let live = Arc::new(Live::start(Box::new(probe), cfg).unwrap());
    let app = app(Arc::clone(&live), Options::default()).unwrap();
    Server { app, live, dir }
}

/// Every answer that carries command lines, as text: the snapshot, a
/// process, an event, and the replay, report and exports of a recording it
/// makes and of every other one in its folder.
async fn answers_with_command_lines(s: &Server) -> Vec<(String, String)> {
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    let mut out = Vec::new();
    let res = r.clone().oneshot(get("/api/events")).await.unwrap();
    let mut body = res.into_body().into_data_stream();
    let update = next_update(&mut body, &mut String::new()).await.unwrap();
    out.push(("/api/events".to_string(), update.to_string()));
    drop(body);
    let a = call(r, post("/api/recording/start", "")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    wait_points(&s.live, 5).await;
    assert_eq!(
        call(r, post("/api/recording/stop", "")).await.status,
        StatusCode::OK
    );
    let mut uris = vec![
        "/api/snapshot".to_string(),
        "/api/process/2".to_string(),
        "/api/process/3".to_string(),
    ];
    for rec in call(r, get("/api/recordings"))
        .await
        .json()
        .as_array()
        .unwrap()
    {
        let name = rec["name"].as_str().unwrap();
        uris.extend(
            [
                "replay",
                "report",
                "export?format=jsonl",
                "export?format=csv",
                "export?format=perfetto",
            ]
            .map(|what| format!("/api/recordings/{name}/{what}")),
        );
    }
    for uri in uris {
        let a = call(r, get(&uri)).await;
        assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.text());
        out.push((uri, a.text()));
    }
    out
}

#[tokio::test]
async fn serve_gave_every_user_every_users_command_lines() {
    // Regression: a tokenless loopback serve answered anyone on the machine
    // with every user's command lines, `--password=hunter2` and all.
    // SAFETY: geteuid takes nothing and cannot fail.
    assert_eq!(super::commands_of(false), Some(unsafe { libc::geteuid() }));
    assert_eq!(super::commands_of(true), None, "--show-all-commands");
    // With --show-all-commands: every user's, in every answer.
    let all = two_users_server("all-commands", None);
    for (uri, text) in answers_with_command_lines(&all).await {
        if !uri.ends_with("csv") && !uri.ends_with("perfetto") {
            assert!(text.contains("--password=hunter"), "{uri}: {text}");
        }
    }
    // Without it: its own user's only, also from a recording that holds
    // the others' (made with the flag, or by `swapsight record`).
    let own = two_users_server("own-commands", Some(1000));
    for rec in std::fs::read_dir(all.dir.path()).unwrap() {
        let rec = rec.unwrap().path();
        assert_eq!(rec.extension().unwrap(), "jsonl");
        std::fs::copy(&rec, own.dir.path().join(rec.file_name().unwrap())).unwrap();
    }
    let answers = answers_with_command_lines(&own).await;
    assert!(answers.len() >= 3 + 2 * 5, "both recordings read");
    for (uri, text) in answers {
        assert!(!text.contains("hunter"), "{uri}: {text}");
    }
    let p1 = call(&own.app.router, get("/api/process/1")).await.json();
    assert_eq!(p1["row"]["cmdline"], "own --token=mine", "{p1}");
}

#[tokio::test]
async fn a_token_redirect_never_leads_off_the_server() {
    // Regression: `GET //evil.example/?token=T` answered 303 to
    // `//evil.example/`, which a browser reads as another host.
    let (s, token) = token_server("redirect");
    let r = &s.app.router;
    for (uri, to) in [
        (format!("//evil.example/?token={token}"), "/evil.example/"),
        (
            format!("///evil.example/x?token={token}&a=1"),
            "/evil.example/x?a=1",
        ),
    ] {
        let a = call(r, get(&uri)).await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{uri}: {}", a.text());
        assert_eq!(a.header(header::LOCATION), to, "{uri}");
    }
}

#[tokio::test]
async fn seconds_past_a_year_are_out_of_range_not_no_number() {
    // Regression: `seconds=1000000000` was refused as "expected a whole number".
    let s = server("seconds");
    let r = &s.app.router;
    for big in ["31536001", "1000000000", "99999999999999999999999"] {
        call(r, get(&format!("/api/history?seconds={big}")))
            .await
            .assert_error(
                StatusCode::BAD_REQUEST,
                &format!("bad seconds '{big}': out of range, expected 0 to 31536000 (a year)"),
            );
    }
    call(r, get("/api/history?seconds=1.5")).await.assert_error(
        StatusCode::BAD_REQUEST,
        "expected a whole number of seconds",
    );
    let a = call(r, get("/api/history?seconds=31536000")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
}

#[tokio::test]
async fn a_body_naming_a_key_twice_is_refused() {
    // Regression: `{"pid":1,"pid":null}` was taken (as its last key says).
    let s = server("dup-keys");
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    for (uri, body) in [
        ("/api/pin", r#"{"pid":1,"pid":null}"#),
        ("/api/pin", r#"{"pid":1,"p\u0069d":2}"#),
        ("/api/recording/start", r#"{"pid":3,"pid":4}"#),
    ] {
        let a = call(r, post(uri, body)).await;
        a.assert_error(
            StatusCode::BAD_REQUEST,
            r#"invalid JSON body: duplicate key "pid""#,
        );
        assert_eq!(a.json()["error"].as_str().unwrap().lines().count(), 1);
    }
    assert_eq!(s.live.snapshot().unwrap().pinned, None, "nothing pinned");
    let a = call(r, get("/api/recordings")).await.json();
    assert_eq!(a, serde_json::json!([]), "nothing recorded");
}

#[test]
fn the_start_line_never_shows_the_token() {
    // Regression: the line carried the token, so a token kept in a 0600
    // file landed in the journal of the service that ran serve.
    let addr: std::net::SocketAddr = "127.0.0.1:7878".parse().unwrap();
    assert_eq!(
        super::start_line(addr, None),
        "swapsight: serving on http://127.0.0.1:7878/ (Ctrl-C to stop)"
    );
    assert_eq!(
        super::start_line(addr, Some("SWAPSIGHT_TOKEN")),
        "swapsight: serving on http://127.0.0.1:7878/?token=…#token=… \
         (… is the token of SWAPSIGHT_TOKEN; Ctrl-C to stop)"
    );
}

fn method_of(c: &contract::Route) -> Method {
    Method::from_bytes(c.method.as_bytes()).unwrap()
}

/// A route's URI with its path parameters filled in.
fn uri_of(c: &contract::Route) -> String {
    let path = c.path.replace("{pid}", "7").replace("{name}", "x.jsonl");
    format!("{}{path}", contract::API)
}

/// The UI calls what `ui/js/contract.js` says; the router must answer each
/// route with that method (not 404, not 405) and refuse the other one.
#[tokio::test]
async fn every_route_of_the_contract_answers_its_method_and_refuses_the_other() {
    let s = server("contract");
    let r = &s.app.router;
    s.live.wait_snapshot(Duration::from_secs(5)).unwrap();
    for c in &contract::ROUTES {
        let uri = uri_of(c);
        let method = method_of(c);
        let body = if c.body.is_empty() {
            ""
        } else {
            r#"{"pid": null}"#
        };
        // Status only: the event stream's body never ends.
        let res = r
            .clone()
            .oneshot(request(method.clone(), &uri, body))
            .await
            .unwrap();
        assert_ne!(
            res.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {uri}"
        );
        if res.status() == StatusCode::NOT_FOUND {
            // A missing process or recording, not a missing route.
            let body = axum::body::to_bytes(res.into_body(), 1 << 20)
                .await
                .unwrap();
            let text = String::from_utf8_lossy(&body);
            assert!(!text.contains("no such endpoint"), "{method} {uri}: {text}");
        }
        let other = if method == Method::GET {
            Method::POST
        } else {
            Method::GET
        };
        call(r, request(other.clone(), &uri, ""))
            .await
            .assert_error(StatusCode::METHOD_NOT_ALLOWED, "is not allowed on");
    }
}

#[path = "serve/replay_tests.rs"]
mod replay;
