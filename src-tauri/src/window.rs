//! The main window, in one of two modes:
//!
//! - **popover** (macOS by default): built when the tray icon is clicked,
//!   placed just below the menu bar under the icon ([`crate::placement::popover_origin`], from
//!   the icon's rect), and closed again when it loses focus — a menu-bar
//!   app's panel — except while one of our save/open dialogs is up
//!   ([`Dialog`]). Closed, not hidden: a hidden web view keeps WebKit's web
//!   process (and its 40–120 MiB) alive all day for nothing, while the
//!   sampler, detector, tray and notifications live in Rust and the history
//!   in `Live`, which the page asks for when it loads ([`release`]);
//! - **window** (Linux by default, anywhere with `SWAPSIGHT_SHOW_WINDOW=1`,
//!   and whenever the tray could not be built): an ordinary decorated window
//!   shown at start and never hidden behind the user's back; closing it
//!   quits. Linux trays (AppIndicator) send no click events and may not be
//!   shown at all, and a test under Xvfb has no tray, so there the window is
//!   the app.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tauri::{
    AppHandle, LogicalPosition, Manager, Runtime, WebviewWindow, WebviewWindowBuilder, Window,
    WindowEvent,
};
use tauri_plugin_positioner::{Position, WindowExt};

use crate::placement::{popover_position, Monitor, Rect};

/// Label of the one window (`tauri.conf.json`).
pub const MAIN: &str = "main";

/// How long a hidden popover stays built before it is closed: a second
/// look within it opens in a frame, while the hidden cost an hour later is
/// the same (`SWAPSIGHT_POPOVER_KEEP` sets it; `0` closes it at once).
/// Rebuilding costs about half a second (docs/benchmarks.md, P2).
pub const KEEP: Duration = Duration::from_secs(20);

/// The popover is built hidden when the app starts and kept this many
/// keeps (a minute by default): a first look right after starting it —
/// by hand, or soon after login — then opens in a frame instead of the
/// ~0.5 s a new web view takes. Unopened, it is closed as any hidden one.
pub const START_KEEPS: u32 = 3;

/// How the main window behaves; managed state.
#[derive(Debug, Default)]
pub struct Mode {
    popover: AtomicBool,
    /// The tray icon's rect as its last event gave it.
    tray_rect: Mutex<Option<Rect>>,
    /// Save/open dialogs open now (see [`Dialog`]).
    dialogs: Arc<AtomicUsize>,
    /// When focus loss last hid the popover: a click on the tray icon
    /// takes focus away first, so that same click must not show it again.
    hidden_at: Mutex<Option<Instant>>,
    /// How long a hidden popover is kept ([`KEEP`]).
    keep: Duration,
    /// Counts hides and shows: a close scheduled at a hide is due only if
    /// nothing happened since ([`Mode::close_due`]).
    turns: AtomicU64,
}

impl Mode {
    pub fn new(popover: bool, keep: Duration) -> Mode {
        Mode {
            popover: AtomicBool::new(popover),
            keep,
            ..Mode::default()
        }
    }

