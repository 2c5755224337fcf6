//! `swapsight serve` as a whole: the binary on a loopback port with the real
//! probe. It answers over HTTP and stops on Ctrl-C with an event stream open;
//! the token rule holds over a real socket and a non-loopback address
//! without one is refused at start; a load of 1,000 `/metrics` requests and
//! 50 event streams gets no error and leaves memory flat; 600 half-open
//! connections under `ulimit -n 512` do not shut `/metrics` out; and the web UI in
//! headless Chromium lists real processes and flags a real false fit
//! (`tests/e2e/`, run by `node --test`).
//!
//! Traffic goes to 127.0.0.1 only, every loop is bounded in count and time.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))] // used by Linux-only tests too
use std::path::{Path, PathBuf};
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))] // used by Linux-only tests too
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))] // used by Linux-only tests too
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::util::*;

/// The heavy tests (load, Chromium) one at a time: each wants the 2 cores.
#[cfg(target_os = "linux")]
static HEAVY: Mutex<()> = Mutex::new(());

#[cfg(target_os = "linux")]
fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// A `swapsight serve` on 127.0.0.1 and a free port; killed on drop.
struct Serving {
    child: Child,
    addr: SocketAddr,
    /// The URL it printed (with `?token=…#token=…` when it has a token: the
    /// token's place, never the token).
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Serving {
    fn start(args: &[&str], envs: &[(&str, &str)]) -> Serving {
        let mut cmd = swapsight();
        cmd.args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .env_remove("SWAPSIGHT_TOKEN")
            .envs(envs.iter().copied());
        Serving::start_command(cmd)
    }

    /// A server under `ulimit -n nofile` (the shell execs it: same pid).
    #[cfg(target_os = "linux")]
    fn start_with_nofile(nofile: u32, args: &[&str]) -> Serving {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_swapsight"))
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .env_remove("SWAPSIGHT_TOKEN")
            .stdin(Stdio::null());
        Serving::start_command(cmd)
    }

    fn start_command(mut cmd: Command) -> Serving {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start swapsight serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let log = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                {
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
                if line.contains("serving on") {
                    let _ = tx.send(line);
                }
            }
        });
        let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve did not start: {}", stderr.lock().unwrap());
        };
        let url = line
            .split_once("serving on ")
            .and_then(|(_, rest)| rest.split_once(" ("))
            .map(|(url, _)| url.to_string())
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let hostport = url
            .strip_prefix("http://")
            .and_then(|r| r.split_once('/'))
            .map(|(h, _)| h)
            .unwrap_or_else(|| panic!("bad URL {url}"));
        Serving {
            addr: hostport.parse().expect("an IP:port in the URL"),
            child,
            url,
            stderr,
        }
    }

    fn base(&self) -> String {
        format!("http://{}/", self.addr)
    }

    #[cfg(target_os = "linux")]
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ctrl-C, then its exit status (within `limit`).
    fn interrupt(&mut self, limit: Duration) -> ExitStatus {
        // SAFETY: SIGINT to our own child, not reaped yet.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        wait_with_deadline(&mut self.child, limit)
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One keep-alive HTTP/1 connection.
struct Conn {
    addr: SocketAddr,
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn { addr, sender })
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Response<Incoming>, String> {
        self.sender
            .ready()
            .await
            .map_err(|e| format!("not ready: {e}"))?;
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        self.sender
            .send_request(req)
            .await
            .map_err(|e| format!("{path}: {e}"))
    }
}

/// Status, content type and body text of one request on a new connection.
async fn fetch(
    addr: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, String, String) {
    let mut c = Conn::open(addr).await.unwrap();
    let res = c.send(method, path, headers, body).await.unwrap();
    let status = res.status();
    let ctype = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, ctype, String::from_utf8_lossy(&bytes).into_owned())
}

async fn get(addr: SocketAddr, path: &str) -> (StatusCode, String, String) {
    fetch(addr, Method::GET, path, &[], "").await
}

