//! Every command through real IPC: the app as `run_app` wires it, on Tauri's
//! mock runtime, with the real context (so `capabilities/default.json` and
//! the app manifest's permissions are enforced), fed by the core's scripted
//! probe in which swap climbs 40 MiB a tick while pid 7 pages in — a false
//! fit.

use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use serde_json::{json, Value};
use swapsight::live::Live;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, Listener, Manager, WebviewWindow, WindowEvent};

use crate::export::{export_to, ExportFormat};
use crate::{context, run_app, Options};

use swapsight_testkit::TempDir as Tmp;

fn scripted_live(dir: &Path) -> Arc<Live> {
    Arc::new(Live::scripted(dir))
}

pub(crate) struct TestApp {
    pub(crate) app: App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    pub(crate) dir: Tmp,
}

fn app(tag: &str) -> TestApp {
    app_with(tag, None)
}

/// The app with `settings` (its settings file's text) when given.
pub(crate) fn app_with(tag: &str, settings: Option<&str>) -> TestApp {
    let dir = Tmp::new(tag);
    if let Some(text) = settings {
        std::fs::write(dir.join("settings.json"), text).unwrap();
    }
    let live = scripted_live(dir.path());
    let opts = Options {
        live: Some(Arc::clone(&live)),
        tray: false,
        window_mode: true,
        recordings_dir: None,
        // A hidden popover is closed at once here (`release`).
        popover_keep: Duration::ZERO,
        settings: Some(dir.join("settings.json")),
    };
    let mut app = run_app(mock_builder(), opts)
        .build(context())
        .expect("the app builds");
    // Setup (config windows, then ours) runs when the event loop starts.
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let window = app
        .get_webview_window("main")
        .expect("the main window from tauri.conf.json");
    live.wait_snapshot(Duration::from_secs(5))
        .expect("a first tick");
    TestApp { app, window, dir }
}

fn request(cmd: &str, args: Value) -> InvokeRequest {
    InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    }
}

/// Invokes `cmd` as the web view would; `Err` carries the rejection.
fn call(t: &TestApp, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(&t.window, request(cmd, args)).map(|b| b.deserialize::<Value>().unwrap())
}

fn ok(t: &TestApp, cmd: &str, args: Value) -> Value {
    call(t, cmd, args).unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
}

fn err(t: &TestApp, cmd: &str, args: Value) -> String {
    match call(t, cmd, args) {
        Ok(v) => panic!("{cmd} should fail, answered {v}"),
        Err(e) => e.as_str().map_or_else(|| e.to_string(), str::to_owned),
    }
}

#[test]
fn snapshot_has_rows_and_header_figures() {
    let t = app("snapshot");
    let s = ok(&t, "snapshot", json!({}));
    let rows = s["processes"].as_array().unwrap();
    assert!(!rows.is_empty(), "{s:#}");
    assert!(rows
        .iter()
        .all(|r| r["footprint_bytes"].as_u64().unwrap() > 0));
    assert_eq!(s["system"]["phys_bytes"], 16u64 << 30);
    assert_eq!(s["system"]["free_pct"], 60.0);
    assert!(s.get("measures_process_swap").is_some());
    assert!(s["title"].is_string());
}

#[test]
fn history_returns_points_of_the_window() {
    let t = app("history");
    std::thread::sleep(Duration::from_millis(200));
    // The window first: the sampler may tick between the two calls, and
    // the whole history, asked later, has every point the window had.
    let recent = ok(&t, "history", json!({ "seconds": 60 }));
    let all = ok(&t, "history", json!({}));
    let points = all.as_array().unwrap();
    assert!(points.len() >= 3, "{all}");
    assert!(recent.as_array().unwrap().len() <= points.len());
    let p = &points[points.len() - 1];
    assert!(p["swap_growth_bytes"].as_i64().is_some() && p["free_pct"].as_f64().is_some());
    assert!(p["footprints"][0].as_array().unwrap().len() == 2, "{p}");
}