    /// A hide: the ticket a close scheduled now is due with.
    fn hid(&self) -> u64 {
        self.turns.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// A show: every close scheduled before it is off.
    fn shown(&self) {
        self.turns.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether the close scheduled at the hide that gave `ticket` is still
    /// due: the popover was neither shown nor hidden again since.
    fn close_due(&self, ticket: u64) -> bool {
        self.turns.load(Ordering::SeqCst) == ticket
    }

    pub fn is_popover(&self) -> bool {
        self.popover.load(Ordering::Relaxed)
    }

    pub fn set_popover(&self, popover: bool) {
        self.popover.store(popover, Ordering::Relaxed);
    }

    /// Remembers where the tray icon is, from one of its events.
    pub fn set_tray_rect(&self, rect: Rect) {
        *self.tray_rect.lock().unwrap_or_else(|e| e.into_inner()) = Some(rect);
    }

    fn tray_rect(&self) -> Option<Rect> {
        *self.tray_rect.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks a save/open dialog as open until the returned guard is dropped.
    pub fn dialog(&self) -> Dialog {
        self.dialogs.fetch_add(1, Ordering::SeqCst);
        Dialog(Arc::clone(&self.dialogs))
    }

    /// Whether losing focus now hides the window (see [`hide_on_blur`]).
    pub fn hides_on_blur(&self) -> bool {
        hide_on_blur(self.is_popover(), self.dialogs.load(Ordering::SeqCst))
    }

    /// Whether the popover was hidden by focus loss or a close a moment ago.
    pub fn just_hidden(&self) -> bool {
        let at = self.hidden_at.lock().unwrap_or_else(|e| e.into_inner());
        at.is_some_and(|t| t.elapsed() < Duration::from_millis(300))
    }

    fn mark_hidden(&self) {
        *self.hidden_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }
}

/// A save/open dialog is open while this lives: move it into the dialog's
/// callback. The panel takes focus from the popover, whose `Focused(false)`
/// would otherwise hide it mid-dialog — and with it the dialog's reason to
/// be (the export button, the replay it opens into).
#[must_use = "the dialog counts as open only while the guard lives"]
pub struct Dialog(Arc<AtomicUsize>);

impl Drop for Dialog {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The focus rule: a popover hides when it loses focus, unless a dialog of
/// ours took the focus; an ordinary window never hides itself.
pub fn hide_on_blur(popover: bool, dialogs_open: usize) -> bool {
    popover && dialogs_open == 0
}

/// The exit rule: when its last window closes (exit `code` `None`) a
/// popover app stays in the menu bar — the popover's window is closed, not
/// hidden, each time it goes away; an exit asked for by code (Quit) exits,
/// and so does closing the ordinary window.
pub fn stays_without_window(popover: bool, code: Option<i32>) -> bool {
    popover && code.is_none()
}

/// The pointer in global points, where the OS says so in a known unit: on
/// macOS tao answers `NSEvent.mouseLocation` (points, flipped to a top-left
/// origin) times the primary monitor's scale.
fn pointer_in_points<R: Runtime>(app: &AppHandle<R>) -> Option<(f64, f64)> {
    if !cfg!(target_os = "macos") {
        return None;
    }
    let scale = app.primary_monitor().ok()??.scale_factor();
    let p = app.cursor_position().ok()?;
    Some((p.x / scale, p.y / scale))
}

/// Where a `width` × `height` (points) popover goes for the icon at `tray`.
fn popover_place<R: Runtime>(app: &AppHandle<R>, tray: Rect, size: (f64, f64)) -> (f64, f64) {
    let fallback = app
        .primary_monitor()
        .ok()
        .flatten()
        .map_or(1.0, |m| m.scale_factor());
    popover_position(
        tray,
        size,
        &monitors(app.available_monitors()),
        pointer_in_points(app),
        fallback,
    )
}

/// The main window, built from its `tauri.conf.json` entry (`create:
/// false`: nothing is built at start) when it does not exist.
pub fn window<R: Runtime>(app: &AppHandle<R>) -> Option<WebviewWindow<R>> {
    if let Some(w) = app.get_webview_window(MAIN) {
        return Some(w);
    }
    let config = app.config().app.windows.iter().find(|w| w.label == MAIN)?;
    // Placed before it is built: a popover built at its default place and
    // moved afterwards flashes there first.
    let place = app
        .state::<Mode>()
        .tray_rect()
        .filter(|_| app.state::<Mode>().is_popover())
        .map(|tray| popover_place(app, tray, (config.width, config.height)));
    let built = WebviewWindowBuilder::from_config(app, config).and_then(|b| match place {
        Some((x, y)) => b.position(x, y).build(),
        None => b.build(),
    });
    match built {
        Ok(w) => Some(w),
        Err(e) => {
            log!("cannot build the window: {e}");
            None
        }
    }
}

/// Hides the popover, and closes it for good once it has stayed hidden for
/// [`KEEP`]: the window and its web view are destroyed, so WebKit's web
/// process ends (a hidden one would stay all day), and the next [`show`]
/// builds a new one whose page reloads the history from `Live`.
pub fn release<R: Runtime>(w: &Window<R>) {
    w.state::<Mode>().mark_hidden();
    // Hidden first, so it disappears at once even if the teardown lags.
    let _ = w.hide();
    close_unless_shown(w, w.state::<Mode>().keep);
}

/// The pointer came over the tray icon (macOS and Windows report it; Linux
/// trays do not), or on Linux the icon's menu opened (`menu_open`): a click
/// is likely next, so a closed popover's window is built now, hidden —
/// WebKit's web process starts and the page loads while the pointer is on
/// its way — and the click shows it in a frame. Not clicked, it is closed
/// after [`KEEP`] as a hidden one is.
pub fn prewarm<R: Runtime>(app: &AppHandle<R>) {
    let keep = app.state::<Mode>().keep;
    build_hidden(app, keep);
}

/// The app started in popover mode: the popover is built now, hidden, and
/// closed after [`start_keep`] unless shown meanwhile. A keep of 0 ("close
/// a hidden popover at once") builds nothing.
pub fn prewarm_at_start<R: Runtime>(app: &AppHandle<R>) {
    if let Some(keep) = start_keep(app.state::<Mode>().keep) {
        build_hidden(app, keep);
    }
}

/// Builds a closed popover's window, hidden, to be closed after `keep`
/// unless shown meanwhile ([`prewarm_due`] says when).
fn build_hidden<R: Runtime>(app: &AppHandle<R>, keep: Duration) {
    let exists = app.get_webview_window(MAIN).is_some();
    if !prewarm_due(app.state::<Mode>().is_popover(), exists, keep) {
        return;
    }
    if let Some(w) = window(app) {
        close_unless_shown(&w.as_ref().window(), keep);
    }
}

/// How long the popover built at start is kept hidden: [`START_KEEPS`]
/// keeps; none with a keep of 0.
pub fn start_keep(keep: Duration) -> Option<Duration> {
    (!keep.is_zero()).then(|| keep.saturating_mul(START_KEEPS))
}

/// Whether a cue (the pointer over the tray icon, the menu opening) builds
/// the window to be kept `keep`: only a popover's (an ordinary window stays
/// as the user left it), only when it is closed (a built one, shown or
/// hidden, is there already), and not with a keep of 0, which would close
/// it as soon as built.
pub fn prewarm_due(popover: bool, window_exists: bool, keep: Duration) -> bool {
    popover && !window_exists && !keep.is_zero()
}

/// Closes the hidden window after `keep` unless it was shown (or hidden
/// again) meanwhile; at once when the keep is 0.
fn close_unless_shown<R: Runtime>(w: &Window<R>, keep: Duration) {
    let ticket = w.state::<Mode>().hid();
    if keep.is_zero() {
        destroy(w);
        return;
    }
    let app = w.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(keep).await;
        let main = app.clone();
        let _ = main.run_on_main_thread(move || {
            let Some(w) = app.get_webview_window(MAIN) else {
                return;
            };
            if app.state::<Mode>().close_due(ticket) && !w.is_visible().unwrap_or(false) {
                destroy(&w.as_ref().window());
            }
        });
    });
}

/// Closes the popover: nobody is looking until it opens again, so the
/// sampler slows down ([`swapsight::live::Live::set_idle`]).
fn destroy<R: Runtime>(w: &Window<R>) {
    if let Err(e) = w.destroy() {
        log!("cannot close the window: {e}");
    }
    if let Some(live) = w.try_state::<Arc<swapsight::live::Live>>() {
        live.set_idle(true);
    }
}

/// Turns the window into an ordinary one (see the module docs).
pub fn use_window_mode<R: Runtime>(app: &AppHandle<R>) {
    app.state::<Mode>().set_popover(false);
    if let Some(w) = window(app) {
        let _ = w.set_decorations(true);
        let _ = w.set_always_on_top(false);
        let _ = w.set_skip_taskbar(false);
        show(app);
    }
}

/// Shows the window (under the tray icon in popover mode) and focuses it.
pub fn show<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = window(app) else {
        return;
    };
    let mode = app.state::<Mode>();
    mode.shown();
    if let Some(live) = app.try_state::<Arc<swapsight::live::Live>>() {
        live.set_idle(false);
    }
    if mode.is_popover() {
        let placed = match mode.tray_rect() {
            Some(tray) => place_under(&w, tray),
            // No tray rect yet (its first event has not come): the top
            // right corner, where macOS puts new menu-bar items.
            None => w.move_window(Position::TopRight),
        };
        if let Err(e) = placed {
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

fn monitors(listed: tauri::Result<Vec<tauri::Monitor>>) -> Vec<Monitor> {
    listed.unwrap_or_default().iter().map(Monitor::of).collect()
}

fn place_under<R: Runtime>(w: &tauri::WebviewWindow<R>, tray: Rect) -> tauri::Result<()> {
    let size = w.outer_size()?.to_logical::<f64>(w.scale_factor()?);
    let (x, y) = popover_place(w.app_handle(), tray, (size.width, size.height));
    w.set_position(LogicalPosition::new(x, y))
}

/// The tray icon's click: show the popover, or close it when it is shown.
pub fn toggle<R: Runtime>(app: &AppHandle<R>) {
    let mode = app.state::<Mode>();
    let shown = app
        .get_webview_window(MAIN)
        .filter(|w| w.is_visible().unwrap_or(false));
    match shown {
        Some(w) if mode.is_popover() => release(&w.as_ref().window()),
        _ if !mode.just_hidden() => show(app),
        _ => {}
    }
}

/// Gives the focus back to the popover after a dialog (it does not come
/// back by itself: the panel was a window of its own).
pub fn refocus<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(MAIN) else {
        return;
    };
    if app.state::<Mode>().is_popover() && w.is_visible().unwrap_or(false) {
        let _ = w.set_focus();
    }
}

/// Window events: in popover mode focus loss closes it (not while a dialog
/// of ours has the focus: [`hide_on_blur`]), and so does a close request,
/// which the app survives (the tray brings a new one). In window mode
/// closing quits: a Linux tray may be invisible, and an app nobody can
/// reach must not stay.
pub fn on_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if window.label() != MAIN {
        return;
    }
    let mode = window.state::<Mode>();
    #[cfg(target_os = "linux")]
    if let WindowEvent::Destroyed = event {
        crate::linux::trim();
        if mode.is_popover() {
            end_network_process_later(window.app_handle().clone());
        }
    }
    if !mode.is_popover() {
        return;
    }
    match event {
        WindowEvent::Focused(false) if mode.hides_on_blur() => release(window),
        WindowEvent::CloseRequested { api, .. } => {
            api.prevent_close();
            release(window);
        }
        _ => {}
    }
}

/// A second after the popover's window went (its web process gone by
/// then), WebKit's network process goes too — unless it was opened again.
#[cfg(target_os = "linux")]
fn end_network_process_later<R: Runtime>(app: AppHandle<R>) {
    let _ = std::thread::Builder::new()
        .name("swapsight-release".into())
        .spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            // Under WebDriver (tauri-driver sets this) the automation
            // session dies with the network process: the app's end-to-end
            // test and the open-latency bench keep it.
            let automated = std::env::var("TAURI_WEBVIEW_AUTOMATION").is_ok_and(|v| v == "true");
            if app.get_webview_window(MAIN).is_none() && !automated {
                crate::linux::end_network_process();
            }
        });
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
