//! swapsight's menu-bar shell (Tauri v2): a tray icon whose title says how
//! far swap grew and whether a false fit is flagged, a popover with the live
//! chart and process table (`ui/`), notifications, recordings and exports.
//!
//! Only glue: the session is `swapsight::live::Live` (sampler, detector,
//! snapshots, recordings), the same one `swapsight serve` wraps in HTTP.
//! This crate wires it to Tauri: commands (`cmd`), the `update` event and
//! the tray, both fed by one thread reading `Live::subscribe` ([`pump`]).
//! [`run_app`] is generic over the runtime so tests drive the real wiring
//! through `tauri::test::mock_builder()`.

use std::path::PathBuf;
use std::sync::Arc;

use swapsight::live::{Live, Update};
use tauri::{App, AppHandle, Builder, Emitter, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;

/// Logs a line to stderr, prefixed with the app's name.
macro_rules! log {
    ($($arg:tt)*) => {
        eprintln!("swapsight-app: {}", format_args!($($arg)*))
    };
}

pub mod cmd;
pub mod export;
#[cfg(target_os = "linux")]
pub mod linux;
#[cfg(target_os = "macos")]
pub mod macos;
#[cfg(target_os = "linux")]
pub mod menu_open;
pub mod placement;
pub mod push;
pub mod settings;
pub mod tray;
pub mod window;

/// Name of the event that carries each [`Update`] to the web view.
pub const UPDATE_EVENT: &str = "update";

/// How the app starts.
pub struct Options {
    /// A session to use instead of the native one (tests).
    pub live: Option<Arc<Live>>,
    /// Build the tray icon.
    pub tray: bool,
    /// An ordinary window shown at start instead of a popover (see
    /// [`window`]); also taken when the tray cannot be built.
    pub window_mode: bool,
    /// Where recordings go; default
    /// `swapsight::recordings::default_recordings_dir()` (shared with serve).
    pub recordings_dir: Option<PathBuf>,
    /// How long a hidden popover stays built ([`window::KEEP`]).
    pub popover_keep: std::time::Duration,
    /// The settings file ([`settings`]); default `settings.json` in the
    /// app's config folder.
    pub settings: Option<PathBuf>,
}

impl Options {
    /// From the environment: `SWAPSIGHT_SHOW_WINDOW=1|0` (window mode; by
    /// default on Linux, off on macOS), `SWAPSIGHT_NO_TRAY=1`,
    /// `SWAPSIGHT_RECORDINGS_DIR=<dir>`, `SWAPSIGHT_POPOVER_KEEP=<duration>`,
    /// `SWAPSIGHT_SETTINGS=<file>`.
    pub fn from_env() -> Options {
        let flag = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| matches!(v.trim(), "1" | "true" | "yes"))
        };
        Options {
            live: None,
            tray: !flag("SWAPSIGHT_NO_TRAY").unwrap_or(false),
            window_mode: flag("SWAPSIGHT_SHOW_WINDOW").unwrap_or(cfg!(target_os = "linux")),
            recordings_dir: std::env::var_os("SWAPSIGHT_RECORDINGS_DIR").map(PathBuf::from),
            popover_keep: popover_keep(std::env::var("SWAPSIGHT_POPOVER_KEEP").ok().as_deref()),
            settings: std::env::var_os("SWAPSIGHT_SETTINGS").map(PathBuf::from),
        }
    }
}

/// `SWAPSIGHT_POPOVER_KEEP`: a duration (`0` closes a hidden popover at
/// once); anything else is said and the default taken.
fn popover_keep(value: Option<&str>) -> std::time::Duration {
    let Some(v) = value else {
        return window::KEEP;
    };
    match v.trim() {
        "0" => std::time::Duration::ZERO,
        v => swapsight::units::parse_duration(v).unwrap_or_else(|e| {
            log!(
                "SWAPSIGHT_POPOVER_KEEP: {e}; keeping a hidden popover {:?}",
                window::KEEP
            );
            window::KEEP
        }),
    }
}

