use super::{opens_the_menu, DBUSMENU, ROOT};
use gio::glib::{ToVariant, Variant};
use gio::DBusMessage;

/// A method call as a panel sends it to the app's menu (the path
/// libayatana-appindicator exports it under).
fn call(interface: &str, member: &str, body: Option<Variant>) -> DBusMessage {
    let msg = DBusMessage::new_method_call(
        Some(":1.7"),
        "/org/ayatana/NotificationItem/swapsight/Menu",
        Some(interface),
        member,
    );
    if let Some(body) = body {
        msg.set_body(&body);
    }
    msg
}

fn event(id: i32, name: &str) -> (i32, String, Variant, u32) {
    (id, name.to_owned(), 0i32.to_variant(), 0u32)
}

#[test]
fn the_roots_opened_event_opens_the_menu() {
    let opened = |id, name: &str| {
        opens_the_menu(&call(DBUSMENU, "Event", Some(event(id, name).to_variant())))
    };
    assert!(opened(ROOT, "opened"));
    assert!(!opened(ROOT, "closed"), "closing is no opening");
    assert!(!opened(ROOT, "clicked"));
    assert!(!opened(4, "opened"), "a submenu of some item, not the menu");
}

#[test]
fn a_group_of_events_opens_it_when_one_opens_the_root() {
    let group = |events: Vec<(i32, String, Variant, u32)>| {
        opens_the_menu(&call(DBUSMENU, "EventGroup", Some((events,).to_variant())))
    };
    assert!(group(vec![event(3, "clicked"), event(ROOT, "opened")]));
    assert!(!group(vec![event(ROOT, "closed"), event(2, "opened")]));
    assert!(!group(vec![]));
}

#[test]
fn about_to_show_the_root_opens_it() {
    let one = |id: i32| opens_the_menu(&call(DBUSMENU, "AboutToShow", Some((id,).to_variant())));
    assert!(one(ROOT));
    assert!(!one(2));
    let group = |ids: Vec<i32>| {
        opens_the_menu(&call(
            DBUSMENU,
            "AboutToShowGroup",
            Some((ids,).to_variant()),
        ))
    };
    assert!(group(vec![5, ROOT]));
    assert!(!group(vec![5, 6]));
    assert!(!group(vec![]));
}

#[test]
fn anything_else_on_the_bus_does_not() {
    let opened = event(ROOT, "opened").to_variant();
    // Another interface, the same member and body.
    assert!(!opens_the_menu(&call(
        "org.kde.StatusNotifierItem",
        "Event",
        Some(opened.clone())
    )));
    // The menu's own interface, read calls.
    assert!(!opens_the_menu(&call(
        DBUSMENU,
        "GetLayout",
        Some((ROOT, -1i32, Vec::<String>::new()).to_variant())
    )));
    // A body of another shape is not read by position.
    assert!(!opens_the_menu(&call(
        DBUSMENU,
        "Event",
        Some(("opened",).to_variant())
    )));
    assert!(!opens_the_menu(&call(
        DBUSMENU,
        "AboutToShow",
        Some((0u32,).to_variant())
    )));
    assert!(!opens_the_menu(&call(DBUSMENU, "AboutToShow", None)));
    // A signal of that name is not a call to the app.
    let signal = DBusMessage::new_signal("/x", DBUSMENU, "Event");
    signal.set_body(&opened);
    assert!(!opens_the_menu(&signal));
}
