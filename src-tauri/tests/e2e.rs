//! The built app, end to end: the real binary under Xvfb, driven through
//! `tauri-driver` (WebDriver), sampling this machine.
//!
//! 1. the table lists this machine's processes with their footprints;
//! 2. a real false fit — a filler in a memory cgroup limited to 256 MiB,
//!    swapping while it keeps touching its pages — shows up in the table as
//!    `data-state="false-fit"`;
//! 3. Record → Stop through the real commands writes a trace that
//!    `swapsight report` reads;
//! 4. the popover (tray built, no window at start), opened, closed — its
//!    web process ends, the app lives on — and opened again by `SIGUSR2`
//!    draws the same history, which lives in the core's `Live`;
//! 5. the tray menu opened over a private session bus builds the popover
//!    hidden, and the "Open" click shows that window.
//!
//! Outside CI they skip with a note when a tool (or root, for the real
//! swap) is missing; with `CI=true` they must run. They run one at a time:
//! each has its own display, driver and app, and the false fit needs the
//! machine's swap to itself. Linux only: Xvfb, WebKitWebDriver, cgroups.
#![cfg(target_os = "linux")]

mod util;

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use util::webdriver::AppUnderTest;
use util::{memfill, Proc, RealSwap, MIB};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The table as the page shows it.
const ROWS: &str =
    "return [...document.querySelectorAll('#processes tbody tr[data-pid]')].map((tr) => ({
    pid: Number(tr.dataset.pid),
    state: tr.dataset.state,
    name: tr.querySelector('.col-name').textContent,
    footprint: tr.querySelector('.col-footprint').textContent,
    evidence: tr.querySelector('.badge').title,
}));";

fn rows(app: &AppUnderTest) -> Vec<Value> {
    app.session
        .execute(ROWS, json!([]))
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Waits until the page drew its first rows.
fn wait_for_table(app: &AppUnderTest) {
    app.session.wait_for(
        "the process table",
        "return document.querySelectorAll('#processes tbody tr[data-pid]').length > 0",
        Duration::from_secs(30),
    );
}

#[test]
fn table_lists_this_machines_processes() {
    let _serial = serial();
    let Some(app) = AppUnderTest::start("table_lists_this_machines_processes") else {
        return;
    };
    wait_for_table(&app);
    let rows = rows(&app);
    assert!(rows.len() >= 3, "{rows:#?}");
    // Footprints are shown in bytes units, and the largest are not zero.
    for r in rows.iter().take(3) {
        let fp = r["footprint"].as_str().unwrap();
        assert!(
            fp.ends_with(" MiB") || fp.ends_with(" GiB") || fp.ends_with(" KiB"),
            "{r}"
        );
        assert!(!fp.starts_with("0 "), "zero footprint: {r}");
        assert_eq!(r["state"], "fits", "{r}");
    }
    // The app itself is one of them, with its real pid.
    let me = app.session.invoke("snapshot", json!({})).unwrap();
    let pids: Vec<u64> = me["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pid"].as_u64().unwrap())
        .collect();
    assert!(rows
        .iter()
        .any(|r| pids.contains(&r["pid"].as_u64().unwrap())));
    assert!(
        rows.iter()
            .any(|r| r["name"].as_str().unwrap().starts_with("swapsight-app")),
        "the app's own process is in the table: {rows:#?}"
    );
    // Header figures are filled in.
    let header = app.session.execute(
        "return ['#free', '#swap', '#state'].map((s) => document.querySelector(s).textContent)",
        json!([]),
    );
    let header: Vec<&str> = header
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(header[0].ends_with('%'), "{header:?}");
    assert!(header[1].ends_with('B'), "{header:?}");
    assert_eq!(header[2], "fits", "{header:?}");
}

