//! The main window, in one of two modes:
//!
//! - **popover** (macOS by default): hidden until the tray icon is clicked,
//!   placed under the icon (`tauri-plugin-positioner`, `TrayCenter`), hidden
//!   again when it loses focus — a menu-bar app's panel;
//! - **window** (Linux by default, anywhere with `SWAPSIGHT_SHOW_WINDOW=1`,
//!   and whenever the tray could not be built): an ordinary decorated window
//!   shown at start and never hidden behind the user's back; closing it
//!   quits. Linux trays (AppIndicator) send no click events and may not be
//!   shown at all, and a test under Xvfb has no tray, so there the window is
//!   the app.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent};
use tauri_plugin_positioner::{Position, WindowExt};

/// Label of the one window (`tauri.conf.json`).
pub const MAIN: &str = "main";

/// How the main window behaves; managed state.
#[derive(Debug, Default)]
pub struct Mode {
    popover: AtomicBool,
    /// Set once the tray told the positioner where it is.
    tray_seen: AtomicBool,
    /// When focus loss last hid the popover: a click on the tray icon
    /// takes focus away first, so that same click must not show it again.
    hidden_at: Mutex<Option<Instant>>,
}

impl Mode {
    pub fn new(popover: bool) -> Mode {
        Mode {
            popover: AtomicBool::new(popover),
            ..Mode::default()
        }
    }

    pub fn is_popover(&self) -> bool {
        self.popover.load(Ordering::Relaxed)
    }

    pub fn set_popover(&self, popover: bool) {
        self.popover.store(popover, Ordering::Relaxed);
    }

    pub fn tray_seen(&self) {
        self.tray_seen.store(true, Ordering::Relaxed);
    }

    fn just_hidden(&self) -> bool {
        let at = self.hidden_at.lock().unwrap_or_else(|e| e.into_inner());
        at.is_some_and(|t| t.elapsed() < Duration::from_millis(300))
    }

    fn mark_hidden(&self) {
        *self.hidden_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }
}

/// Turns the window into an ordinary one (see the module docs).
pub fn use_window_mode<R: Runtime>(app: &AppHandle<R>) {
    app.state::<Mode>().set_popover(false);
    if let Some(w) = app.get_webview_window(MAIN) {
        let _ = w.set_decorations(true);
        let _ = w.set_always_on_top(false);
        let _ = w.set_skip_taskbar(false);
        show(app);
    }
}

/// Shows the window (under the tray icon in popover mode) and focuses it.
pub fn show<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(MAIN) else {
        return;
    };
    let mode = app.state::<Mode>();
    if mode.is_popover() {
        let at = if mode.tray_seen.load(Ordering::Relaxed) {
            Position::TrayCenter
        } else {
            Position::TopRight
        };
        if let Err(e) = w.move_window_constrained(at) {
            log!("cannot place the window: {e}");
        }
    }
    if let Err(e) = w
        .show()
        .and_then(|()| w.unminimize())
        .and_then(|()| w.set_focus())
    {
        log!("cannot show the window: {e}");
    }
}

/// The tray icon's click: show the popover, or hide it when it is shown.
pub fn toggle<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(MAIN) else {
        return;
    };
    let mode = app.state::<Mode>();
    if w.is_visible().unwrap_or(false) && mode.is_popover() {
        mode.mark_hidden();
        let _ = w.hide();
    } else if !mode.just_hidden() {
        show(app);
    }
}

/// Window events: in popover mode focus loss hides it and closing only
/// hides it (the tray brings it back). In window mode closing quits: a
/// Linux tray may be invisible, and an app nobody can reach must not stay.
pub fn on_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if window.label() != MAIN {
        return;
    }
    let mode = window.state::<Mode>();
    if !mode.is_popover() {
        return;
    }
    match event {
        WindowEvent::Focused(false) => {
            mode.mark_hidden();
            let _ = window.hide();
        }
        WindowEvent::CloseRequested { api, .. } => {
            api.prevent_close();
            mode.mark_hidden();
            let _ = window.hide();
        }
        _ => {}
    }
}
