use super::*;

fn rect(x: f64, y: f64, width: f64, height: f64) -> Rect {
    Rect {
        x,
        y,
        width,
        height,
    }
}

/// A 1512 × 982 pt MacBook screen at 2x: the menu bar is 24 pt (48 px)
/// and the work area starts below it.
fn macbook() -> Screen {
    Screen {
        bounds: rect(0.0, 0.0, 3024.0, 1964.0),
        work: rect(0.0, 48.0, 3024.0, 1916.0),
    }
}

#[test]
fn popover_hangs_below_the_menu_bar_centred_on_the_icon() {
    // A status item at x = 1800 px, as tray-icon reports it: top 0,
    // as high as the menu bar.
    let tray = rect(1800.0, 0.0, 60.0, 48.0);
    let (x, y) = popover_origin(tray, 1520.0, 1240.0, Some(macbook()));
    assert_eq!(y, 48.0, "top edge on the menu bar's bottom, not at 0");
    // Centred: 1830 - 760; it fits, so it stays.
    assert_eq!(x, 1070.0);
    // Without a known screen: the same arithmetic, no clamping.
    let far_right = rect(2400.0, 0.0, 60.0, 48.0);
    assert_eq!(
        popover_origin(far_right, 1520.0, 1240.0, None),
        (2430.0 - 760.0, 48.0)
    );
}

#[test]
fn popover_stays_on_screen_sideways() {
    let near_right = rect(2960.0, 0.0, 60.0, 48.0);
    let (x, _) = popover_origin(near_right, 1520.0, 1240.0, Some(macbook()));
    assert_eq!(x, 3024.0 - 1520.0);
    let near_left = rect(10.0, 0.0, 60.0, 48.0);
    assert_eq!(
        popover_origin(near_left, 1520.0, 1240.0, Some(macbook())).0,
        0.0
    );
    // Wider than the screen: the left edge (the header) stays visible.
    assert_eq!(
        popover_origin(near_right, 4000.0, 1240.0, Some(macbook())).0,
        0.0
    );
}

#[test]
fn popover_clears_a_notched_menu_bar() {
    // A notched MacBook: the menu bar is 37 pt (74 px), taller than a
    // 24 pt status item window.
    let screen = Screen {
        bounds: rect(0.0, 0.0, 3456.0, 2234.0),
        work: rect(0.0, 74.0, 3456.0, 2160.0),
    };
    let tray = rect(2800.0, 0.0, 60.0, 48.0);
    assert_eq!(popover_origin(tray, 1520.0, 1240.0, Some(screen)).1, 74.0);
}

#[test]
fn popover_opens_upwards_from_a_bottom_panel() {
    // A 1920 × 1080 screen with a 40 px panel at the bottom.
    let screen = Screen {
        bounds: rect(0.0, 0.0, 1920.0, 1080.0),
        work: rect(0.0, 0.0, 1920.0, 1040.0),
    };
    let tray = rect(1800.0, 1044.0, 32.0, 32.0);
    let (x, y) = popover_origin(tray, 760.0, 620.0, Some(screen));
    assert_eq!(y, 1044.0 - 620.0);
    assert_eq!(x, 1920.0 - 760.0);
}

#[test]
fn the_screen_is_the_one_holding_the_icon() {
    let left = macbook();
    // A second display to the right, 1x, its menu bar 24 px.
    let right = Screen {
        bounds: rect(3024.0, 0.0, 1920.0, 1080.0),
        work: rect(3024.0, 24.0, 1920.0, 1056.0),
    };
    let screens = [left, right];
    // The menu bar is outside every work area; the bounds decide.
    assert_eq!(
        screen_of(rect(4500.0, 0.0, 30.0, 24.0), &screens),
        Some(right)
    );
    assert_eq!(
        screen_of(rect(2400.0, 0.0, 60.0, 48.0), &screens),
        Some(left)
    );
    assert_eq!(screen_of(rect(-500.0, 0.0, 30.0, 24.0), &screens), None);
    let (x, y) = popover_origin(
        rect(4500.0, 0.0, 30.0, 24.0),
        760.0,
        620.0,
        screen_of(rect(4500.0, 0.0, 30.0, 24.0), &screens),
    );
    // Centred under the icon (4515 - 380), below that screen's menu bar.
    assert_eq!((x, y), (4135.0, 24.0));
    let (x, _) = popover_origin(
        rect(4900.0, 0.0, 30.0, 24.0),
        760.0,
        620.0,
        screen_of(rect(4900.0, 0.0, 30.0, 24.0), &screens),
    );
    assert_eq!(x, 3024.0 + 1920.0 - 760.0, "kept on the right screen");
}

#[test]
fn tauri_rects_convert_to_physical_pixels() {
    let physical = tauri::Rect {
        position: tauri::PhysicalPosition::new(2400.0, 0.0).into(),
        size: tauri::PhysicalSize::new(60.0, 48.0).into(),
    };
    assert_eq!(
        Rect::from_tauri(&physical, 2.0),
        rect(2400.0, 0.0, 60.0, 48.0)
    );
    let logical = tauri::Rect {
        position: tauri::LogicalPosition::new(1200.0, 0.0).into(),
        size: tauri::LogicalSize::new(30.0, 24.0).into(),
    };
    assert_eq!(
        Rect::from_tauri(&logical, 2.0),
        rect(2400.0, 0.0, 60.0, 48.0)
    );
}

#[test]
fn focus_loss_hides_only_a_popover_without_a_dialog() {
    assert!(hide_on_blur(true, 0));
    assert!(!hide_on_blur(true, 1));
    assert!(!hide_on_blur(false, 0));
    assert!(!hide_on_blur(false, 2));
}

#[test]
fn a_dialog_counts_as_open_while_its_guard_lives() {
    let mode = Mode::new(true, KEEP);
    assert!(mode.hides_on_blur());
    let first = mode.dialog();
    let second = mode.dialog();
    assert!(!mode.hides_on_blur());
    drop(first);
    assert!(!mode.hides_on_blur(), "one dialog is still open");
    drop(second);
    assert!(mode.hides_on_blur());
    mode.set_popover(false);
    assert!(!mode.hides_on_blur());
}

#[test]
fn a_close_is_due_only_if_the_popover_stayed_hidden() {
    let mode = Mode::new(true, KEEP);
    let first = mode.hid();
    assert!(mode.close_due(first), "hidden and left alone");
    mode.shown();
    assert!(!mode.close_due(first), "shown again within the keep");
    let second = mode.hid();
    assert!(mode.close_due(second) && !mode.close_due(first));
    let third = mode.hid();
    assert!(
        !mode.close_due(second) && mode.close_due(third),
        "only the last hide's close runs"
    );
}
