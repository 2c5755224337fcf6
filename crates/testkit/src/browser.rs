//! The headless browser the UI tests drive.

use std::path::{Path, PathBuf};

/// Where the test browsers are looked for, in order, after `$CHROMIUM`:
/// Debian's Chromium, then Google Chrome (what GitHub's Ubuntu runners
/// ship), then Ubuntu's `chromium-browser`.
pub const BROWSERS: [&str; 4] = [
    "/usr/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/chromium-browser",
];

/// A Chromium-family browser that runs headless: `$CHROMIUM` when set, else
/// the first of [`BROWSERS`] that is a real browser. Ubuntu 24.04's
/// `chromium` and `chromium-browser` packages are transition stubs for a
/// snap — a shell script that asks for snapd, which does not run on a CI
/// runner — so a script that mentions `snap` is skipped.
pub fn browser() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(path));
    }
    BROWSERS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file() && !is_snap_stub(p))
        .ok_or_else(|| {
            format!(
                "no Chromium or Google Chrome at {} (or set CHROMIUM)",
                BROWSERS.join(", ")
            )
        })
}

/// A launcher script that hands over to a snap, not a browser.
pub(crate) fn is_snap_stub(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(64 * 1024).read_to_end(&mut head));
    read.is_ok() && head.starts_with(b"#!") && head.windows(4).any(|w| w == b"snap")
}
