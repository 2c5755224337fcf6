//! `swapsight serve` as one of many machines: a real Prometheus (Debian's,
//! with the repository's alert rules) scrapes it every second while a real
//! false fit runs — a filler in a capped memory cgroup over a swap file —
//! and its HTTP API shows the false-fit series for the filler's pid, swap
//! growth rising, the false-fit alert pending then firing, the token
//! enforced on scrapes, per-process series bounded and gone once the process
//! leaves, and every PromQL of the Grafana dashboard answering with data.
//! `promtool check metrics` finds nothing to say about a live `/metrics`.
//! And `serve` stopped by SIGTERM, as a service manager stops it, finishes
//! the recording it was making.
//!
//! Outside CI the tests skip with a note when Prometheus, promtool or root
//! is missing; with `CI=true` they must run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::util::*;

const TOKEN: &str = "prometheus-scrape-token-0123";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(super) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Why Prometheus cannot run here, if it cannot.
pub(super) fn prometheus_missing() -> Option<String> {
    ["prometheus", "promtool"]
        .iter()
        .find(|b| which(b).is_none())
        .map(|b| format!("no {b} on PATH (scripts/setup installs Debian's prometheus)"))
}

/// A free loopback port (closed again: the server that takes it binds it
/// itself a moment later).
pub(super) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Query-string encoding: everything but the unreserved characters.
pub(super) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One HTTP/1.0 request (the answer ends with the connection, no chunks);
/// `(status, body)`. Bounded in time and size.
pub(super) fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl AsRef<[u8]>,
) -> Result<(u16, String), String> {
    let body = body.as_ref();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(req.as_bytes())
        .and_then(|()| s.write_all(body))
        .map_err(|e| format!("send to {addr}: {e}"))?;
    let mut raw = Vec::new();
    s.take(64 << 20)
        .read_to_end(&mut raw)
        .map_err(|e| format!("read from {addr}{path}: {e}"))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP header from {addr}{path}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("bad status line from {addr}{path}: {head:?}"))?;
    Ok((status, body.to_string()))
}

/// A `swapsight serve` on a free loopback port; killed on drop.
pub(super) struct Serve {
    child: Child,
    pub(super) addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Serve {
    pub(super) fn start(args: &[&str], envs: &[(&str, &str)]) -> Serve {
        let mut argv = vec!["serve", "--addr", "127.0.0.1:0"];
        argv.extend_from_slice(args);
        Serve::start_argv(&argv, envs)
    }

    /// The binary with `argv` (after the program name) as it is.
    fn start_argv(argv: &[&str], envs: &[(&str, &str)]) -> Serve {
        let mut child = swapsight()
            .args(argv)
            .env_remove("SWAPSIGHT_TOKEN")
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start swapsight serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let log = Arc::clone(&stderr);
        let pipe = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                log.lock().unwrap().push_str(&format!("{line}\n"));
                if let Some(url) = line.split_once("serving on http://") {
                    let _ = tx.send(url.1.split('/').next().unwrap_or("").to_string());
                }
            }
        });
        let Ok(hostport) = rx.recv_timeout(Duration::from_secs(20)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve did not start: {}", stderr.lock().unwrap());
        };
        Serve {
            child,
            addr: hostport.parse().expect("IP:port in the printed URL"),
            stderr,
        }
    }

    pub(super) fn metrics(&self, token: Option<&str>) -> String {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("Authorization", a.as_str())).collect();
        let (st, body) = http(self.addr, "GET", "/metrics", &headers, "").unwrap();
        assert_eq!(st, 200, "/metrics: {body}");
        body
    }

    pub(super) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A Prometheus with its own data dir, config and port; killed on drop.
pub(super) struct Prometheus {
    child: Child,
    pub(super) addr: SocketAddr,
    dir: TempDir,
    flags: Vec<String>,
    /// `Authorization` of every request (a `--web.config.file` with users).
    auth: Option<String>,
}

impl Prometheus {
    /// Debian's Prometheus on a free loopback port with `config` and
    /// `flags`, ready.
    pub(super) fn start_with(config: &str, flags: &[&str]) -> Prometheus {
        Prometheus::start_as(config, flags, None)
    }

