//! The menu-bar item: a template icon (black and alpha, tinted by macOS)
//! that gets a badge while a false fit or overflow is flagged, the live
//! title (`⇡2.1G ⚠ false fit`), and the menu — Open, swap written today,
//! Start/Stop recording, Reset baseline, Export last recording…, Push to
//! Prometheus (its state; a click toggles it), Start at login, Quit. A left
//! click toggles the popover (macOS and Windows; Linux trays send no clicks,
//! their menu's Open does it).

use std::sync::{Arc, Mutex};

use swapsight::live::{Live, Snapshot};
use swapsight::units::format_bytes;
use swapsight::written::Daily;
use swapsight::State;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_autostart::ManagerExt as _;

use crate::export::{self, ExportFormat};
use crate::{placement, window};

/// Id of the one tray icon.
pub const ID: &str = "swapsight";

const ICON: &[u8] = include_bytes!("../../icons/tray@2x.png");
const ICON_ALERT: &[u8] = include_bytes!("../../icons/tray-alert@2x.png");

/// The tray icon and the menu items that change; managed state.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    record: MenuItem<R>,
    /// "Swap written today: 3.1 GiB", an item that only informs.
    written: MenuItem<R>,
    /// "Push to Prometheus: on → mimir.example", a click toggles it.
    push: MenuItem<R>,
    autostart: CheckMenuItem<R>,
    shown: Mutex<Shown>,
}

/// What the tray shows now, to touch it only on change.
#[derive(Default, PartialEq)]
struct Shown {
    title: Option<String>,
    alert: Option<bool>,
    recording: Option<bool>,
    written: Option<String>,
    push: Option<String>,
    daily: Daily,
}

/// The words of the menu's "written today" item.
pub fn written_today_label(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!(
            "Swap written today: {}",
            format_bytes(i64::try_from(b).unwrap_or(i64::MAX))
        ),
        None => "Swap written today: not known here".to_string(),
    }
}

/// Today, as a number that changes at local midnight (the local calendar
/// year and day of the year); 0 where the local time cannot be read.
#[cfg(unix)]
fn local_day() -> i64 {
    let now: libc::time_t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().try_into().unwrap_or(0));
    // SAFETY: an all-zero `tm` is a valid value of the plain C struct.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals; localtime_r only writes
    // `tm` and is thread-safe (unlike localtime).
    let done = unsafe { libc::localtime_r(&now, &mut tm) };
    if done.is_null() {
        return 0;
    }
    i64::from(tm.tm_year) * 400 + i64::from(tm.tm_yday)
}

/// Today where no local time is at hand: the UTC day.
#[cfg(not(unix))]
fn local_day() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| (d.as_secs() / 86_400) as i64)
}

/// Whether a snapshot calls for the alert icon.
pub fn is_alert(state: State) -> bool {
    matches!(state, State::FalseFit | State::Overflow)
}