/// Runs the app with the real runtime and `tauri.conf.json`.
pub fn run() {
    #[cfg(target_os = "linux")]
    linux::lean_rendering();
    let builder = tauri::Builder::default();
    // Opening at login must not take the focus from what the user is doing.
    #[cfg(target_os = "macos")]
    let builder = builder.activate_ignoring_other_apps(false);
    #[allow(unused_mut)] // only macOS sets the policy
    let mut app = run_app(builder, Options::from_env())
        .build(context())
        .unwrap_or_else(|e| {
            log!("cannot start: {e}");
            std::process::exit(1);
        });
    // A menu-bar app: no Dock icon, no app menu. Set on the built App, before
    // the event loop runs, so tao launches it as an accessory; from `setup`
    // (which runs once the loop has started) it would come after tao made
    // the app Regular and activated it — a Dock icon flashing and the focus
    // stolen at every login. The bundle also says so (LSUIElement in
    // Info.plist); this covers the bare binary (`cargo run`).
    #[cfg(target_os = "macos")]
    app.set_activation_policy(tauri::ActivationPolicy::Accessory);
    app.run(|app, event| match event {
        tauri::RunEvent::ExitRequested { code, api, .. }
            if window::stays_without_window(app.state::<window::Mode>().is_popover(), code) =>
        {
            api.prevent_exit();
        }
        // What the push's queue holds is sent before the process ends.
        tauri::RunEvent::Exit => {
            if let Some(p) = app.try_state::<push::Push>() {
                p.finish();
            }
        }
        _ => {}
    });
}

/// The context generated from `tauri.conf.json` (config, `../ui` assets,
/// icons, capabilities), for any runtime.
pub fn context<R: Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}

/// Plugins, commands, window behaviour and setup, on any runtime.
pub fn run_app<R: Runtime>(builder: Builder<R>, opts: Options) -> Builder<R> {
    builder
        .plugin(tauri_plugin_positioner::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_autostart::Builder::new().build())
        .manage(window::Mode::new(!opts.window_mode, opts.popover_keep))
        .invoke_handler(tauri::generate_handler![
            cmd::snapshot,
            cmd::history,
            cmd::process,
            cmd::pin,
            cmd::reset_baseline,
            cmd::start_recording,
            cmd::stop_recording,
            cmd::recordings,
            cmd::replay,
            cmd::report,
            cmd::open_trace,
            cmd::export_recording,
        ])
        .on_window_event(window::on_event)
        .setup(move |app| setup(app, opts))
}

fn setup<R: Runtime>(app: &mut App<R>, opts: Options) -> Result<(), Box<dyn std::error::Error>> {
    let live = match opts.live {
        Some(live) => live,
        None => {
            // The folder `swapsight serve` uses too, so either lists both.
            let dir = opts
                .recordings_dir
                .unwrap_or_else(swapsight::recordings::default_recordings_dir);
            log!("sampling; recordings go to {}", dir.display());
            Arc::new(Live::start_native(dir)?)
        }
    };
    app.manage(Arc::clone(&live));
    let settings = match opts.settings {
        Some(path) => path,
        None => app.path().app_config_dir()?.join(settings::FILE),
    };
    let push = push::Push::new(settings);
    push.start_if_enabled(&live);
    app.manage(push);
    let handle = app.handle().clone();
    let tray = opts.tray
        && match tray::build(&handle) {
            Ok(()) => true,
            Err(e) => {
                log!("no tray icon ({e}); showing a window instead");
                false
            }
        };
    if opts.window_mode || !tray {
        window::use_window_mode(&handle);
    } else {
        // No popover yet, so nobody is looking: the sampler runs slower
        // until it opens (`window::show`).
        live.set_idle(true);
        window::prewarm_at_start(&handle);
        #[cfg(target_os = "linux")]
        {
            let app = handle.clone();
            menu_open::prewarm_on_menu_open(move || {
                let on_main = app.clone();
                let _ = app.run_on_main_thread(move || window::prewarm(&on_main));
            });
        }
    }
    #[cfg(target_os = "linux")]
    {
        let app = handle.clone();
        linux::run_on_usr2(move || {
            let on_main = app.clone();
            let _ = app.run_on_main_thread(move || window::toggle(&on_main));
        });
    }
    #[cfg(target_os = "macos")]
    watch_pressure(handle.clone(), Arc::clone(&live));
    pump(handle, &live);
    Ok(())
}

