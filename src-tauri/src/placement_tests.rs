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
/// The screen holding the icon among screens of one scale.
fn screen_of(tray: Rect, screens: &[Screen]) -> Option<Screen> {
    let monitors: Vec<Monitor> = screens
        .iter()
        .map(|&screen| Monitor { screen, scale: 1.0 })
        .collect();
    tray_in_points(tray, &monitors, None).map(|(_, s)| s)
}

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

/// A 14" MacBook Pro (1512 × 982 points at 2×, notch: work area from 37
/// points) and a 1080p display (1×) to its right, as tao reports them:
/// positions and sizes in each one's own physical pixels.
fn mixed_scales() -> [Monitor; 2] {
    [
        Monitor {
            screen: Screen {
                bounds: rect(0.0, 0.0, 3024.0, 1964.0),
                work: rect(0.0, 74.0, 3024.0, 1890.0),
            },
            scale: 2.0,
        },
        Monitor {
            screen: Screen {
                bounds: rect(1512.0, 0.0, 1920.0, 1080.0),
                work: rect(1512.0, 24.0, 1920.0, 1056.0),
            },
            scale: 1.0,
        },
    ]
}

#[test]
fn with_mixed_scales_the_popover_opens_on_the_screen_of_the_clicked_icon() {
    // Regression: physical rects of a 2× and a 1× screen overlap, and the
    // popover of an icon on the external display opened on the built-in one.
    let monitors = mixed_scales();
    // The icon on the external display at 2900 points: tray-icon gives
    // points × that screen's scale (1×); the pointer is on it.
    let tray = rect(2900.0, 0.0, 30.0, 24.0);
    let (icon, screen) = tray_in_points(tray, &monitors, Some((2915.0, 12.0))).unwrap();
    assert_eq!(screen.bounds, rect(1512.0, 0.0, 1920.0, 1080.0));
    assert_eq!(icon, tray, "1× physical is points");
    let (x, y) = popover_position(tray, (380.0, 310.0), &monitors, Some((2915.0, 12.0)), 2.0);
    assert_eq!(
        (x, y),
        (2915.0 - 190.0, 24.0),
        "under the icon, below that menu bar"
    );
    // The same icon on the built-in display, at 1400 points: physical 2800.
    let tray = rect(2800.0, 0.0, 60.0, 48.0);
    let (x, y) = popover_position(tray, (380.0, 310.0), &monitors, Some((1415.0, 12.0)), 2.0);
    assert_eq!(y, 37.0, "below the notch's menu bar, in points");
    assert_eq!(
        x,
        1512.0 - 380.0,
        "kept on the built-in display's right edge"
    );
}

#[test]
fn without_the_pointer_the_first_screen_holding_the_icon_in_its_own_scale_wins() {
    let monitors = mixed_scales();
    // Physical 3300 is past the built-in's 1512 points as 2×; as 1× points
    // it is on the external display.
    let far = rect(3300.0, 0.0, 30.0, 24.0);
    let (_, screen) = tray_in_points(far, &monitors, None).unwrap();
    assert_eq!(screen.bounds.x, 1512.0);
    // A pointer off every screen is ignored.
    let (_, screen) = tray_in_points(far, &monitors, Some((-50.0, -50.0))).unwrap();
    assert_eq!(screen.bounds.x, 1512.0);
    // No screen at all: the icon in the fallback scale, unclamped.
    let (x, y) = popover_position(rect(200.0, 0.0, 40.0, 40.0), (100.0, 50.0), &[], None, 2.0);
    assert_eq!((x, y), (110.0 - 50.0, 20.0));
}
