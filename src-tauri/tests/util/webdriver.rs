//! The app under WebDriver: an X display (Xvfb when `DISPLAY` is unset),
//! `tauri-driver` in front of WebKitWebDriver, and a small W3C WebDriver
//! client (ureq + serde_json) that creates a session for the built app
//! binary, runs scripts in its page and takes screenshots.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{skip_unless_ci, which, Proc, TempDir};

/// The display, driver and session of one test; dropping it ends the
/// session and stops the driver and Xvfb (each by its own pid).
pub struct AppUnderTest {
    pub session: Session,
    pub recordings: TempDir,
    driver: Proc,
    driver_log: PathBuf,
    _xvfb: Option<Proc>,
}

fn tauri_driver() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TAURI_DRIVER").map(PathBuf::from) {
        return Some(p);
    }
    which("tauri-driver").or_else(|| {
        let p = PathBuf::from(std::env::var_os("HOME")?).join(".cargo/bin/tauri-driver");
        p.is_file().then_some(p)
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// Starts Xvfb on a free display number.
fn start_xvfb() -> (Proc, String) {
    let n = (90..200)
        .find(|n| {
            !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        })
        .expect("a free X display number");
    let display = format!(":{n}");
    let xvfb = Proc::spawn(
        "Xvfb",
        Command::new("Xvfb")
            .args([
                display.as_str(),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .expect("start Xvfb");
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
    let until = Instant::now() + Duration::from_secs(10);
    while !socket.exists() {
        assert!(Instant::now() < until, "Xvfb did not open {display}");
        std::thread::sleep(Duration::from_millis(50));
    }
    (xvfb, display)
}

impl AppUnderTest {
    /// `None` (after a note) when the tools are missing outside CI.
    pub fn start(test: &str) -> Option<AppUnderTest> {
        AppUnderTest::launch(test, false, true, &[])
    }

    /// The app in popover mode (its tray built, no window at start), opened
    /// once with `SIGUSR2` as the session starts: WebKit's automation
    /// attaches to the first web view, which exists only from then on.
    /// With `env` set for the app too.
    pub fn start_popover(test: &str, env: &[(&str, &str)]) -> Option<AppUnderTest> {
        AppUnderTest::launch(test, true, true, env)
    }

    /// The popover app, never opened: the session attaches to the popover
    /// it builds hidden at start.
    pub fn start_popover_unopened(test: &str, env: &[(&str, &str)]) -> Option<AppUnderTest> {
        AppUnderTest::launch(test, true, false, env)
    }

    fn launch(test: &str, popover: bool, open: bool, env: &[(&str, &str)]) -> Option<AppUnderTest> {
        let display = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty());
        let driver_bin = tauri_driver();
        let why_not = if driver_bin.is_none() {
            Some("tauri-driver not found (cargo install tauri-driver --locked)".to_string())
        } else if which("WebKitWebDriver").is_none() {
            Some("WebKitWebDriver not found (apt-get install webkit2gtk-driver)".to_string())
        } else if display.is_none() && which("Xvfb").is_none() {
            Some("no DISPLAY and no Xvfb (apt-get install xvfb)".to_string())
        } else {
            None
        };
        skip_unless_ci(test, why_not)?;

        let (xvfb, display) = match display {
            Some(d) => (None, d),
            None => {
                let (p, d) = start_xvfb();
                (Some(p), d)
            }
        };
        let recordings = TempDir::new(test);
        let driver_log = recordings.path().join("tauri-driver.log");
        let log = std::fs::File::create(&driver_log).expect("driver log");
        let port = free_port();
        let native_port = free_port();
        let driver = Proc::spawn(
            "tauri-driver",
            Command::new(driver_bin.expect("checked above"))
                .args([
                    "--port",
                    &port.to_string(),
                    "--native-port",
                    &native_port.to_string(),
                ])
                .env("DISPLAY", &display)
                // An ordinary window shown at start, without a tray; or the
                // popover, opened and closed by SIGUSR2 (no clicks here).
                .env("SWAPSIGHT_SHOW_WINDOW", if popover { "0" } else { "1" })
                .env("SWAPSIGHT_NO_TRAY", if popover { "0" } else { "1" })
                .env("SWAPSIGHT_RECORDINGS_DIR", recordings.path())
                // No desktop's bus, unless the test brings its own.
                .env_remove("DBUS_SESSION_BUS_ADDRESS")
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log"))
                .stderr(log),
        )
        .expect("start tauri-driver");
        let base = format!("http://127.0.0.1:{port}");
        let mut app = AppUnderTest {
            session: Session::new(base),
            recordings,
            driver,
            driver_log,
            _xvfb: xvfb,
        };
        app.session
            .wait_ready(&mut app.driver, Duration::from_secs(20));
        let opener = (popover && open).then(|| {
            let driver = app.driver.pid();
            std::thread::spawn(move || {
                let pid = app_pid_under(driver, Duration::from_secs(30))
                    .expect("the app started under tauri-driver");
                // Its first tick, then the click a Linux tray cannot send.
                std::thread::sleep(Duration::from_secs(1));
                toggle(pid);
            })
        });
        app.session.create(env!("CARGO_BIN_EXE_swapsight-app"));
        if let Some(t) = opener {
            t.join().expect("the opener thread");
        }
        Some(app)
    }

    /// The app's pid (a descendant of tauri-driver running our binary).
    pub fn app_pid(&self) -> u32 {
        app_pid_under(self.driver.pid(), Duration::from_secs(5)).expect("the app runs")
    }

    /// Pids of the app's WebKit helper processes (web, network) now.
    pub fn webkit_pids(&self) -> Vec<(u32, String)> {
        descendants(self.app_pid())
            .into_iter()
            .filter_map(|p| {
                let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).ok()?;
                let comm = comm.trim();
                comm.starts_with("WebKit").then(|| (p, comm.to_owned()))
            })
            .collect()
    }

    /// The driver's and the app's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.driver_log).unwrap_or_default()
    }
}

impl Drop for AppUnderTest {
    fn drop(&mut self) {
        self.session.delete();
        if std::thread::panicking() {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            eprintln!("--- tauri-driver and app log (last lines) ---");
            for l in tail.into_iter().rev() {
                eprintln!("{l}");
            }
        }
    }
}

/// `SIGUSR2`: the app toggles its popover (src-tauri/src/linux.rs) — once
/// it catches the signal: before its handler is in, the default action
/// would end it (a slow start on a loaded machine).
pub fn toggle(pid: u32) {
    let until = Instant::now() + Duration::from_secs(60);
    while !catches_usr2(pid) {
        assert!(Instant::now() < until, "the app never caught SIGUSR2");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: a signal to a pid found under our own tauri-driver child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR2) };
}

/// Whether `pid` has a handler for SIGUSR2: its bit in `SigCgt`
/// (/proc/PID/status, a hex mask, bit N-1 for signal N).
fn catches_usr2(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok());
    mask.is_some_and(|m| m & (1 << (libc::SIGUSR2 - 1)) != 0)
}