/// macOS: who announces a rise of the kernel's pressure level, fed by the
/// dispatch source and by each tick (see `PressureAnnouncer`), on the
/// app's own clock.
#[cfg(target_os = "macos")]
static PRESSURE: std::sync::Mutex<swapsight::live::PressureAnnouncer> =
    std::sync::Mutex::new(swapsight::live::PressureAnnouncer::NEW);

#[cfg(target_os = "macos")]
fn pressure_clock_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(std::time::Instant::now);
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// macOS: a change of the kernel's pressure level redraws the title and
/// notifies at once, between two ticks.
#[cfg(target_os = "macos")]
fn watch_pressure<R: Runtime>(app: AppHandle<R>, live: Arc<Live>) {
    let soon_s = swapsight::forecast::ForecastConfig::default().horizon_ms as f64 / 1000.0;
    macos::watch_pressure(move |level| {
        if let (Some(t), Some(s)) = (app.try_state::<tray::Tray<R>>(), live.snapshot()) {
            t.show(&s.with_level(level, soon_s));
        }
        let notice = PRESSURE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_event(level, pressure_clock_ms());
        if let Some(n) = notice {
            notify(&app, &n);
        }
    });
}

fn notify<R: Runtime>(app: &AppHandle<R>, n: &swapsight::live::Notice) {
    log!("{}: {}", n.title, n.body);
    if let Err(e) = app
        .notification()
        .builder()
        .title(&n.title)
        .body(&n.body)
        .show()
    {
        log!("cannot show a notification: {e}");
    }
}

/// One thread forwards every [`Update`] of the session: to the web view as
/// the `update` event, to the tray (title, icon, menu) and, for each
/// notice, as a notification.
pub fn pump<R: Runtime>(app: AppHandle<R>, live: &Live) {
    let updates = live.subscribe(16);
    let spawned = std::thread::Builder::new()
        .name("swapsight-pump".into())
        .spawn(move || {
            for update in updates {
                forward(&app, &update);
            }
        });
    if let Err(e) = spawned {
        log!("cannot start the update thread: {e}");
    }
}

fn forward<R: Runtime>(app: &AppHandle<R>, update: &Update) {
    // A closed popover has no page to update: no JSON made for nobody
    // twice a second all day.
    if app.get_webview_window(window::MAIN).is_some() {
        if let Err(e) = app.emit(UPDATE_EVENT, update) {
            log!("cannot send an update to the window: {e}");
        }
    }
    if let Some(t) = app.try_state::<tray::Tray<R>>() {
        t.show(&update.snapshot);
        if let Some(p) = app.try_state::<push::Push>() {
            t.show_push(&p.label());
        }
    }
    for n in &update.notices {
        // macOS: the tick's level goes through the announcer below, shared
        // with the dispatch source, so that a rise is told once.
        if cfg!(target_os = "macos") && n.kind == "pressure" {
            continue;
        }
        notify(app, n);
    }
    #[cfg(target_os = "macos")]
    if let Some(level) = update.snapshot.system.pressure.and_then(|p| p.kernel_level) {
        let notice = PRESSURE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_tick(level, pressure_clock_ms());
        if let Some(n) = notice {
            notify(app, &n);
        }
    }
}

#[cfg(test)]
mod tests;
