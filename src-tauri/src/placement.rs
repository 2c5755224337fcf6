//! Where the popover goes: pure geometry over the tray icon's rect and the
//! screens (their bounds, work areas and scales), in physical pixels and
//! points. No window is touched here, so every rule is tested on plain
//! numbers (`placement_tests.rs`); `window.rs` asks the OS for the figures.

/// A rectangle in physical pixels, in screen coordinates (y grows down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Rect {
    /// From Tauri's rect (tray events give physical units; a logical one is
    /// scaled by `scale`).
    pub fn from_tauri(r: &tauri::Rect, scale: f64) -> Rect {
        let p = r.position.to_physical::<f64>(scale);
        let s = r.size.to_physical::<f64>(scale);
        Rect {
            x: p.x,
            y: p.y,
            width: s.width,
            height: s.height,
        }
    }

    fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x && x < self.x + self.width && y >= self.y && y < self.y + self.height
    }

    fn centre(&self) -> (f64, f64) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }
}

/// A monitor: its whole area and its work area (without the menu bar, the
/// Dock or a panel), physical pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Screen {
    pub bounds: Rect,
    pub work: Rect,
}

impl Screen {
    fn from_monitor(m: &tauri::Monitor) -> Screen {
        let (p, s, a) = (m.position(), m.size(), m.work_area());
        Screen {
            bounds: Rect {
                x: f64::from(p.x),
                y: f64::from(p.y),
                width: f64::from(s.width),
                height: f64::from(s.height),
            },
            work: Rect {
                x: f64::from(a.position.x),
                y: f64::from(a.position.y),
                width: f64::from(a.size.width),
                height: f64::from(a.size.height),
            },
        }
    }
}

impl Rect {
    /// This rectangle in points of a screen with `scale` physical pixels
    /// per point.
    pub fn in_points(self, scale: f64) -> Rect {
        let s = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        Rect {
            x: self.x / s,
            y: self.y / s,
            width: self.width / s,
            height: self.height / s,
        }
    }
}

/// A monitor as the OS gives it: its areas in physical pixels, and how many
/// of those a point holds on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Monitor {
    pub screen: Screen,
    pub scale: f64,
}

impl Monitor {
    pub(crate) fn of(m: &tauri::Monitor) -> Monitor {
        Monitor {
            screen: Screen::from_monitor(m),
            scale: m.scale_factor(),
        }
    }

    /// The monitor's areas in points.
    pub fn in_points(self) -> Screen {
        Screen {
            bounds: self.screen.bounds.in_points(self.scale),
            work: self.screen.work.in_points(self.scale),
        }
    }
}

/// The tray icon and its screen, both in points. Physical figures do not
/// add up across screens of different scales: the tray rect is points × the
/// status item's screen scale (tray-icon), each monitor's position points ×
/// its own scale (tao). With a 2× built-in display at (0, 0) and a 1×
/// external one to its right at 1512 points, the built-in spans physical
/// x 0–3024 and the external starts at physical 1512: the rects overlap, and
/// an icon at physical 2900 may be on either. The pointer, in points (it has
/// just clicked the icon), says which screen the icon is on; without it the
/// first screen whose area, in points, holds the icon taken in that screen's
/// scale is used.
pub fn tray_in_points(
    tray: Rect,
    monitors: &[Monitor],
    pointer: Option<(f64, f64)>,
) -> Option<(Rect, Screen)> {
    let on = |m: &Monitor| (tray.in_points(m.scale), m.in_points());
    if let Some((px, py)) = pointer {
        if let Some(m) = monitors
            .iter()
            .find(|m| m.in_points().bounds.contains(px, py))
        {
            return Some(on(m));
        }
    }
    monitors.iter().map(on).find(|(icon, screen)| {
        let (cx, cy) = icon.centre();
        screen.bounds.contains(cx, cy)
    })
}

/// Top-left corner of the popover, in points (a `LogicalPosition`, which
/// tao places in global screen points on macOS whatever the window's own
/// scale): [`popover_origin`] on the icon's screen, all in points.
/// `fallback_scale` converts the icon when no screen holds it.
pub fn popover_position(
    tray: Rect,
    (width, height): (f64, f64),
    monitors: &[Monitor],
    pointer: Option<(f64, f64)>,
    fallback_scale: f64,
) -> (f64, f64) {
    match tray_in_points(tray, monitors, pointer) {
        Some((icon, screen)) => popover_origin(icon, width, height, Some(screen)),
        None => popover_origin(tray.in_points(fallback_scale), width, height, None),
    }
}

/// Top-left corner of a `width` × `height` popover for a tray icon at
/// `tray`, on `screen` (physical pixels).
///
/// Horizontally centred on the icon; its top edge on the icon's bottom edge
/// (`tray.y + tray.height`), i.e. just below the macOS menu bar — and never
/// above the work area's top, which on a Mac with a notch is lower than the
/// status item's bottom. A tray in the lower half of its screen (a Windows
/// or Linux panel at the bottom) opens the popover upwards instead. Kept
/// inside the work area sideways. (The positioner's `TrayCenter` puts the
/// window's bottom at the icon's top and, on macOS, where that is off
/// screen, its top at the icon's top: over the menu bar — tray-icon#149.)
pub fn popover_origin(tray: Rect, width: f64, height: f64, screen: Option<Screen>) -> (f64, f64) {
    let mut x = tray.x + tray.width / 2.0 - width / 2.0;
    let below = tray.y + tray.height;
    let Some(Screen { bounds, work: s }) = screen else {
        return (x, below);
    };
    let upwards = tray.centre().1 > bounds.y + bounds.height / 2.0;
    let y = if upwards {
        (tray.y - height).max(s.y)
    } else {
        below.max(s.y)
    };
    // Right edge first, then the left: a popover wider than the screen
    // keeps its left edge (and its header) visible.
    x = x.min(s.x + s.width - width).max(s.x);
    (x, y)
}

#[cfg(test)]
#[path = "placement_tests.rs"]
mod tests;
