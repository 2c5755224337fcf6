//! Linux: the tray's menu opening builds the popover, hidden.
//!
//! A Linux tray reports no pointer over its icon (macOS's cue for
//! [`window::prewarm`](crate::window::prewarm), `tray::on_icon`): a click
//! there opens the icon's menu, and the popover comes from its "Open
//! swapsight" item, a move of the pointer later. That move is the time a new
//! window's build takes (WebKit's web process, the page), so the menu's
//! opening builds it, hidden, and the item's click shows a built window.
//!
//! The menu is served over D-Bus: libayatana-appindicator hands the GTK menu
//! to libdbusmenu (`com.canonical.dbusmenu`), and the panel tells the app
//! when it opens it. GNOME's AppIndicator extension sends `Event(0,
//! "opened")` and `AboutToShow(0)` to the root (its `dbusMenu.js`,
//! `_onMenuOpenStateChanged`; once `AboutToShow(0)` also when it first
//! attaches); KDE Plasma's tray sends both as it opens the menu
//! (plasma-workspace `libdbusmenuqt/dbusmenuimporter.cpp`, `updateMenu`,
//! from `StatusNotifierItemSource::contextMenu`); libdbusmenu's own client
//! (XFCE, MATE) may send the group forms `EventGroup` and
//! `AboutToShowGroup`. Nothing in GTK hears of it:
//! libdbusmenu's GTK parser connects "about-to-show" for the items only,
//! never the root (`libdbusmenu-gtk/parser.c`), and muda keeps its GTK menu
//! to itself. So the app watches its session-bus connection — the shared
//! one libdbusmenu exports the menu on — with a filter that only looks and
//! passes every message on.
//!
//! Anyone on the user's session bus can send these; the most they do is
//! build a hidden popover that is closed after the keep. A menu opened for
//! another item builds the window all the same (≈ 0.8 s of CPU once, as a
//! macOS hover does). Without a StatusNotifier host the indicator falls back
//! to an XEmbed icon whose menu is plain GTK, sent over no bus: no prewarm
//! there.

use gio::glib::Variant;
use gio::{DBusConnection, DBusMessage, DBusMessageType};
use std::sync::OnceLock;

/// The interface a libdbusmenu server exports (`libdbusmenu-glib/dbus-menu.xml`).
pub const DBUSMENU: &str = "com.canonical.dbusmenu";

/// The menu's root item: the menu itself (dbusmenu's id 0).
pub const ROOT: i32 = 0;

/// The session bus, kept while the filter is on it.
static BUS: OnceLock<DBusConnection> = OnceLock::new();

/// Whether `msg` tells this app that its tray menu is opening: a method call
/// on [`DBUSMENU`] that opens the [`ROOT`] (`Event`/`EventGroup` with
/// "opened", `AboutToShow`/`AboutToShowGroup`). Reads the body in place, by
/// its D-Bus signature: nothing is copied out of a message.
pub fn opens_the_menu(msg: &DBusMessage) -> bool {
    if msg.message_type() != DBusMessageType::MethodCall
        || msg.interface().as_deref() != Some(DBUSMENU)
    {
        return false;
    }
    let (Some(member), Some(body)) = (msg.member(), msg.body()) else {
        return false;
    };
    let signature = body.type_().as_str();
    match (member.as_str(), signature) {
        // Event(i id, s event, v data, u timestamp)
        ("Event", "(isvu)") => root_opened(&body),
        // EventGroup(a(isvu) events)
        ("EventGroup", "(a(isvu))") => {
            let events = body.child_value(0);
            (0..events.n_children()).any(|i| root_opened(&events.child_value(i)))
        }
        // AboutToShow(i id)
        ("AboutToShow", "(i)") => body.child_value(0).get::<i32>() == Some(ROOT),
        // AboutToShowGroup(ai ids)
        ("AboutToShowGroup", "(ai)") => {
            let ids = body.child_value(0);
            (0..ids.n_children()).any(|i| ids.child_value(i).get::<i32>() == Some(ROOT))
        }
        _ => false,
    }
}

/// One `(isvu)` event: the root, "opened".
fn root_opened(event: &Variant) -> bool {
    event.child_value(0).get::<i32>() == Some(ROOT) && event.child_value(1).str() == Some("opened")
}

/// From now on, each opening of the tray's menu runs `prewarm` (on GDBus's
/// worker thread: it should only hand the work to the main thread). Asks for
/// the session bus without blocking; with none, says so once and does
/// nothing.
pub fn prewarm_on_menu_open(prewarm: impl Fn() + Send + Sync + 'static) {
    gio::bus_get(
        gio::BusType::Session,
        gio::Cancellable::NONE,
        move |bus| match bus {
            Ok(bus) => {
                bus.add_filter(move |_, msg, incoming| {
                    if incoming && opens_the_menu(msg) {
                        prewarm();
                    }
                    // The filter owns the message it is handed: giving it
                    // back passes it on to libdbusmenu untouched.
                    Some(msg.clone())
                });
                let _ = BUS.set(bus);
            }
            Err(e) => log!("no popover built on the tray menu's opening: {e}"),
        },
    );
}

#[cfg(test)]
#[path = "menu_open_tests.rs"]
mod tests;