#[test]
fn process_returns_row_and_series_or_an_error() {
    let t = app("process");
    std::thread::sleep(Duration::from_millis(100));
    let v = ok(&t, "process", json!({ "pid": 50 }));
    assert_eq!(v["row"]["pid"], 50);
    assert_eq!(v["row"]["name"], "p50");
    assert!(!v["series"].as_array().unwrap().is_empty(), "{v}");
    assert!(err(&t, "process", json!({ "pid": 999_999 })).contains("no process 999999"));
    // A missing argument is the caller's mistake, told in words.
    assert!(err(&t, "process", json!({})).contains("pid"));
}

#[test]
fn pin_and_unpin() {
    let t = app("pin");
    assert_eq!(ok(&t, "pin", json!({ "pid": 7 })), json!({ "pinned": 7 }));
    let pinned = (0..100).find_map(|_| {
        std::thread::sleep(Duration::from_millis(20));
        let s = ok(&t, "snapshot", json!({}));
        let row = s["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["pid"] == 7)
            .cloned();
        (s["pinned"] == 7).then_some(row)
    });
    let row = pinned
        .expect("pinned shows in snapshots")
        .expect("the pinned row stays in the table");
    assert_eq!(row["pinned"], true);
    assert_eq!(
        ok(&t, "pin", json!({ "pid": null })),
        json!({ "pinned": null })
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(ok(&t, "snapshot", json!({}))["pinned"], Value::Null);
    // pid 0 is refused here as `serve` refuses it: the rule is Live's.
    assert!(err(&t, "pin", json!({ "pid": 0 })).contains("bad pid 0"));
    assert!(err(&t, "start_recording", json!({ "pid": 0 })).contains("bad pid 0"));
}

#[test]
fn reset_baseline_restarts_growth() {
    let t = app("reset");
    std::thread::sleep(Duration::from_millis(300));
    let before = ok(&t, "snapshot", json!({}))["view"]["swap_growth_bytes"]
        .as_i64()
        .unwrap();
    assert!(before > 0);
    assert_eq!(ok(&t, "reset_baseline", json!({})), json!({ "ok": true }));
    std::thread::sleep(Duration::from_millis(100));
    let after = ok(&t, "snapshot", json!({}))["view"]["swap_growth_bytes"]
        .as_i64()
        .unwrap();
    assert!(after < before, "{after} !< {before}");
}

#[test]
fn record_stop_list_replay_report() {
    let t = app("record");
    let started = ok(&t, "start_recording", json!({ "pid": 7 }));
    let name = started["name"].as_str().unwrap().to_owned();
    assert!(name.ends_with(".jsonl"), "{started}");
    assert!(err(&t, "start_recording", json!({})).contains("already recording"));
    std::thread::sleep(Duration::from_millis(400));
    let stopped = ok(&t, "stop_recording", json!({}));
    assert_eq!(stopped["name"], name.as_str());
    let samples = stopped["samples"].as_u64().unwrap();
    assert!(samples >= 5, "{stopped}");
    assert!(err(&t, "stop_recording", json!({})).contains("not recording"));

    let list = ok(&t, "recordings", json!({}));
    let entry = &list.as_array().unwrap()[0];
    assert_eq!(entry["name"], name.as_str());
    assert!(entry["bytes"].as_u64().unwrap() > 0 && entry["modified_ms"].as_u64().unwrap() > 0);

    let replay = ok(&t, "replay", json!({ "name": name }));
    assert_eq!(replay["report"]["samples"].as_u64(), Some(samples));
    assert_eq!(replay["points"].as_array().unwrap().len() as u64, samples);
    assert!(!replay["processes"].as_array().unwrap().is_empty());
    let report = ok(&t, "report", json!({ "name": name }));
    assert_eq!(report["samples"].as_u64(), Some(samples));
    assert!(report["verdict"].is_string());

    let trace = swapsight::trace::read(&t.dir.path().join(&name)).unwrap();
    assert_eq!(trace.header().watch_pid, Some(7));
}

#[test]
fn recording_names_cannot_leave_the_folder() {
    let t = app("names");
    std::fs::write(t.dir.path().join("notes.txt"), "x").unwrap();
    for bad in [
        "../etc/passwd",
        "/etc/passwd",
        ".hidden.jsonl",
        "notes.txt",
        "a/b.jsonl",
        "",
    ] {
        let e = err(&t, "replay", json!({ "name": bad }));
        assert!(e.contains("bad recording name"), "{bad}: {e}");
        assert!(err(&t, "report", json!({ "name": bad })).contains("bad recording name"));
    }
    assert!(err(&t, "replay", json!({ "name": "nope.jsonl" })).contains("no recording named"));
    assert!(ok(&t, "recordings", json!({}))
        .as_array()
        .unwrap()
        .is_empty());
}

/// The app once took any `*.jsonl` name and followed symlinks; now it keeps
/// serve's rule: `[A-Za-z0-9._-]+.jsonl`, no `..`, a regular file.
#[test]
fn recordings_follow_the_strict_rule() {
    let t = app("strict");
    let outside = Tmp::new("strict-outside");
    let secret = outside.path().join("secret.jsonl");
    let trace = swapsight::synth::to_jsonl(&swapsight::synth::seed_offload());
    std::fs::write(&secret, trace).unwrap();
    for name in ["a b.jsonl", "a..b.jsonl"] {
        std::fs::copy(&secret, t.dir.path().join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&secret, t.dir.path().join("link.jsonl")).unwrap();
    for bad in ["a b.jsonl", "a..b.jsonl"] {
        for cmd in ["replay", "report"] {
            let e = err(&t, cmd, json!({ "name": bad }));
            assert!(e.starts_with("bad recording name"), "{cmd} {bad}: {e}");
        }
        let e = err(
            &t,
            "export_recording",
            json!({ "format": "csv", "name": bad }),
        );
        assert!(e.starts_with("bad recording name"), "export {bad}: {e}");
    }
    for cmd in ["replay", "report"] {
        let e = err(&t, cmd, json!({ "name": "link.jsonl" }));
        assert_eq!(e, "no recording named link.jsonl", "{cmd}");
    }
    assert_eq!(ok(&t, "recordings", json!({})), json!([]));
}

#[test]
fn export_without_a_recording_says_so() {
    let t = app("export");
    let e = err(&t, "export_recording", json!({ "format": "csv" }));
    assert!(e.contains("no recording yet"), "{e}");
    let e = err(&t, "export_recording", json!({ "format": "xml" }));
    assert!(e.contains("xml") || e.contains("variant"), "{e}");
    let e = err(&t, "export_recording", json!({ "format": "svg" }));
    assert!(e.contains("expected jsonl, csv, perfetto or png"), "{e}");
}

#[test]
fn capabilities_grant_only_our_commands() {
    let t = app("acl");
    // Plugin commands are not granted to the web view: dialogs and
    // notifications are shown from Rust.
    for cmd in [
        "plugin:dialog|open",
        "plugin:notification|notify",
        "plugin:autostart|enable",
        "plugin:positioner|move_window",
    ] {
        let e = call(&t, cmd, json!({})).expect_err(cmd).to_string();
        assert!(e.contains("not allowed"), "{cmd}: {e}");
    }
    let e = call(&t, "no_such_command", json!({}))
        .expect_err("unknown")
        .to_string();
    assert!(e.contains("not allowed") || e.contains("not found"), "{e}");
}

#[test]
fn updates_reach_listeners_and_carry_the_false_fit() {
    let t = app("events");
    let (tx, rx) = mpsc::channel::<Value>();
    t.app.listen(crate::UPDATE_EVENT, move |e| {
        let _ = tx.send(serde_json::from_str(e.payload()).unwrap());
    });
    let mut flagged = None;
    let mut noticed = false;
    for u in rx.iter().take(400) {
        assert!(
            u["snapshot"]["processes"].is_array() && u["point"]["t_ms"].is_u64(),
            "{u}"
        );
        noticed |= u["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["pid"] == 7);
        if let Some(r) = u["snapshot"]["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["state"] == "false-fit")
        {
            flagged = Some((r.clone(), u["snapshot"]["title"].clone()));
            if noticed {
                break;
            }
        }
    }
    let (row, title) = flagged.expect("a false fit flagged");
    assert_eq!(row["pid"], 7);
    assert!(
        row["evidence"].as_str().unwrap().contains("false fit"),
        "{row}"
    );
    assert!(title.as_str().unwrap().ends_with("⚠ false fit"), "{title}");
    assert!(noticed, "a notice for pid 7");
    assert!(crate::tray::is_alert(swapsight::State::FalseFit));
    assert_eq!(
        crate::tray::written_today_label(Some(3 << 30)),
        "Swap written today: 3.0 GiB"
    );
    assert_eq!(
        crate::tray::written_today_label(None),
        "Swap written today: not known here"
    );
    assert!(!crate::tray::is_alert(swapsight::State::HiddenMemory));
}

#[test]
fn exports_every_format_from_a_recording() {
    let dir = Tmp::new("formats");
    let live = scripted_live(dir.path());
    live.wait_snapshot(Duration::from_secs(5)).unwrap();
    live.start_recording(Some(7)).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let (trace, _) = live.stop_recording().unwrap();
    for f in ExportFormat::UI {
        let out = dir.path().join(format!("out.{}", f.extension()));
        export_to(&trace, f, &out).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.len() > 100, "{f:?}: {} bytes", bytes.len());
        match f {
            ExportFormat::Jsonl => assert_eq!(bytes, std::fs::read(&trace).unwrap()),
            ExportFormat::Csv => assert!(String::from_utf8(bytes).unwrap().lines().count() > 5),
            ExportFormat::Perfetto => {
                serde_json::from_slice::<Value>(&bytes).expect("Perfetto export is JSON");
            }
            ExportFormat::Png => assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n"),
            other => panic!("{other:?} is not offered"),
        }
        assert_eq!(ExportFormat::from_path(&out), Some(f));
    }
    let e = export_to(
        &dir.path().join("missing.jsonl"),
        ExportFormat::Csv,
        &dir.path().join("x.csv"),
    )
    .unwrap_err();
    assert!(e.contains("missing.jsonl"), "{e}");
    assert!(
        !dir.path().join("x.csv").exists(),
        "no file for a missing trace"
    );
    // Charts other than PNG and Prometheus text are the CLI's.
    for f in [ExportFormat::Svg, ExportFormat::Prometheus] {
        let out = dir.path().join(format!("out.{}", f.extension()));
        let e = export_to(&trace, f, &out).unwrap_err();
        assert!(e.contains("expected jsonl, csv, perfetto or png"), "{e}");
        assert!(!out.exists());
    }
    // A JSONL export onto the trace itself keeps it.
    let before = std::fs::read(&trace).unwrap();
    export_to(&trace, ExportFormat::Jsonl, &trace).unwrap();
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    assert_eq!(
        ExportFormat::Perfetto
            .file_name_for(&trace)
            .rsplit('.')
            .next(),
        Some("json")
    );
    assert_eq!(
        crate::export::with_extension(dir.path().join("chart"), ExportFormat::Png),
        dir.path().join("chart.png")
    );
}

#[test]
fn a_dialog_keeps_the_popover_up() {
    // The app's own window handler, on the mock runtime's main window, in
    // popover mode; the dialog guard is the one the save/open dialogs hold.
    let t = app("dialog");
    let mode = t.app.state::<crate::window::Mode>();
    mode.set_popover(true);
    let window = t.window.as_ref().window();
    let open = mode.dialog();
    crate::window::on_event(&window, &WindowEvent::Focused(false));
    assert!(
        !mode.just_hidden(),
        "the popover hid while a dialog was open"
    );
    drop(open);
    crate::window::on_event(&window, &WindowEvent::Focused(false));
    assert!(mode.just_hidden(), "focus loss without a dialog hides it");
}

#[test]
fn answers_have_the_shapes_serve_answers() {
    let t = app("shapes");
    std::thread::sleep(Duration::from_millis(100));
    let calls: Value = serde_json::from_str(swapsight_testkit::VIEW_SHAPES).unwrap();
    let mut name = String::new();
    for c in calls.as_array().unwrap() {
        let cmd = c["call"].as_str().unwrap();
        let v = ok(&t, cmd, c["args"].clone());
        let depth = c["depth"].as_u64().unwrap() as usize;
        assert_eq!(
            swapsight_testkit::json_shape(&v, depth),
            c["shape"],
            "{cmd} {}: {v}",
            c["args"]
        );
        if cmd == "start_recording" {
            name = v["name"].as_str().unwrap().to_owned();
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    // Replay and report are the core's own views, unwrapped.
    let live = t.app.state::<Arc<Live>>();
    let replay = ok(&t, "replay", json!({ "name": name }));
    let own = serde_json::to_value(live.replay_recording(&name).unwrap()).unwrap();
    assert_eq!(
        swapsight_testkit::json_shape(&replay, 1),
        swapsight_testkit::json_shape(&own, 1)
    );
    assert_eq!(replay["path"], name.as_str());
    let report = ok(&t, "report", json!({ "name": name }));
    let own = serde_json::to_value(live.report_recording(&name).unwrap()).unwrap();
    assert_eq!(
        swapsight_testkit::json_shape(&report, 1),
        swapsight_testkit::json_shape(&own, 1)
    );
}

#[test]
fn the_window_is_built_on_demand_from_its_config() {
    // Nothing is built at start (a popover app has no web view until it is
    // opened); `window::window` builds it from this entry, IPC included.
    // (The mock runtime never reports a window destroyed, so closing and
    // rebuilding is checked end to end: tests/e2e.rs.)
    let ctx = context::<MockRuntime>();
    let main = ctx
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == crate::window::MAIN)
        .expect("the main window's entry");
    assert!(!main.create, "tauri.conf.json must not build it at start");
    let t = app("on-demand");
    let w = crate::window::window(t.app.handle()).expect("the window");
    assert_eq!(w.label(), crate::window::MAIN);
    std::thread::sleep(Duration::from_millis(60));
    let points = get_ipc_response(&w, request("history", json!({})))
        .map(|b| b.deserialize::<Value>().unwrap())
        .expect("history through the built window");
    assert!(!points.as_array().unwrap().is_empty(), "{points}");
}

#[test]
fn only_a_popover_app_outlives_its_last_window() {
    use crate::window::stays_without_window;
    assert!(stays_without_window(true, None));
    assert!(!stays_without_window(true, Some(0)), "Quit quits");
    assert!(
        !stays_without_window(false, None),
        "closing the window quits"
    );
}

#[test]
fn the_popover_keep_comes_from_the_environment_or_its_default() {
    use std::time::Duration;
    assert_eq!(crate::popover_keep(None), crate::window::KEEP);
    assert_eq!(crate::popover_keep(Some("0")), Duration::ZERO);
    assert_eq!(crate::popover_keep(Some(" 5s")), Duration::from_secs(5));
    assert_eq!(crate::popover_keep(Some("8X")), crate::window::KEEP);
}

#[test]
fn the_sampler_slows_while_the_popover_is_closed() {
    let mut t = app("idle");
    let live = Arc::clone(&t.app.state::<Arc<Live>>());
    let base = Duration::from_millis(20);
    // An ordinary window is always looked at.
    assert_eq!(live.interval(), base);
    // A popover closed (focus lost; the keep is 0 here): nobody is looking.
    t.app.state::<crate::window::Mode>().set_popover(true);
    crate::window::on_event(&t.window.as_ref().window(), &WindowEvent::Focused(false));
    #[allow(deprecated)]
    t.app.run_iteration(|_, _| {});
    assert_eq!(live.interval(), base * swapsight::live::IDLE_SLOWDOWN);
    // Opened again: full pace.
    crate::window::show(t.app.handle());
    assert_eq!(live.interval(), base);
}