/// Reads an open event stream until `n` updates came; each one's data must
/// be an update's JSON. `Err` when it ends or stalls first.
async fn read_updates(res: Response<Incoming>, n: usize, limit: Duration) -> Result<usize, String> {
    let mut body = res.into_body();
    let mut text = String::new();
    let mut seen = 0;
    let until = tokio::time::Instant::now() + limit;
    while seen < n {
        let frame = tokio::time::timeout_at(until, body.frame())
            .await
            .map_err(|_| format!("{seen} of {n} updates in {limit:?}"))?;
        let Some(frame) = frame else {
            return Err(format!("the stream ended after {seen} of {n} updates"));
        };
        let frame = frame.map_err(|e| format!("stream: {e}"))?;
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            if let Some(json) = event.strip_prefix("event: update\ndata: ") {
                let v: serde_json::Value = serde_json::from_str(json.trim_end())
                    .map_err(|e| format!("bad update JSON: {e}"))?;
                if !v["snapshot"]["processes"].is_array() {
                    return Err(format!("not an update: {v}"));
                }
                seen += 1;
            }
        }
    }
    Ok(seen)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn serve_refuses_a_non_loopback_address_without_a_token() {
    for addr in ["0.0.0.0:7878", "[::]:7878", "192.0.2.1:7878"] {
        let out = swapsight()
            .args(["serve", "--addr", addr])
            .env_remove("SWAPSIGHT_TOKEN")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        let err = stderr_of(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "swapsight: refusing to serve on {addr} without a token: a non-loopback address needs --token"
            )),
            "{err}"
        );
    }
    let out = swapsight()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("SWAPSIGHT_TOKEN", "bad/token!")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).starts_with(
            "swapsight: bad SWAPSIGHT_TOKEN: may hold only A-Z a-z 0-9 . _ ~ - (found '/')"
        ),
        "{}",
        stderr_of(&out)
    );
    for (args, words) in [
        (
            &["--token", "short"][..],
            "bad --token: must be 8 to 256 characters",
        ),
        (
            &["--token", "has space in it"][..],
            "bad --token: may hold only",
        ),
        (
            &["--addr", "nowhere"][..],
            "invalid value 'nowhere' for '--addr <ADDR>'",
        ),
    ] {
        let out = swapsight()
            .arg("serve")
            .args(args)
            .env_remove("SWAPSIGHT_TOKEN")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr_of(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(words), "{err}");
    }
}

#[test]
fn serve_answers_over_http_and_stops_on_ctrl_c_with_a_stream_open() {
    let dir = TempDir::new("serve");
    let rec = dir.join("recordings");
    let mut s = Serving::start(&["--recordings", rec.to_str().unwrap()], &[]);
    assert_eq!(s.url, s.base(), "no token, no token in the URL");
    assert!(s.stderr().starts_with(&format!(
        "swapsight: serving on {} (Ctrl-C to stop)\n",
        s.base()
    )));
    let addr = s.addr;
    runtime().block_on(async {
        let (st, ctype, body) = get(addr, "/healthz").await;
        assert_eq!(
            (st, ctype.as_str(), body.as_str()),
            (StatusCode::OK, "text/plain; charset=utf-8", "ok")
        );

        let (st, _, body) = get(addr, "/api/snapshot").await;
        assert_eq!(st, StatusCode::OK, "{body}");
        let snap: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(snap["process_count"].as_u64().unwrap() > 1, "{snap}");
        let own = snap["processes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["footprint_bytes"].as_u64() > Some(0));
        assert!(own, "no process with a footprint: {snap}");

        let (st, ctype, body) = get(addr, "/metrics").await;
        assert_eq!(st, StatusCode::OK);
        assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
        assert!(body.contains("\nswapsight_swap_used_bytes "), "{body}");
        assert!(
            body.contains("swapsight_process_footprint_bytes{pid=\""),
            "{body}"
        );

        let (st, ctype, _) = get(addr, "/").await;
        assert_eq!(
            (st, ctype.as_str()),
            (StatusCode::OK, "text/html; charset=utf-8")
        );

        // A recording started over HTTP lands in --recordings.
        let (st, _, body) = fetch(addr, Method::POST, "/api/recording/start", &[], "{}").await;
        assert_eq!(st, StatusCode::OK, "{body}");
        let started: serde_json::Value = serde_json::from_str(&body).unwrap();
        // By name: the server's folder stays its own.
        assert!(started.get("path").is_none(), "{started}");
        let name = started["name"].as_str().unwrap();
        assert!(rec.join(name).is_file(), "{started}");
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let (st, _, body) = fetch(addr, Method::POST, "/api/recording/stop", &[], "").await;
        assert_eq!(st, StatusCode::OK, "{body}");
        let stopped: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(stopped["samples"].as_u64().unwrap() >= 2, "{stopped}");
        let (_, _, body) = get(addr, "/api/recordings").await;
        let list: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(list[0]["name"], started["name"], "{list}");
        let name = started["name"].as_str().unwrap();
        let (st, ctype, csv) =
            get(addr, &format!("/api/recordings/{name}/export?format=csv")).await;
        assert_eq!(st, StatusCode::OK);
        assert!(ctype.starts_with("text/csv"), "{ctype}");
        assert!(csv.lines().count() > 2, "{csv}");

        // An event stream stays open while the server is told to stop.
        let mut c = Conn::open(addr).await.unwrap();
        let res = c.send(Method::GET, "/api/events", &[], "").await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let open = tokio::spawn(read_updates(res, 1_000, Duration::from_secs(30)));
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let started = Instant::now();
        let status = s.interrupt(Duration::from_secs(10));
        assert!(status.success(), "{status:?}: {}", s.stderr());
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "took {:?}",
            started.elapsed()
        );
        let ended = open.await.unwrap();
        assert!(
            ended.is_err_and(|e| e.contains("ended")),
            "the stream did not end with the server"
        );
    });
    assert!(
        s.stderr().ends_with("swapsight: stopped\n"),
        "{}",
        s.stderr()
    );
    assert!(std::fs::read_dir(&rec).unwrap().count() == 1);
}

