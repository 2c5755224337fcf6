//! A private D-Bus session bus for one test, and the calls a tray panel
//! makes to the app's menu over it (`com.canonical.dbusmenu`, which
//! libayatana-appindicator exports the menu under).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gio::glib::{ToVariant, Variant, VariantTy};
use gio::{Cancellable, DBusCallFlags, DBusConnection, DBusConnectionFlags};

use super::{skip_unless_ci, Proc};
use swapsight_app::menu_open::{DBUSMENU, ROOT};

/// Debian's, by absolute path (tests run as root in CI).
const DBUS_DAEMON: &str = "/usr/bin/dbus-daemon";

pub struct SessionBus {
    /// For the app's `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
    conn: DBusConnection,
    _daemon: Proc,
}

/// Where a connection serves its menu: its unique bus name and the path.
pub struct Menu {
    pub name: String,
    pub path: String,
}

impl SessionBus {
    /// `None` (after a note) when `dbus-daemon` is missing outside CI.
    pub fn start(test: &str) -> Option<SessionBus> {
        let why_not = (!std::path::Path::new(DBUS_DAEMON).exists())
            .then(|| format!("{DBUS_DAEMON} not found (apt-get install dbus-daemon)"));
        skip_unless_ci(test, why_not)?;
        let mut daemon = Proc::spawn(
            "dbus-daemon",
            Command::new(DBUS_DAEMON)
                .args(["--session", "--nofork", "--print-address=1"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )
        .expect("start dbus-daemon");
        let out = daemon.child.stdout.take().expect("its stdout");
        let mut address = String::new();
        BufReader::new(out)
            .read_line(&mut address)
            .expect("dbus-daemon prints its address");
        let address = address.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon gave no address");
        let conn = DBusConnection::for_address_sync(
            &address,
            DBusConnectionFlags::AUTHENTICATION_CLIENT
                | DBusConnectionFlags::MESSAGE_BUS_CONNECTION,
            None,
            Cancellable::NONE,
        )
        .expect("connect to the test's bus");
        Some(SessionBus {
            address,
            conn,
            _daemon: daemon,
        })
    }

    fn call(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        args: Option<&Variant>,
    ) -> Option<Variant> {
        self.conn
            .call_sync(
                Some(dest),
                path,
                iface,
                method,
                args,
                None::<&VariantTy>,
                DBusCallFlags::NONE,
                5_000,
                Cancellable::NONE,
            )
            .ok()
    }

    /// The menu the process `pid` serves, once it does (within `limit`).
    pub fn menu_of(&self, pid: u32, limit: Duration) -> Menu {
        let until = Instant::now() + limit;
        loop {
            if let Some(menu) = self.find_menu(pid) {
                return menu;
            }
            assert!(
                Instant::now() < until,
                "pid {pid} serves no {DBUSMENU} on the bus"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn find_menu(&self, pid: u32) -> Option<Menu> {
        let bus = (
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
        );
        let names = self.call(bus.0, bus.1, bus.2, "ListNames", None)?;
        let names: Vec<String> = names.child_value(0).get()?;
        for name in names.into_iter().filter(|n| n.starts_with(':')) {
            let owner = self.call(
                bus.0,
                bus.1,
                bus.2,
                "GetConnectionUnixProcessID",
                Some(&(name.as_str(),).to_variant()),
            );
            if owner.and_then(|v| v.child_value(0).get::<u32>()) != Some(pid) {
                continue;
            }
            if let Some(path) = self.menu_under(&name, "/", 8) {
                return Some(Menu { name, path });
            }
        }
        None
    }

    /// The first object under `path` that implements the menu interface.
    fn menu_under(&self, name: &str, path: &str, depth: u32) -> Option<String> {
        let xml = self.call(
            name,
            path,
            "org.freedesktop.DBus.Introspectable",
            "Introspect",
            None,
        )?;
        let xml: String = xml.child_value(0).get()?;
        if xml.contains(&format!("<interface name=\"{DBUSMENU}\"")) {
            return Some(path.to_owned());
        }
        if depth == 0 {
            return None;
        }
        xml.split("<node name=\"").skip(1).find_map(|rest| {
            let child = rest.split('"').next()?;
            let sub = if path == "/" {
                format!("/{child}")
            } else {
                format!("{path}/{child}")
            };
            self.menu_under(name, &sub, depth - 1)
        })
    }

    /// As a panel tells the app its menu was opened or closed:
    /// `Event(0, what, <0>, 0)` on the root.
    pub fn menu_event(&self, menu: &Menu, what: &str) {
        let args = (ROOT, what, 0i32.to_variant(), 0u32).to_variant();
        self.call(&menu.name, &menu.path, DBUSMENU, "Event", Some(&args))
            .unwrap_or_else(|| panic!("the menu took no {what:?} event"));
    }
}