    /// [`Prometheus::start_with`], asking with `auth` (an `Authorization`
    /// value) when its web config wants users.
    pub(super) fn start_as(config: &str, flags: &[&str], auth: Option<&str>) -> Prometheus {
        let dir = TempDir::new("prometheus");
        std::fs::write(dir.join("prometheus.yml"), config).unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let mut argv = vec![
            format!("--config.file={}", dir.join("prometheus.yml").display()),
            format!("--storage.tsdb.path={}", dir.join("data").display()),
            format!("--web.listen-address={addr}"),
        ];
        argv.extend(flags.iter().map(|f| f.to_string()));
        let child = spawn_prometheus(&dir, &argv);
        let p = Prometheus {
            child,
            addr,
            dir,
            flags: argv,
            auth: auth.map(str::to_string),
        };
        p.wait_ready();
        p
    }

    fn wait_ready(&self) {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            match http(self.addr, "GET", "/-/ready", &self.headers(), "") {
                Ok((200, _)) => return,
                _ => assert!(
                    Instant::now() < until,
                    "prometheus not ready in 60 s:\n{}",
                    self.log()
                ),
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        self.auth
            .iter()
            .map(|a| ("Authorization", a.as_str()))
            .collect()
    }

    /// Stops it as a service manager does (SIGTERM: the WAL is flushed)
    /// and waits for it to exit.
    pub(super) fn stop(&mut self) {
        // SAFETY: kill only sends a signal to the child this owns.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < until, "prometheus did not stop in 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts it again on the same port and storage, after [`Prometheus::stop`].
    pub(super) fn restart(&mut self) {
        self.child = spawn_prometheus(&self.dir, &self.flags);
        self.wait_ready();
    }

    pub(super) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// `data` of an API call, which must answer `success`.
    pub(super) fn api(&self, path: &str) -> Value {
        let (st, body) = http(self.addr, "GET", path, &self.headers(), "")
            .unwrap_or_else(|e| panic!("{e}\n{}", self.log()));
        let v: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        assert!(st == 200 && v["status"] == "success", "{path}: {st} {body}");
        v["data"].clone()
    }

    /// The result of an instant query (a vector's samples, a matrix's series).
    pub(super) fn query(&self, q: &str) -> Vec<Value> {
        let data = self.api(&format!("/api/v1/query?query={}", encode(q)));
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// The single value of an instant query, `None` when it has no sample.
    pub(super) fn value(&self, q: &str) -> Option<f64> {
        let r = self.query(q);
        assert!(r.len() <= 1, "{q} has {} series: {r:?}", r.len());
        r.first()
            .and_then(|s| s["value"][1].as_str())
            .and_then(|v| v.parse().ok())
    }

    /// When a selector was first 1 in the last 5 minutes, from the stored
    /// samples themselves (scrape or rule-evaluation times).
    fn first_one(&self, selector: &str) -> Option<f64> {
        self.query(&format!("{selector}[5m]"))
            .iter()
            .flat_map(|s| s["values"].as_array().cloned().unwrap_or_default())
            .filter(|p| p[1] == "1")
            .filter_map(|p| p[0].as_f64())
            .reduce(f64::min)
    }

    fn target_health(&self, job: &str) -> (String, String) {
        let data = self.api("/api/v1/targets?state=active");
        let t = data["activeTargets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["labels"]["job"] == job)
            .unwrap_or_else(|| panic!("no target for job {job}: {data}"))
            .clone();
        (
            t["health"].as_str().unwrap_or("").to_string(),
            t["lastError"].as_str().unwrap_or("").to_string(),
        )
    }
}

/// Prometheus with `argv`, logging into `dir`'s prometheus.log (appended
/// to: a restart keeps the first run's words).
pub(super) fn spawn_prometheus(dir: &TempDir, argv: &[String]) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("prometheus.log"))
        .unwrap();
    Command::new("prometheus")
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start prometheus")
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `ready` every 500 ms until it holds; panics with `why()` after `limit`.
pub(super) fn wait_until(
    limit: Duration,
    mut ready: impl FnMut() -> bool,
    why: impl FnOnce() -> String,
) {
    let until = Instant::now() + limit;
    while !ready() {
        if Instant::now() >= until {
            panic!("not within {limit:?}: {}", why());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `promtool check metrics` on `text`: its exit and everything it said.
fn promtool_check_metrics(text: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        format!("{}{}", stdout_of(&out), stderr_of(&out)),
    )
}

fn dashboard() -> Value {
    let path = repo_root().join("deploy/grafana/swapsight.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The dashboard's host variable, `label_values(METRIC, LABEL)`, as
/// `(METRIC, LABEL)`.
fn dashboard_host_variable() -> (String, String) {
    let dash = dashboard();
    let var = dash["templating"]["list"]
        .as_array()
        .expect("templating")
        .iter()
        .find(|v| v["name"] == "instance")
        .expect("an instance variable")
        .clone();
    let def = var["definition"].as_str().expect("a definition");
    assert_eq!(var["query"]["query"].as_str(), Some(def));
    let (metric, label) = def
        .strip_prefix("label_values(")
        .and_then(|d| d.strip_suffix(')'))
        .and_then(|d| d.split_once(','))
        .unwrap_or_else(|| panic!("not label_values(METRIC, LABEL): {def}"));
    (metric.trim().to_string(), label.trim().to_string())
}

/// Every PromQL the dashboard runs (panel targets, annotations), with
/// Grafana's variables as a dashboard for `instance` would fill them.
fn dashboard_queries(instance: &str) -> Vec<(String, String)> {
    let dash = dashboard();
    let panels = dash["panels"].as_array().expect("panels");
    let ids: std::collections::BTreeSet<u64> =
        panels.iter().filter_map(|p| p["id"].as_u64()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique numbers");
    for p in panels {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
    }
    let fill = |e: &str| {
        // A single-valued variable goes in as it is (Grafana escapes only
        // multi-valued ones).
        e.replace("$instance", instance)
            .replace("$__rate_interval", "1m")
    };
    let mut out = Vec::new();
    for p in panels {
        let title = p["title"].as_str().expect("a panel title");
        let targets = p["targets"].as_array().expect("panel targets");
        assert!(!targets.is_empty(), "panel {title} has no query");
        for t in targets {
            out.push((title.to_string(), fill(t["expr"].as_str().expect("expr"))));
        }
    }
    for a in dash["annotations"]["list"].as_array().expect("annotations") {
        if let Some(e) = a["expr"].as_str() {
            out.push((format!("annotation {}", a["name"]), fill(e)));
        }
    }
    out
}

#[test]
fn prometheus_scrapes_a_real_false_fit_and_the_alert_fires() {
    if skip_unless_ci("the Prometheus test", prometheus_missing()).is_none() {
        return;
    }
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    // More processes than the per-process series bound, on any machine.
    let _crowd = Crowd::new(24);
    let dir = TempDir::new("prom-serve");
    // One server behind a token, scraped with it (job swapsight) and without
    // it (swapsight-no-token); one on loopback without a token.
    let guarded = Serve::start(
        &["--recordings", dir.join("rec").to_str().unwrap()],
        &[("SWAPSIGHT_TOKEN", TOKEN)],
    );
    let open = Serve::start(&["--recordings", dir.join("rec").to_str().unwrap()], &[]);
    let token_file = dir.join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let rules = repo_root()
        .join("deploy/prometheus/swapsight-rules.yml")
        .canonicalize()
        .unwrap();
    // Its remote-write receiver on too: a third server pushes what it
    // sees of the same false fit (issue 51 §1).
    let prom = Prometheus::start_with(
        &format!(
            r#"global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - {rules}
scrape_configs:
  - job_name: swapsight
    authorization:
      type: Bearer
      credentials_file: {token}
    static_configs:
      - targets: ["{guarded}"]
  - job_name: swapsight-no-token
    static_configs:
      - targets: ["{guarded}"]
  - job_name: swapsight-open
    static_configs:
      - targets: ["{open}"]
"#,
            rules = rules.display(),
            token = token_file.display(),
            guarded = guarded.addr,
            open = open.addr,
        ),
        &["--web.enable-remote-write-receiver"],
    );
    let pushing = Serve::start(
        &[
            "--recordings",
            dir.join("rec-push").to_str().unwrap(),
            "--push",
            &format!("http://{}/api/v1/write", prom.addr),
            "--push-interval",
            "1s",
            "--label",
            "via=push",
        ],
        &[],
    );
    let instance = guarded.addr.to_string();
    let job = format!(r#"job="swapsight",instance="{instance}""#);

    // Scraped with the token and without one on loopback; refused without.
    wait_until(
        Duration::from_secs(30),
        || {
            prom.value(&format!("up{{{job}}}")) == Some(1.0)
                && prom.value(r#"up{job="swapsight-open"}"#) == Some(1.0)
                && prom.value(r#"up{job="swapsight-no-token"}"#) == Some(0.0)
        },
        || format!("{:?}", prom.query("up")),
    );
    let (health, error) = prom.target_health("swapsight-no-token");
    assert_eq!(health, "down");
    assert!(error.contains("401"), "{error}");
    assert_eq!(prom.target_health("swapsight").0, "up");
    let growth_before = prom
        .value(&format!("swapsight_swap_growth_bytes{{{job}}}"))
        .expect("swap growth scraped");

    // A real false fit: 1200 MiB of random bytes in a 256 MiB memory
    // cgroup, touched over and over, so it pages in while swap climbs.
    let fill = memfill();
    let cmd = rs.wrap(&[
        "python3",
        fill.to_str().unwrap(),
        "--mb",
        "1200",
        "--chunk-mb",
        "32",
        "--hold",
        "60",
    ]);
    let started = unix_now();
    let mut filler = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("start the filler");
    let pid = filler.id();
    let false_fit = format!(r#"swapsight_process_state{{{job},state="false-fit",pid="{pid}"}}"#);
    let alert = |state: &str| {
        format!(r#"ALERTS{{alertname="SwapsightFalseFit",{job},pid="{pid}",alertstate="{state}"}}"#)
    };
    wait_until(
        Duration::from_secs(120),
        || {
            prom.value(&format!("{false_fit} == 1")).is_some()
                && prom
                    .value(&format!(
                        "max_over_time(swapsight_swap_growth_bytes{{{job}}}[5m])"
                    ))
                    .is_some_and(|g| g - growth_before >= 256.0 * MIB as f64)
                && prom.value(&alert("firing")).is_some()
        },
        || {
            format!(
                "false fit {:?}, swap growth {:?}, alerts {:?}, filler {:?}\nserve: {}",
                prom.query(&false_fit),
                prom.query(&format!("swapsight_swap_growth_bytes{{{job}}}")),
                prom.query("ALERTS"),
                filler.try_wait(),
                guarded.stderr()
            )
        },
    );
    let seen = prom
        .first_one(&false_fit)
        .expect("a stored false-fit sample");
    let pending = prom.first_one(&alert("pending"));
    let firing = prom.first_one(&alert("firing")).expect("a firing sample");
    eprintln!(
        "prometheus: `{false_fit} == 1` {:.1} s after the filler started; \
         SwapsightFalseFit pending at {}, firing at {:.1} s",
        seen - started,
        pending.map_or(
            "(not seen: pending for less than a scrape)".into(),
            |p| format!("{:.1} s", p - started)
        ),
        firing - started
    );
    assert!(seen >= started && firing >= seen, "{seen} {firing}");

    // The same false fit, pushed: found by name and label, never scraped.
    let pushed = format!(r#"swapsight_process_state{{via="push",state="false-fit",pid="{pid}"}}"#);
    wait_until(
        Duration::from_secs(60),
        || prom.value(&format!("{pushed} == 1")).is_some(),
        || {
            format!(
                "pushed {:?}\nserve --push: {}",
                prom.query(&pushed),
                pushing.stderr()
            )
        },
    );
    let pushed_at = prom.first_one(&pushed).expect("a pushed false-fit sample");
    // Pushed with the push's own job and instance (the host's name), not
    // a scrape's (an address).
    let rows = prom.query(&pushed);
    let labels = &rows[0]["metric"];
    assert_eq!(labels["job"], "swapsight", "{labels}");
    assert!(
        !labels["instance"].as_str().unwrap_or(":").contains(':'),
        "{labels}"
    );
    eprintln!(
        "prometheus: the pushed `{pushed} == 1` {:.1} s after the filler started",
        pushed_at - started
    );

    // The swap budget alert: the climb passes 512 MiB and keeps going.
    let swap_alert = |state: &str| {
        format!(r#"ALERTS{{alertname="SwapsightSwapGrowing",{job},alertstate="{state}"}}"#)
    };
    wait_until(
        Duration::from_secs(60),
        || prom.value(&swap_alert("firing")).is_some(),
        || {
            format!(
                "swap growth {:?}, alerts {:?}",
                prom.query(&format!("swapsight_swap_growth_bytes{{{job}}}[30s]")),
                prom.query("ALERTS")
            )
        },
    );
    let swap_pending = prom
        .first_one(&swap_alert("pending"))
        .expect("pending first");
    let swap_firing = prom.first_one(&swap_alert("firing")).unwrap();
    eprintln!(
        "prometheus: SwapsightSwapGrowing pending at {:.1} s, firing at {:.1} s",
        swap_pending - started,
        swap_firing - started
    );
    assert!(swap_firing - swap_pending >= 9.99, "for: 10s");

    // The alerts name the host and the process, with the evidence their
    // templates query (an empty query would leave a gap like "footprint ,").
    let alerts = prom.api("/api/v1/alerts");
    let description = |name: &str| {
        alerts["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| {
                a["labels"]["alertname"] == name && a["labels"]["instance"] == instance.as_str()
            })
            .and_then(|a| a["annotations"]["description"].as_str())
            .unwrap_or_else(|| panic!("no {name} in {alerts}"))
            .to_string()
    };
    let ff = description("SwapsightFalseFit");
    let sg = description("SwapsightSwapGrowing");
    eprintln!("prometheus: SwapsightFalseFit: {ff}\nprometheus: SwapsightSwapGrowing: {sg}");
    // The `name` label is the display name: the script, not the interpreter.
    assert!(
        ff.starts_with("memfill.py (python3")
            && ff.contains(&format!(") (pid {pid}) on {instance} ")),
        "{ff}"
    );
    for gap in ["footprint ,", "paging in /s", "grew  and", "is ."] {
        assert!(!ff.contains(gap), "{gap:?} in {ff}");
    }
    assert!(sg.starts_with(&format!("Swap on {instance} grew ")), "{sg}");
    assert!(!sg.contains("growing at ."), "{sg}");
    assert!(!sg.contains("no process"), "{sg}");

    // The live exposition, flagged filler and all, is clean by promtool.
    let text = guarded.metrics(Some(TOKEN));
    assert!(text.contains(&format!("pid=\"{pid}\"")), "{text}");
    let (ok, said) = promtool_check_metrics(&text);
    assert!(
        ok && said.trim().is_empty(),
        "promtool check metrics:\n{said}\n{text}"
    );

    // Per-process series stayed bounded: never more than 10 pids a scrape,
    // with many more processes running (the crowd at least).
    let procs = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .count();
    assert!(procs > 10, "{procs} processes");
    let most = prom
        .value(&format!(
            "max_over_time(count(count by (pid) (swapsight_process_footprint_bytes{{{job}}}))[5m:1s])"
        ))
        .unwrap();
    assert_eq!(most, 10.0, "per-process series per scrape");

    // Every query of the Grafana dashboard parses and answers with data.
    for (panel, q) in dashboard_queries(&instance) {
        let r = prom.query(&q);
        assert!(
            !r.is_empty(),
            "dashboard panel {panel}: {q} returned nothing"
        );
    }
    let (metric, label) = dashboard_host_variable();
    assert_eq!(label, "instance");
    let hosts = prom.api(&format!(
        "/api/v1/label/{label}/values?match[]={}",
        encode(&metric)
    ));
    assert!(
        hosts
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h == instance.as_str()),
        "host variable: {hosts}"
    );

    // Prometheus's own graph of it, for docs/serve.md.
    if let Some(png) = std::env::var_os("SWAPSIGHT_PROM_SCREENSHOT") {
        let range = format!("{}s", (unix_now() - started).ceil() as u64 + 10);
        screenshot(
            &prom,
            &[
                &false_fit,
                &format!("swapsight_swap_growth_bytes{{{job}}}"),
                &format!(r#"swapsight_process_footprint_bytes{{{job},pid="{pid}"}}"#),
            ],
            &range,
            Path::new(&png),
        );
    }

    // The filler leaves: its series leave /metrics, and Prometheus marks
    // them stale at once rather than holding them for 5 minutes.
    let _ = filler.kill();
    let _ = filler.wait();
    let pid_label = format!("pid=\"{pid}\"");
    wait_until(
        Duration::from_secs(20),
        || !guarded.metrics(Some(TOKEN)).contains(&pid_label),
        || "the filler's series are still in /metrics".into(),
    );
    wait_until(
        Duration::from_secs(20),
        || prom.query(&format!(r#"{{{job},pid="{pid}"}}"#)).is_empty(),
        || format!("{:?}", prom.query(&format!(r#"{{{job},pid="{pid}"}}"#))),
    );
    drop(rs);
}

/// Prometheus's own graph page, one graph an expression over the last `range`, in
/// headless Chromium (the page draws with scripts: give them virtual time).
fn screenshot(prom: &Prometheus, exprs: &[&str], range: &str, png: &Path) {
    let graphs: Vec<String> = exprs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                "g{i}.expr={}&g{i}.tab=0&g{i}.stacked=0&g{i}.show_exemplars=0&g{i}.range_input={range}",
                encode(e)
            )
        })
        .collect();
    let url = format!("http://{}/graph?{}", prom.addr, graphs.join("&"));
    let out = Command::new(browser().expect("a browser for the screenshot"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,2240",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .stdin(Stdio::null())
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium: {}", stderr_of(&out));
    let bytes = std::fs::read(png).expect("a screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

/// The unit's `ExecStart=` as argv after the program, with systemd's
/// `${STATE_DIRECTORY}` filled in.
fn unit_exec_start(unit: &str, state_dir: &Path) -> Vec<String> {
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("an ExecStart= line");
    let mut argv: Vec<String> = line
        .split_whitespace()
        .map(|a| a.replace("${STATE_DIRECTORY}", state_dir.to_str().unwrap()))
        .collect();
    assert_eq!(argv[0], "/usr/local/bin/swapsight", "{line}");
    argv.remove(0);
    argv
}

#[test]
fn service_files_verify_and_name_a_serve_that_runs() {
    let root = repo_root();
    let unit = std::fs::read_to_string(root.join("deploy/systemd/swapsight.service")).unwrap();
    let missing = which("systemd-analyze")
        .is_none()
        .then(|| "no systemd-analyze on PATH".to_string());
    if skip_unless_ci("systemd-analyze verify", missing).is_none() {
        return;
    }
    // verify checks that ExecStart's program exists: point it at this build.
    let dir = TempDir::new("unit");
    let local = dir.join("swapsight.service");
    std::fs::write(
        &local,
        unit.replace("/usr/local/bin/swapsight", env!("CARGO_BIN_EXE_swapsight")),
    )
    .unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&local)
        .output()
        .unwrap();
    let said = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze verify: {said}"
    );
    // Hardened: systemd's own exposure score stays "OK" (≤ 2.0 of 10).
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=true", "--threshold=20", "--no-pager"])
        .arg(&local)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "systemd-analyze security: {}",
        stdout_of(&out)
    );
    for key in [
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "Restart=on-failure",
    ] {
        assert!(unit.lines().any(|l| l == key), "{key} missing");
    }

    // The launchd agent parses as a property list and runs `serve`.
    let out = Command::new("python3")
        .args([
            "-c",
            "import json,plistlib,sys; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))",
        ])
        .arg(root.join("deploy/launchd/dev.swapsight.serve.plist"))
        .output()
        .expect("python3");
    assert!(out.status.success(), "plist: {}", stderr_of(&out));
    let plist: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plist["Label"], "dev.swapsight.serve");
    assert_eq!(
        plist["ProgramArguments"],
        serde_json::json!([
            "/usr/local/bin/swapsight",
            "serve",
            "--addr",
            "127.0.0.1:7878"
        ])
    );
    assert_eq!(plist["KeepAlive"]["SuccessfulExit"], false);
}

/// `serve` started the way the systemd unit starts it (on a free port),
/// then stopped the way systemd stops it.
#[test]
fn sigterm_finishes_the_recording_and_logs_one_line_each_way() {
    let dir = TempDir::new("serve-term");
    let unit =
        std::fs::read_to_string(repo_root().join("deploy/systemd/swapsight.service")).unwrap();
    let argv: Vec<String> = unit_exec_start(&unit, dir.path())
        .into_iter()
        .map(|a| a.replace("127.0.0.1:7878", "127.0.0.1:0"))
        .collect();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut s = Serve::start_argv(&argv, &[]);
    let (st, body) = http(
        s.addr,
        "POST",
        "/api/recording/start",
        &[("Content-Type", "application/json")],
        "{}",
    )
    .unwrap();
    assert_eq!(st, 200, "{body}");
    let started: Value = serde_json::from_str(&body).unwrap();
    // serve answers with the recording's name, never a path on the server.
    let name = started["name"].as_str().expect("a recording name");
    assert!(started.get("path").is_none(), "{body}");
    let path = dir.path().join("recordings").join(name);
    // A few samples in, while the sampler is writing.
    wait_until(
        Duration::from_secs(20),
        || {
            std::fs::read_to_string(&path)
                .is_ok_and(|t| t.matches(r#""type":"sample""#).count() >= 3)
        },
        || std::fs::read_to_string(&path).unwrap_or_default(),
    );
    // SAFETY: SIGTERM to our own child, not reaped yet.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let status = wait_with_deadline(&mut s.child, Duration::from_secs(15));
    assert!(status.success(), "{status}: {}", s.stderr());

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'), "a truncated last line: {text}");
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "recording-stop", "{last}");
    let samples = text
        .lines()
        .filter(|l| l.contains(r#""type":"sample""#))
        .count();
    let log = s.stderr();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(
        lines[0].starts_with("swapsight: serving on http://"),
        "{log}"
    );
    assert_eq!(
        lines[1],
        format!(
            "swapsight: stopped; finished the recording {} ({samples} samples)",
            path.display()
        )
    );
    // The trace reads back whole.
    let report = report_json(&path);
    assert_eq!(report["samples"].as_u64(), Some(samples as u64), "{report}");
}

/// Remote write 1.0 as a real Prometheus receives it (issue 51 §1, its
/// wire format first): the series a scrape of `serve` reads, parsed from
/// the exposition text, encoded and snappy-compressed by
/// `swapsight::export::remote_write`, POSTed to `/api/v1/write` and queried
/// back by name and label; a body that is not a write request is refused.
#[test]
fn remote_write_bodies_reach_a_real_prometheus_by_name_and_label() {
    if skip_unless_ci("the Prometheus test", prometheus_missing()).is_none() {
        return;
    }
    use swapsight::export::remote_write;
    let p = Prometheus::start_with("global: {}\n", &["--web.enable-remote-write-receiver"]);
    let text = "# TYPE swapsight_free_ratio gauge\nswapsight_free_ratio 0.42\n\
                swapsight_process_footprint_bytes{pid=\"7\",name=\"py \\\"x\\\"\"} 1048576\n";
    let extra = [
        ("instance".to_string(), "laptop-1".to_string()),
        ("job".to_string(), "swapsight".to_string()),
    ];
    let series = remote_write::parse(text, &extra);
    assert_eq!(series.len(), 2, "{series:?}");
    let now_ms = (unix_now() * 1000.0) as i64;
    let headers = [
        ("Content-Encoding", "snappy"),
        ("Content-Type", "application/x-protobuf"),
        ("X-Prometheus-Remote-Write-Version", "0.1.0"),
    ];
    let (status, answer) = http(
        p.addr,
        "POST",
        "/api/v1/write",
        &headers,
        remote_write::body(&series, now_ms),
    )
    .unwrap();
    assert_eq!(status, 204, "{answer}\n{}", p.log());
    assert_eq!(
        p.value(r#"swapsight_free_ratio{instance="laptop-1",job="swapsight"}"#),
        Some(0.42)
    );
    let rows = p.query(r#"swapsight_process_footprint_bytes{name="py \"x\""}"#);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["metric"]["pid"], "7");
    assert_eq!(rows[0]["value"][1], "1048576");
    // Not snappy: the receiver says so with a 400, which a pusher must
    // take as this batch's fault, not the receiver's.
    let (status, _) = http(p.addr, "POST", "/api/v1/write", &headers, b"not snappy").unwrap();
    assert_eq!(status, 400);
}