#[test]
fn serve_with_a_token_needs_it_over_a_real_socket() {
    let dir = TempDir::new("serve-token");
    let token = "t0ken-for-the-test_1234";
    let rec = dir.join("rec");
    let s = Serving::start(
        &["--recordings", rec.to_str().unwrap()],
        &[("SWAPSIGHT_TOKEN", token)],
    );
    // Regression: the start line carried the token, into a service's journal.
    assert_eq!(s.url, format!("{}?token=…#token=…", s.base()));
    assert!(
        s.stderr()
            .contains("(… is the token of SWAPSIGHT_TOKEN; Ctrl-C to stop)"),
        "{}",
        s.stderr()
    );
    assert!(!s.stderr().contains(token), "{}", s.stderr());
    let addr = s.addr;
    let bearer = format!("Bearer {token}");
    runtime().block_on(async {
        assert_eq!(get(addr, "/healthz").await.0, StatusCode::OK);
        for path in [
            "/api/snapshot",
            "/metrics",
            "/",
            "/api/recordings",
            "/api/events",
        ] {
            let (st, ctype, body) = get(addr, path).await;
            assert_eq!(st, StatusCode::UNAUTHORIZED, "{path}");
            assert!(
                ctype.starts_with("application/json") && body.contains("\"error\""),
                "{body}"
            );
            let (st, _, _) = fetch(
                addr,
                Method::GET,
                path,
                &[("authorization", "Bearer wrong-token-0000")],
                "",
            )
            .await;
            assert_eq!(st, StatusCode::UNAUTHORIZED, "{path}");
        }
        for path in ["/api/snapshot", "/metrics", "/", "/api/recordings"] {
            let (st, _, body) =
                fetch(addr, Method::GET, path, &[("authorization", &bearer)], "").await;
            assert_eq!(st, StatusCode::OK, "{path}: {body}");
        }
        let (st, _, _) = fetch(addr, Method::POST, "/api/reset-baseline", &[], "").await;
        assert_eq!(st, StatusCode::UNAUTHORIZED);
        let (st, _, _) = fetch(
            addr,
            Method::POST,
            "/api/reset-baseline",
            &[("authorization", &bearer)],
            "",
        )
        .await;
        assert_eq!(st, StatusCode::OK);
        // The printed URL trades the token for a cookie the page loads
        // with; the event stream takes ?token=.
        let mut c = Conn::open(addr).await.unwrap();
        let res = c
            .send(Method::GET, &format!("/?token={token}"), &[], "")
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::SEE_OTHER);
        assert_eq!(res.headers()["location"], "/");
        let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
        let cookie = cookie.split(';').next().unwrap();
        let (st, ctype, _) = fetch(addr, Method::GET, "/", &[("cookie", cookie)], "").await;
        assert_eq!(
            (st, ctype.as_str()),
            (StatusCode::OK, "text/html; charset=utf-8")
        );
        let (st, _, _) = fetch(
            addr,
            Method::GET,
            "/api/snapshot",
            &[("cookie", cookie)],
            "",
        )
        .await;
        assert_eq!(
            st,
            StatusCode::UNAUTHORIZED,
            "the API does not take the cookie"
        );
        let mut c = Conn::open(addr).await.unwrap();
        let res = c
            .send(Method::GET, &format!("/api/events?token={token}"), &[], "")
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(read_updates(res, 1, Duration::from_secs(5)).await, Ok(1));
    });
}