fn image(bytes: &'static [u8]) -> tauri::Result<Image<'static>> {
    Image::from_bytes(bytes)
}

/// Builds the tray icon and its menu, and manages the [`Tray`].
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let autostart_on = app.autolaunch().is_enabled().unwrap_or(false);
    let open = MenuItem::with_id(app, "open", "Open swapsight", true, None::<&str>)?;
    let written = MenuItem::with_id(
        app,
        "written",
        written_today_label(None),
        false,
        None::<&str>,
    )?;
    let record = MenuItem::with_id(app, "record", "Start recording", true, None::<&str>)?;
    let reset = MenuItem::with_id(app, "reset", "Reset baseline", true, None::<&str>)?;
    let export = MenuItem::with_id(app, "export", "Export last recording…", true, None::<&str>)?;
    let push_label = app
        .try_state::<crate::push::Push>()
        .map_or_else(|| "Push to Prometheus: off".into(), |p| p.label());
    let push = MenuItem::with_id(app, "push", &push_label, true, None::<&str>)?;
    let autostart = CheckMenuItem::with_id(
        app,
        "autostart",
        "Start at login",
        true,
        autostart_on,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, "quit", "Quit swapsight", true, Some("CmdOrCtrl+Q"))?;
    let menu = Menu::with_items(
        app,
        &[
            &open,
            &written,
            &PredefinedMenuItem::separator(app)?,
            &record,
            &reset,
            &export,
            &PredefinedMenuItem::separator(app)?,
            &push,
            &autostart,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let icon = TrayIconBuilder::with_id(ID)
        .icon(image(ICON)?)
        .icon_as_template(true)
        .tooltip("swapsight: footprint beside swap")
        .title("")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(on_menu)
        .on_tray_icon_event(on_icon)
        .build(app)?;
    app.manage(Tray {
        icon,
        record,
        written,
        push,
        autostart,
        shown: Mutex::new(Shown {
            push: Some(push_label),
            ..Shown::default()
        }),
    });
    Ok(())
}

impl<R: Runtime> Tray<R> {
    /// Shows a snapshot: title, icon variant, the record item's words.
    pub fn show(&self, s: &Snapshot) {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if shown.title.as_deref() != Some(s.title.as_str()) {
            // `Some("")`, not `None`, clears the title on macOS.
            if let Err(e) = self.icon.set_title(Some(s.title.as_str())) {
                log!("cannot set the tray title: {e}");
            }
            shown.title = Some(s.title.clone());
        }
        let alert = is_alert(s.state);
        if shown.alert != Some(alert) {
            let bytes = if alert { ICON_ALERT } else { ICON };
            if let Err(e) =
                image(bytes).and_then(|i| self.icon.set_icon_with_as_template(Some(i), true))
            {
                log!("cannot set the tray icon: {e}");
            }
            shown.alert = Some(alert);
        }
        let recording = s.recording.is_some();
        if shown.recording != Some(recording) {
            let _ = self.set_recording(recording);
            shown.recording = Some(recording);
        }
        let today = shown.daily.push(local_day(), s.system.swap_out_bytes);
        let label = written_today_label(today);
        if shown.written.as_deref() != Some(label.as_str()) {
            if let Err(e) = self.written.set_text(&label) {
                log!("cannot set the written-today item: {e}");
            }
            shown.written = Some(label);
        }
    }

    /// Shows the push's state, when it changed.
    pub fn show_push(&self, label: &str) {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if shown.push.as_deref() != Some(label) {
            if let Err(e) = self.push.set_text(label) {
                log!("cannot set the push item: {e}");
            }
            shown.push = Some(label.to_string());
        }
    }

    /// Where the icon is now (`None` where the platform does not say).
    pub fn rect(&self) -> Option<tauri::Rect> {
        self.icon.rect().ok().flatten()
    }

    fn set_recording(&self, recording: bool) -> tauri::Result<()> {
        self.record.set_text(if recording {
            "Stop recording"
        } else {
            "Start recording"
        })
    }
}

fn on_icon<R: Runtime>(tray: &TrayIcon<R>, event: TrayIconEvent) {
    let app = tray.app_handle();
    match &event {
        TrayIconEvent::Click { rect, .. }
        | TrayIconEvent::Enter { rect, .. }
        | TrayIconEvent::Move { rect, .. }
        | TrayIconEvent::Leave { rect, .. } => keep_tray_rect(app, rect),
        _ => {}
    }
    if let TrayIconEvent::Enter { .. } = event {
        window::prewarm(app);
    }
    if let TrayIconEvent::Click {
        button: MouseButton::Left,
        button_state: MouseButtonState::Up,
        ..
    } = event
    {
        window::toggle(app);
    }
}

/// Where the icon is, for the popover's placement.
fn keep_tray_rect<R: Runtime>(app: &AppHandle<R>, rect: &tauri::Rect) {
    // tray-icon gives physical units, so the scale is not used.
    app.state::<window::Mode>()
        .set_tray_rect(placement::Rect::from_tauri(rect, 1.0));
}

fn on_menu<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    let live = app.state::<Arc<Live>>();
    match event.id().as_ref() {
        "open" => {
            // No icon event may have come yet to say where the icon is.
            if let Some(rect) = app.try_state::<Tray<R>>().and_then(|t| t.rect()) {
                keep_tray_rect(app, &rect);
            }
            window::show(app)
        }
        "record" => {
            // Off the main thread, as the page's commands are: a start
            // creates the trace, a stop waits for the marks reader's last
            // look and, within a tick of the start, for the first sample.
            let (live, app) = (Arc::clone(live.inner()), app.clone());
            tauri::async_runtime::spawn_blocking(move || {
                let recording = live.snapshot().is_some_and(|s| s.recording.is_some());
                let now_recording = if recording {
                    match live.stop_recording() {
                        Ok((path, n)) => log!("recorded {n} samples to {}", path.display()),
                        Err(e) => log!("cannot stop recording: {e}"),
                    }
                    false
                } else {
                    match live.start_recording(None) {
                        Ok(path) => {
                            log!("recording to {}", path.display());
                            true
                        }
                        Err(e) => {
                            log!("cannot start recording: {e}");
                            false
                        }
                    }
                };
                if let Some(t) = app.try_state::<Tray<R>>() {
                    let _ = t.set_recording(now_recording);
                }
            });
        }
        "reset" => live.reset_baseline(),
        "export" => match live.last_recording() {
            Some(trace) => {
                let app = app.clone();
                tauri::async_runtime::spawn(async move {
                    let Some(out) = export::ask_save_path(&app, &trace, None).await else {
                        return;
                    };
                    let format = ExportFormat::from_path(&out).unwrap_or(ExportFormat::Csv);
                    let res = tauri::async_runtime::spawn_blocking(move || {
                        export::export_to(&trace, format, &out).map(|()| out)
                    })
                    .await;
                    match res {
                        Ok(Ok(out)) => log!("exported {} as {format:?}", out.display()),
                        Ok(Err(e)) => log!("{e}"),
                        Err(e) => log!("export failed: {e}"),
                    }
                });
            }
            None => log!("nothing to export: no recording yet"),
        },
        "push" => {
            // Off the main thread: stopping sends what the queue holds
            // for up to 5 s.
            let (live, app) = (Arc::clone(live.inner()), app.clone());
            tauri::async_runtime::spawn_blocking(move || {
                let Some(push) = app.try_state::<crate::push::Push>() else {
                    return;
                };
                push.toggle(&live);
                if let Some(t) = app.try_state::<Tray<R>>() {
                    t.show_push(&push.label());
                }
            });
        }
        "autostart" => {
            let al = app.autolaunch();
            let on = al.is_enabled().unwrap_or(false);
            let res = if on { al.disable() } else { al.enable() };
            if let Err(e) = res {
                log!("cannot change start at login: {e}");
            }
            if let Some(t) = app.try_state::<Tray<R>>() {
                let _ = t.autostart.set_checked(al.is_enabled().unwrap_or(on));
            }
        }
        "quit" => app.exit(0),
        _ => {}
    }
}