/// Every process below `root` (not itself), from /proc's parent links.
fn descendants(root: u32) -> Vec<u32> {
    let mut parent = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // "pid (comm) state ppid ...": the comm may hold spaces or ')'.
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent.push((pid, ppid));
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &(c, _) in parent.iter().filter(|(_, pp)| *pp == p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// The process running the app binary below `root`, waiting up to `limit`.
fn app_pid_under(root: u32, limit: Duration) -> Option<u32> {
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_swapsight-app")).ok()?;
    let until = Instant::now() + limit;
    loop {
        let found = descendants(root)
            .into_iter()
            .find(|p| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == bin));
        if found.is_some() || Instant::now() > until {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A W3C WebDriver session.
pub struct Session {
    base: String,
    id: Option<String>,
    agent: ureq::Agent,
}

impl Session {
    fn new(base: String) -> Session {
        Session {
            base,
            id: None,
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(60))
                .build(),
        }
    }

    fn wait_ready(&self, driver: &mut Proc, limit: Duration) {
        let until = Instant::now() + limit;
        loop {
            if self
                .agent
                .get(&format!("{}/status", self.base))
                .call()
                .is_ok()
            {
                return;
            }
            assert!(driver.alive(), "tauri-driver exited at start");
            assert!(
                Instant::now() < until,
                "tauri-driver did not answer within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn send(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let req = self.agent.request(method, &url);
        let res = match body {
            Some(b) => req.send_json(b),
            None => req.call(),
        };
        match res {
            Ok(r) => r.into_json::<Value>().unwrap_or(Value::Null)["value"].take(),
            Err(ureq::Error::Status(code, r)) => {
                let text = r.into_string().unwrap_or_default();
                panic!("WebDriver {method} {path}: HTTP {code}: {text}")
            }
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        }
    }

    fn path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.id.as_deref().expect("a session"))
    }

    fn create(&mut self, application: &str) {
        let caps = json!({
            "capabilities": { "alwaysMatch": { "tauri:options": { "application": application } } }
        });
        let v = self.send("POST", "/session", Some(caps));
        self.id = Some(v["sessionId"].as_str().expect("sessionId").to_owned());
    }

    fn delete(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = self
                .agent
                .delete(&format!("{}/session/{id}", self.base))
                .call();
        }
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub fn execute(&self, script: &str, args: Value) -> Value {
        self.send(
            "POST",
            &self.path("/execute/sync"),
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// Runs `script` whose last argument is the callback to call with the
    /// result.
    pub fn execute_async(&self, script: &str, args: Value) -> Value {
        self.send(
            "POST",
            &self.path("/execute/async"),
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// Invokes a Tauri command from the page, as the UI does; `Err` is the
    /// command's rejection.
    pub fn invoke(&self, cmd: &str, args: Value) -> Result<Value, String> {
        let v = self.execute_async(
            "const done = arguments[arguments.length - 1];
             window.__TAURI__.core.invoke(arguments[0], arguments[1])
               .then((r) => done({ ok: r === undefined ? null : r }), (e) => done({ err: String(e) }));",
            json!([cmd, args]),
        );
        match v.get("err") {
            Some(e) => Err(e.as_str().unwrap_or_default().to_owned()),
            None => Ok(v["ok"].clone()),
        }
    }

    /// Polls `script` until it returns something other than null/false.
    pub fn wait_for(&self, what: &str, script: &str, limit: Duration) -> Value {
        let until = Instant::now() + limit;
        loop {
            let v = self.execute(script, json!([]));
            if !(v.is_null() || v == Value::Bool(false)) {
                return v;
            }
            assert!(
                Instant::now() < until,
                "timed out after {limit:?} waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Handles of the top-level browsing contexts (the app's web views).
    pub fn handles(&self) -> Vec<String> {
        let v = self.send("GET", &self.path("/window/handles"), None);
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|h| h.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The handle of the current browsing context.
    pub fn handle(&self) -> String {
        let v = self.send("GET", &self.path("/window"), None);
        v.as_str().unwrap_or_default().to_owned()
    }

    /// Makes `handle` the context scripts run in.
    pub fn switch_to(&self, handle: &str) {
        self.send(
            "POST",
            &self.path("/window"),
            Some(json!({ "handle": handle })),
        );
    }

    /// A PNG of the window's page.
    pub fn screenshot(&self) -> Vec<u8> {
        let v = self.send("GET", &self.path("/screenshot"), None);
        decode_base64(v.as_str().expect("base64 screenshot"))
    }
}

fn decode_base64(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() * 3 / 4);
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let (mut acc, mut n) = (0u32, 0);
    for c in s.bytes().filter_map(val) {
        acc = (acc << 6) | c;
        n += 1;
        if n == 4 {
            v.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]);
            acc = 0;
            n = 0;
        }
    }
    match n {
        2 => v.push((acc >> 4) as u8),
        3 => v.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
        _ => {}
    }
    v
}