#[test]
fn serve_says_when_the_port_is_taken() {
    let s = Serving::start(&[], &[]);
    let out = swapsight()
        .args(["serve", "--addr", &s.addr.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.starts_with(&format!("swapsight: cannot listen on {}: ", s.addr)),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `sh` sleeping with `secret` in its arguments, run as `nobody` (uid
/// 65534) when `as_nobody`, else as the test's user; why not, when it
/// cannot be (root is needed to run as another user).
#[cfg(target_os = "linux")]
fn sleeper(as_nobody: bool, secret: &str) -> Result<Child, String> {
    let mut cmd = if as_nobody {
        if !is_root() {
            return Err("starting a process as another user needs root".into());
        }
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh"]);
        c
    } else {
        Command::new("sh")
    };
    // `; :` keeps the shell (and its arguments) alive beside `sleep`.
    let child = cmd
        .args(["-c", "sleep 60; :", "sh", secret])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start a sleeper: {e}"))?;
    // Until `setpriv` has exec'd the shell, the process is still this
    // user's `setpriv`, whose command line a snapshot may rightly show (a
    // loaded CI machine once caught it so).
    let until = Instant::now() + Duration::from_secs(10);
    let comm = format!("/proc/{}/comm", child.id());
    while std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() != "sh") {
        if Instant::now() > until {
            return Err("the sleeper never became `sh`".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(child)
}

/// Pins `pid` and waits for its row: the row and the snapshot's text.
#[cfg(target_os = "linux")]
async fn pinned_row(addr: SocketAddr, pid: u32) -> (serde_json::Value, String) {
    let body = format!(r#"{{"pid":{pid}}}"#);
    let (st, _, text) = fetch(addr, Method::POST, "/api/pin", &[], &body).await;
    assert_eq!(st, StatusCode::OK, "{text}");
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, _, text) = get(addr, "/api/snapshot").await;
        let snap: serde_json::Value = serde_json::from_str(&text).unwrap();
        let row = snap["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["pid"] == pid);
        if let Some(row) = row {
            return (row.clone(), text);
        }
        assert!(
            Instant::now() < until,
            "pid {pid} never in the table: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(target_os = "linux")]
#[test]
fn serve_shows_another_users_command_line_only_with_show_all_commands() {
    // Regression: any local user read every user's command lines from a
    // tokenless loopback serve, `--password=hunter2` and all.
    let theirs = match sleeper(true, "--password=hunter2") {
        Ok(c) => KillOnDrop(c),
        Err(why) => {
            assert!(!in_ci(), "the other-user test must run in CI, but: {why}");
            eprintln!("note: other-user command line test skipped outside CI: {why}");
            return;
        }
    };
    let mine = KillOnDrop(sleeper(false, "--password=my-own").unwrap());
    let dir = TempDir::new("serve-commands");
    let rec = dir.join("rec");
    let rec = rec.to_str().unwrap();
    let shown = |args: &[&str]| {
        let s = Serving::start(&[&["--recordings", rec][..], args].concat(), &[]);
        let addr = s.addr;
        runtime().block_on(async {
            let (row, snapshot) = pinned_row(addr, theirs.0.id()).await;
            let (_, _, process) = get(addr, &format!("/api/process/{}", theirs.0.id())).await;
            let (own, _) = pinned_row(addr, mine.0.id()).await;
            assert_eq!(
                own["cmdline"], "sh -c 'sleep 60; :' sh --password=my-own",
                "{own}"
            );
            (row, snapshot + &process)
        })
    };
    let (row, text) = shown(&[]);
    assert!(row.get("cmdline").is_none(), "{row}");
    assert!(!text.contains("hunter2"), "{text}");
    let (row, _) = shown(&["--show-all-commands"]);
    assert_eq!(
        row["cmdline"], "sh -c 'sleep 60; :' sh --password=hunter2",
        "{row}"
    );
}

/// A child killed (and reaped) when the test ends, however it ends.
#[cfg(target_os = "linux")]
struct KillOnDrop(Child);

#[cfg(target_os = "linux")]
impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Resident memory of a process, from `/proc/PID/status`.
#[cfg(target_os = "linux")]
fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// What one round of load did.
#[derive(Debug, Default)]
#[cfg(target_os = "linux")]
struct Round {
    requests: usize,
    streams: usize,
    updates: usize,
    errors: Vec<String>,
    elapsed: Duration,
}

/// `requests` `/metrics` over `connections` keep-alive connections while
/// `streams` event streams each read `updates` updates, all at once.
#[cfg(target_os = "linux")]
async fn load_round(
    addr: SocketAddr,
    requests: usize,
    connections: usize,
    streams: usize,
    updates: usize,
) -> Round {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..streams {
        tasks.push(tokio::spawn(async move {
            let mut c = Conn::open(addr).await?;
            let res = c.send(Method::GET, "/api/events", &[], "").await?;
            if res.status() != StatusCode::OK {
                return Err(format!("stream {i}: {}", res.status()));
            }
            read_updates(res, updates, Duration::from_secs(20))
                .await
                .map(|n| (0, n))
                .map_err(|e| format!("stream {i}: {e}"))
        }));
    }
    let per = requests / connections;
    for i in 0..connections {
        let n = per + usize::from(i < requests % connections);
        tasks.push(tokio::spawn(async move {
            let mut c = Conn::open(addr).await?;
            for _ in 0..n {
                let res = c.send(Method::GET, "/metrics", &[], "").await?;
                let st = res.status();
                let body = res
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| format!("body: {e}"))?
                    .to_bytes();
                if st != StatusCode::OK || !body.starts_with(b"# HELP swapsight_") {
                    return Err(format!("/metrics: {st}"));
                }
            }
            Ok((n, 0))
        }));
    }
    let mut round = Round::default();
    for t in tasks {
        match tokio::time::timeout(Duration::from_secs(60), t).await {
            Ok(Ok(Ok((req, upd)))) => {
                round.requests += req;
                if upd > 0 {
                    round.streams += 1;
                    round.updates += upd;
                }
            }
            Ok(Ok(Err(e))) => round.errors.push(e),
            Ok(Err(e)) => round.errors.push(format!("task: {e}")),
            Err(_) => round.errors.push("a task ran over 60 s".into()),
        }
    }
    round.elapsed = started.elapsed();
    round
}

/// `swapsight_serve_event_clients` from `/metrics`.
#[cfg(target_os = "linux")]
async fn event_clients(addr: SocketAddr) -> u64 {
    let (_, _, text) = get(addr, "/metrics").await;
    text.lines()
        .find_map(|l| l.strip_prefix("swapsight_serve_event_clients "))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn serve_under_load_keeps_memory_flat() {
    let _heavy = heavy();
    let s = Serving::start(&[], &[]);
    let (addr, pid) = (s.addr, s.pid());
    runtime().block_on(async {
        // Warm-up: allocator arenas, the blocking pool, connection buffers.
        let warm = load_round(addr, 300, 16, 50, 2).await;
        assert!(warm.errors.is_empty(), "warm-up errors: {:?}", warm.errors);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let before = vm_rss_kib(pid);

        let round = load_round(addr, 1_000, 16, 50, 4).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let after = vm_rss_kib(pid);
        let clients = event_clients(addr).await;
        eprintln!(
            "load: {} /metrics requests and {} event streams ({} updates) in {:.1?}, {} errors; \
             server VmRSS {} KiB before, {} KiB after ({:+} KiB); {} streams open after",
            round.requests,
            round.streams,
            round.updates,
            round.elapsed,
            round.errors.len(),
            before,
            after,
            after as i64 - before as i64,
            clients
        );
        assert!(round.errors.is_empty(), "errors: {:?}", round.errors);
        assert_eq!((round.requests, round.streams), (1_000, 50));
        assert_eq!(clients, 0, "streams still counted after their clients left");
        assert!(
            after <= before + 8 * 1024,
            "VmRSS grew from {before} to {after} KiB"
        );
    });
}

/// Runs `cmd`; `None` when it cannot run at all.
#[cfg(target_os = "linux")]
fn try_output(cmd: &mut Command) -> Option<std::process::Output> {
    cmd.stdin(Stdio::null()).output().ok()
}

/// The repository root (`tests/e2e/` lives there).
#[cfg(target_os = "linux")]
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Node, Chromium and the e2e packages, or why not (then: skip outside
/// CI, fail in CI).
#[cfg(target_os = "linux")]
fn browser_ready(e2e: &Path) -> Result<(), String> {
    let node = try_output(Command::new("node").arg("--version")).ok_or("node is not installed")?;
    if !node.status.success() {
        return Err("node does not run".into());
    }
    browser()?;
    if !e2e.join("node_modules/playwright-core").exists() {
        let out = try_output(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(e2e),
        )
        .ok_or("npm is not installed")?;
        if !out.status.success() {
            return Err(format!("npm ci failed in tests/e2e: {}", stderr_of(&out)));
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
#[test]
fn web_ui_in_chromium_lists_real_processes_and_flags_a_real_false_fit() {
    let _heavy = heavy();
    let root = repo_root();
    let e2e = root.join("tests/e2e");
    if let Err(why) = browser_ready(&e2e) {
        assert!(!in_ci(), "the web UI test must run in CI, but: {why}");
        eprintln!("note: web UI test skipped outside CI: {why}");
        return;
    }
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let dir = TempDir::new("serve-ui");
    let s = Serving::start(&["--recordings", dir.join("rec").to_str().unwrap()], &[]);

    // A real false fit: 1200 MiB of random bytes in a 256 MiB memory cgroup,
    // touched over and over, so it pages in while swap climbs.
    let fill = memfill();
    let cmd = rs.wrap(&[
        "python3",
        fill.to_str().unwrap(),
        "--mb",
        "1200",
        "--chunk-mb",
        "32",
        "--hold",
        "30",
    ]);
    let mut filler = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("start the filler");

    let screenshot = std::env::var_os("SWAPSIGHT_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("serve-ui.png"));
    let pid = filler.id().to_string();
    let out = node_test(
        &root,
        &s,
        &[
            ("SWAPSIGHT_FALSE_FIT_PID", pid.as_str()),
            // Shown by the script it runs; the hover gives the command line.
            ("SWAPSIGHT_FALSE_FIT_NAME", "memfill.py (python3"),
            (
                "SWAPSIGHT_FALSE_FIT_CMDLINE",
                "memfill.py --mb 1200 --chunk-mb 32",
            ),
            ("SWAPSIGHT_SCREENSHOT", screenshot.to_str().unwrap()),
        ],
    );
    // On failure, say what the filler and the server's view of it were.
    let diagnosis = out.as_ref().err().map(|_| {
        let alive = filler
            .try_wait()
            .ok()
            .flatten()
            .map_or("running".into(), |st| format!("exited: {st}"));
        let (_, _, row) = runtime().block_on(get(s.addr, &format!("/api/process/{pid}")));
        format!("the filler {pid} was {alive}; the server's row for it: {row}")
    });
    let _ = filler.kill();
    let _ = filler.wait();
    drop(rs);
    if let Err(e) = out {
        panic!("{e}\n{}", diagnosis.unwrap_or_default());
    }
    let png = std::fs::read(&screenshot).expect("a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // The same page behind a token, opened from the URL the server printed
    // with the token in its place: the page loads (cookie), the API answers
    // (bearer), updates stream (?token=), and the token leaves the address
    // bar.
    let token = "e2e-token-0123456789abcdef";
    let mut t = Serving::start(
        &["--recordings", dir.join("rec").to_str().unwrap()],
        &[("SWAPSIGHT_TOKEN", token)],
    );
    t.url = t.url.replace('…', token);
    assert_eq!(t.url, format!("{}?token={token}#token={token}", t.base()));
    node_test(&root, &t, &[]).unwrap();
}

/// `node --test tests/e2e/` against `s`; `Err` with what it said when a
/// test failed or none ran.
#[cfg(target_os = "linux")]
fn node_test(root: &Path, s: &Serving, envs: &[(&str, &str)]) -> Result<(), String> {
    let started = Instant::now();
    let out = Command::new("node")
        .args(["--test", "--test-reporter=tap", "tests/e2e/"])
        .current_dir(root)
        .env("SWAPSIGHT_URL", &s.url)
        .env("CHROMIUM", browser().expect("checked by browser_ready"))
        .env_remove("SWAPSIGHT_SCREENSHOT")
        .env_remove("SWAPSIGHT_FALSE_FIT_PID")
        .env_remove("SWAPSIGHT_FALSE_FIT_NAME")
        .env_remove("SWAPSIGHT_FALSE_FIT_CMDLINE")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run node --test");
    let tap = stdout_of(&out);
    eprintln!(
        "--- node --test tests/e2e/ on {} ({:.1?}) ---\n{tap}{}",
        s.url,
        started.elapsed(),
        stderr_of(&out)
    );
    if !out.status.success() || !tap.contains("# fail 0") || tap.contains("# pass 0") {
        return Err(format!(
            "the web UI test failed (or ran none); server said:\n{}",
            s.stderr()
        ));
    }
    Ok(())
}

#[cfg(target_os = "linux")]
/// Open descriptors of a process.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

#[cfg(target_os = "linux")]
/// `/metrics` on a new connection: its status and how long it took.
async fn timed_metrics(addr: SocketAddr) -> (StatusCode, Duration) {
    let t0 = Instant::now();
    let (status, _, body) = tokio::time::timeout(Duration::from_secs(20), get(addr, "/metrics"))
        .await
        .expect("/metrics within 20 s");
    assert!(body.starts_with("# HELP swapsight_"), "{body:.200}");
    (status, t0.elapsed())
}

#[cfg(target_os = "linux")]
#[test]
fn serve_sheds_half_open_connections_and_metrics_keeps_answering() {
    use tokio::io::AsyncWriteExt;
    let _heavy = heavy();
    // 512 descriptors: the connection cap comes down to 256, and 600
    // half-open connections would run the server out of descriptors
    // without it.
    let dir = TempDir::new("serve-slowloris");
    let s = Serving::start_with_nofile(512, &["--recordings", dir.path().to_str().unwrap()]);
    let (addr, pid) = (s.addr, s.pid());
    runtime().block_on(async {
        for _ in 0..20 {
            timed_metrics(addr).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let before = vm_rss_kib(pid);
        let mut held = Vec::new();
        for i in 0..600 {
            let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
            if i % 2 == 0 {
                let _ = c
                    .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Wait: ")
                    .await;
            }
            held.push(c);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut worst = Duration::ZERO;
        for _ in 0..5 {
            let (status, took) = timed_metrics(addr).await;
            assert_eq!(status, StatusCode::OK);
            worst = worst.max(took);
        }
        let (during, fds) = (vm_rss_kib(pid), open_fds(pid));
        drop(held);
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (status, _) = timed_metrics(addr).await;
        let after = vm_rss_kib(pid);
        eprintln!(
            "slowloris: 600 half-open connections under ulimit -n 512: /metrics at worst {worst:?}; \
             server {fds} descriptors open during; VmRSS {before} KiB before, {during} during, \
             {after} after"
        );
        assert_eq!(status, StatusCode::OK);
        // Well under the 10 s header timeout: room was made, not waited for.
        assert!(worst < Duration::from_secs(3), "/metrics took {worst:?}");
        assert!(fds < 512, "{fds} descriptors open");
        assert!(
            after <= before + 8 * 1024,
            "VmRSS grew from {before} to {after} KiB"
        );
    });
    drop(s);
}