#[test]
fn real_false_fit_is_flagged_in_the_table() {
    let _serial = serial();
    let test = "real_false_fit_is_flagged_in_the_table";
    let Some(rs) = RealSwap::new(2048, 256) else {
        return;
    };
    let Some(app) = AppUnderTest::start(test) else {
        return;
    };
    wait_for_table(&app);
    // A second of calm first, so the detector sees swap start to climb.
    std::thread::sleep(Duration::from_secs(2));
    let fill = memfill();
    let started = Instant::now();
    let mut filler = Proc::spawn(
        "memfill",
        rs.command(&[
            "python3",
            fill.to_str().unwrap(),
            "--mb",
            "1200",
            "--chunk-mb",
            "32",
            "--hold",
            "30",
        ])
        .stdout(std::process::Stdio::null()),
    )
    .expect("start the filler");
    let pid = filler.pid();
    let script = format!(
        "const tr = document.querySelector('#processes tr[data-pid=\"{pid}\"][data-state=\"false-fit\"]');
         return tr && {{ name: tr.querySelector('.col-name').textContent,
                        footprint: tr.querySelector('.col-footprint').textContent,
                        evidence: tr.querySelector('.badge').title,
                        header: document.querySelector('#state').dataset.state }};"
    );
    let until = started + Duration::from_secs(30);
    let row = loop {
        let v = app.session.execute(&script, json!([]));
        if !v.is_null() {
            break v;
        }
        assert!(filler.alive(), "the filler exited before it was flagged");
        assert!(
            Instant::now() < until,
            "pid {pid} not flagged as a false fit within 30 s; table: {:#?}",
            rows(&app)
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    let took = started.elapsed();
    eprintln!("false fit of pid {pid} shown after {took:.1?}: {row}");
    // Named by the script it runs, not as `python3`.
    assert!(
        row["name"]
            .as_str()
            .unwrap()
            .starts_with("memfill.py (python3"),
        "{row}"
    );
    assert!(
        row["evidence"].as_str().unwrap().contains("false fit"),
        "{row}"
    );
    assert_eq!(row["header"], "false-fit", "{row}");
    // Ground truth: it really swapped while its footprint stayed low.
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    assert!(
        kb("VmSwap:") >= 128 * MIB,
        "VmSwap only {} bytes",
        kb("VmSwap:")
    );
    assert!(
        kb("RssAnon:") <= 300 * MIB,
        "RssAnon {} bytes",
        kb("RssAnon:")
    );

    // The picture the docs show: the popover with the false fit in it.
    std::thread::sleep(Duration::from_millis(1500));
    let png = app.session.screenshot();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("app-popover.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    if std::env::var("SWAPSIGHT_UPDATE_SCREENSHOT").is_ok_and(|v| v == "1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/app-popover.png");
        std::fs::write(&docs, &png).unwrap();
        eprintln!("screenshot: {}", docs.display());
    }
    drop(filler);
    drop(app);
    drop(rs);
}

#[test]
fn record_stop_writes_a_trace_that_report_reads() {
    let _serial = serial();
    let Some(app) = AppUnderTest::start("record_stop_writes_a_trace_that_report_reads") else {
        return;
    };
    wait_for_table(&app);
    let started = app
        .session
        .invoke("start_recording", json!({}))
        .expect("start_recording");
    let name = started["name"].as_str().expect("a name").to_owned();
    let e = app
        .session
        .invoke("start_recording", json!({}))
        .expect_err("a second start");
    assert!(e.contains("already recording"), "{e}");
    // The page shows that it records (the button turns into Stop).
    app.session.wait_for(
        "the Record button to show Stop",
        "const b = document.querySelector('#record'); return b.classList.contains('on') && b.textContent.includes('Stop');",
        Duration::from_secs(10),
    );
    std::thread::sleep(Duration::from_secs(3));
    let stopped = app
        .session
        .invoke("stop_recording", json!({}))
        .expect("stop_recording");
    assert_eq!(stopped["name"], name.as_str());
    let samples = stopped["samples"].as_u64().unwrap();
    assert!(samples >= 4, "{stopped}");
    app.session.wait_for(
        "the Record button to show Record",
        "return !document.querySelector('#record').classList.contains('on')",
        Duration::from_secs(10),
    );

    // Named, never pathed: the trace is `name` in the recordings folder.
    assert!(stopped.get("path").is_none(), "{stopped}");
    let path = app.recordings.path().join(&name);
    let trace = swapsight::trace::read(&path).expect("the trace reads");
    assert!(trace.problems.is_empty(), "{:?}", trace.problems);
    assert_eq!(trace.samples.len() as u64, samples);
    let report = swapsight::report::report(&trace, None);
    assert_eq!(report.samples as u64, samples);
    assert!(!report.processes.is_empty());
    assert!(report.duration_ms >= 2000, "{}", report.duration_ms);
    // The same verdict the replay in the page shows.
    let listed = app.session.invoke("recordings", json!({})).unwrap();
    assert_eq!(listed[0]["name"], name.as_str());
    let replay = app
        .session
        .invoke("replay", json!({ "name": name }))
        .unwrap();
    assert_eq!(replay["report"]["verdict"], json!(report.verdict));

    // Replay in the page (`#replay=<name>`): banner with the verdict, the
    // trace's processes in the table; then back to live.
    app.session.execute(
        "location.hash = 'replay=' + encodeURIComponent(arguments[0]);",
        json!([name]),
    );
    let shown = app.session.wait_for(
        "the replay banner",
        "const b = document.querySelector('#banner');
         return document.body.dataset.mode === 'replay' && !b.hidden && {
           title: document.querySelector('#banner-title').textContent,
           verdict: document.querySelector('#banner-verdict').dataset.state,
           rows: document.querySelectorAll('#processes tbody tr[data-pid]').length,
           exportable: !document.querySelector('#export').disabled };",
        Duration::from_secs(10),
    );
    assert!(shown["title"].as_str().unwrap().contains(&name), "{shown}");
    assert_eq!(shown["verdict"], json!(report.verdict), "{shown}");
    assert!(shown["rows"].as_u64().unwrap() > 0, "{shown}");
    assert_eq!(shown["exportable"], true, "{shown}");
    let png = app.session.screenshot();
    std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("app-replay.png"),
        png,
    )
    .unwrap();
    app.session
        .execute("document.querySelector('#live').click();", json!([]));
    app.session.wait_for(
        "live mode again",
        "return document.body.dataset.mode !== 'replay' && document.querySelector('#banner').hidden",
        Duration::from_secs(10),
    );
}

/// What the page drew: its history's first point, its paint mark, its rows.
const PAGE: &str = "const b = document.body.dataset;
    return b.painted && b.historyFrom && {
      painted: Number(b.painted),
      history_from: Number(b.historyFrom),
      rows: document.querySelectorAll('#processes tbody tr[data-pid]').length };";

/// Waits for a window that is none of `old` (the popover built anew after
/// a close, or by the menu's opening) and makes it the session's.
fn switch_to_new_window(app: &AppUnderTest, old: &[&str]) {
    let asked = Instant::now();
    let fresh = loop {
        let mut handles = app.session.handles().into_iter();
        if let Some(h) = handles.find(|h| !old.contains(&h.as_str())) {
            break h;
        }
        assert!(asked.elapsed() < Duration::from_secs(20), "no new popover");
        std::thread::sleep(Duration::from_millis(50));
    };
    app.session.switch_to(&fresh);
}

/// Waits until the app has no web process, failing (`outlived`) when one
/// is still there `keep` + 10 s after `since`.
fn wait_web_processes_gone(app: &AppUnderTest, since: Instant, keep: Duration, outlived: &str) {
    while !web_processes(app).is_empty() {
        assert!(
            since.elapsed() < keep + Duration::from_secs(10),
            "{outlived}: {:?}",
            app.webkit_pids()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn web_processes(app: &AppUnderTest) -> Vec<u32> {
    let web = app.webkit_pids().into_iter();
    let web = web.filter(|(_, name)| name.starts_with("WebKitWebProc"));
    web.map(|(pid, _)| pid).collect()
}

#[test]
fn popover_is_kept_a_while_then_closed_and_rebuilt_with_the_history() {
    let _serial = serial();
    let keep = Duration::from_secs(4);
    let Some(app) = AppUnderTest::start_popover(
        "popover_is_kept_a_while_then_closed_and_rebuilt_with_the_history",
        &[("SWAPSIGHT_POPOVER_KEEP", "4s")],
    ) else {
        return;
    };
    let first = app.session.handle();
    let before = app
        .session
        .wait_for("the popover's first paint", PAGE, Duration::from_secs(30));
    assert!(before["rows"].as_u64().unwrap() > 0, "{before}");
    let web = web_processes(&app);
    assert!(!web.is_empty(), "an open popover has a web process");
    // A few ticks of history, then hide it (the tray click on macOS).
    std::thread::sleep(Duration::from_secs(3));
    let pid = app.app_pid();
    util::webdriver::toggle(pid);

    // A second look within the keep shows the same page, at once.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(web_processes(&app), web, "the hidden popover is kept");
    util::webdriver::toggle(pid);
    let shown = app.session.wait_for(
        "the kept page on screen again",
        "return document.body.dataset.shown || null",
        Duration::from_secs(10),
    );
    let again = app.session.execute(PAGE, json!([]));
    assert_eq!(
        again["painted"], before["painted"],
        "the same page: {again}"
    );
    assert_eq!(app.session.handles(), std::slice::from_ref(&first));
    eprintln!("kept page shown again at {shown}");

    // Hidden past the keep, it is closed: its web process ends.
    util::webdriver::toggle(pid);
    let hidden = Instant::now();
    std::thread::sleep(keep / 2);
    assert_eq!(web_processes(&app), web, "closed before the keep ran out");
    wait_web_processes_gone(&app, hidden, keep, "the web process outlived the keep");
    assert!(
        hidden.elapsed() >= keep,
        "closed after {:?}",
        hidden.elapsed()
    );
    // The app lives on without a window, sampling.
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        std::fs::metadata(format!("/proc/{pid}")).is_ok(),
        "the app exited with its window"
    );

    let opened = Instant::now();
    util::webdriver::toggle(pid);
    switch_to_new_window(&app, &[&first]);
    let after = app.session.wait_for(
        "the reopened popover's paint",
        PAGE,
        Duration::from_secs(30),
    );
    eprintln!(
        "first page {before}, reopened page {after}, opened in {:?}",
        opened.elapsed()
    );
    // The same history, now longer: it lives in the core's Live, not in the page.
    assert_eq!(after["history_from"], before["history_from"], "{after}");
    assert!(
        after["painted"].as_f64().unwrap() > before["painted"].as_f64().unwrap() + 4000.0,
        "a new page: {after}"
    );
    assert!(after["rows"].as_u64().unwrap() > 0, "{after}");
    let points = app.session.invoke("history", json!({})).unwrap();
    let points = points.as_array().unwrap();
    assert_eq!(
        points[0]["t_ms"], after["history_from"],
        "the page starts where the session's history does"
    );
    assert!(
        points.len() >= 8,
        "about 5 s of ticks at 2 Hz: {}",
        points.len()
    );
}

/// A popover app builds its popover hidden at start, so a first look soon
/// after opens in a frame; unopened, it is closed after three keeps
/// (`window::START_KEEPS`), and the next open builds a new one.
#[test]
fn popover_is_built_hidden_at_start_and_closed_after_three_keeps_unopened() {
    let _serial = serial();
    let keep = Duration::from_secs(2);
    let Some(app) = AppUnderTest::start_popover_unopened(
        "popover_is_built_hidden_at_start_and_closed_after_three_keeps_unopened",
        &[("SWAPSIGHT_POPOVER_KEEP", "2s")],
    ) else {
        return;
    };
    let first = app.session.handle();
    // Nobody opened it: its page loaded its figures hidden.
    let state = app.session.wait_for(
        "the hidden page's figures",
        "return performance.getEntriesByName('live-data').length > 0 && document.visibilityState",
        Duration::from_secs(30),
    );
    let seen = Instant::now();
    assert_eq!(state, "hidden", "built at start, not shown");
    let web = web_processes(&app);
    assert!(!web.is_empty(), "the page has its web process");
    // Past one keep it is still there: the start keeps it longer.
    std::thread::sleep(keep + Duration::from_millis(500));
    assert_eq!(web_processes(&app), web, "closed after one keep");
    let three = keep * swapsight_app::window::START_KEEPS;
    wait_web_processes_gone(
        &app,
        seen,
        three,
        "the start's popover outlived three keeps",
    );
    let pid = app.app_pid();
    assert!(
        std::fs::metadata(format!("/proc/{pid}")).is_ok(),
        "the app exited with its window"
    );
    // Nothing of WebKit's keeps running in the app once its window is gone:
    // its memory-pressure monitor thread would poll /proc/meminfo all day.
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|c| c.trim().to_owned())
        .collect();
    assert!(
        !threads.iter().any(|t| t.contains("PressureMonitor")),
        "{threads:?}"
    );
    // The first open after that builds a new window.
    util::webdriver::toggle(pid);
    switch_to_new_window(&app, &[&first]);
    let page = app
        .session
        .wait_for("the new popover's paint", PAGE, Duration::from_secs(30));
    assert!(page["rows"].as_u64().unwrap() > 0, "{page}");
}

/// Linux: a panel opening the tray's menu (`Event(0, "opened")` over the
/// session bus, as GNOME's AppIndicator extension sends it) builds the
/// popover hidden, so the "Open" item's click shows a built window; a
/// menu closed builds nothing, and a menu opened and left keeps nothing
/// past the keep.
#[test]
fn opening_the_tray_menu_builds_the_popover_hidden() {
    let _serial = serial();
    let test = "opening_the_tray_menu_builds_the_popover_hidden";
    let keep = Duration::from_secs(1);
    let Some(bus) = util::session_bus::SessionBus::start(test) else {
        return;
    };
    let Some(app) = AppUnderTest::start_popover_unopened(
        test,
        &[
            ("SWAPSIGHT_POPOVER_KEEP", "1s"),
            ("DBUS_SESSION_BUS_ADDRESS", &bus.address),
            // GTK's accessibility bridge would start a bus of its own.
            ("NO_AT_BRIDGE", "1"),
        ],
    ) else {
        return;
    };
    let first = app.session.handle();
    app.session.wait_for(
        "the start's hidden page",
        "return performance.getEntriesByName('live-data').length > 0 || null",
        Duration::from_secs(30),
    );
    let pid = app.app_pid();
    let menu = bus.menu_of(pid, Duration::from_secs(10));
    let since = Instant::now();
    let three = keep * swapsight_app::window::START_KEEPS;
    wait_web_processes_gone(&app, since, three, "the start's popover outlived its keeps");

    // Closing the menu is no cue.
    bus.menu_event(&menu, "closed");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        web_processes(&app).is_empty(),
        "a closed menu built a window"
    );

    // Opened and left: built, hidden, then closed after the keep.
    let opened = Instant::now();
    bus.menu_event(&menu, "opened");
    while web_processes(&app).is_empty() {
        assert!(
            opened.elapsed() < Duration::from_secs(10),
            "no web process after the menu opened: {}",
            app.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("web process {:?} after the menu opened", opened.elapsed());
    switch_to_new_window(&app, &[&first]);
    let state = app
        .session
        .execute("return document.visibilityState", json!([]));
    assert_eq!(state, "hidden", "built for the click, not shown");
    let second = app.session.handle();
    wait_web_processes_gone(
        &app,
        opened,
        keep,
        "an unclicked menu's popover outlived the keep",
    );

    // Opened, then the "Open" item (SIGUSR2 here): the built window shows.
    bus.menu_event(&menu, "opened");
    switch_to_new_window(&app, &[&first, &second]);
    app.session.wait_for(
        "the prewarmed page's figures",
        "return performance.getEntriesByName('live-data').length > 0 || null",
        Duration::from_secs(30),
    );
    let built = app.session.handle();
    util::webdriver::toggle(pid);
    let shown = app.session.wait_for(
        "the prewarmed popover on screen",
        "return document.body.dataset.shown || null",
        Duration::from_secs(10),
    );
    eprintln!("prewarmed popover shown at {shown}");
    let known = [first.as_str(), second.as_str(), built.as_str()];
    let handles = app.session.handles();
    assert!(
        handles.iter().all(|h| known.contains(&h.as_str())),
        "the click built another window: {handles:?}"
    );
}
