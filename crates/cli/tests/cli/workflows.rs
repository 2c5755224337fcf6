//! The GitHub workflows' macOS steps that tests elsewhere cannot reach.

use super::util::*;

const DMG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/lib/dmg.sh");

/// `hdiutil create` on GitHub's macOS runners sometimes fails with
/// "Resource busy": every workflow makes its .dmg through
/// scripts/lib/dmg.sh, which tries again, and none lets tauri make one
/// (`cargo tauri build` without `--bundles app` runs hdiutil once, in its
/// bundle_dmg.sh).
#[test]
fn every_dmg_is_made_by_the_script_that_tries_hdiutil_again() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.github/workflows");
    let mut dmg_steps = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let at = format!("{}:{}: {line}", path.display(), i + 1);
            // What the step runs: not its comments, not its name.
            let code = match line.trim_start().starts_with("- name:") {
                true => "",
                false => line.split('#').next().unwrap_or(""),
            };
            assert!(!code.contains("hdiutil "), "hdiutil outside dmg.sh: {at}");
            if code.contains("cargo tauri build") {
                assert!(code.contains("--bundles app"), "tauri makes a .dmg: {at}");
            }
            dmg_steps += usize::from(code.contains("scripts/lib/dmg.sh"));
        }
    }
    assert!(dmg_steps >= 2, "the CI and the release jobs use dmg.sh");
}

/// dmg.sh over an `hdiutil` that answers "Resource busy" twice: the third
/// try makes the image; one that never stops failing is given up after 5
/// tries, with an error.
#[cfg(unix)]
#[test]
fn dmg_sh_tries_hdiutil_create_again_when_the_runner_is_busy() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("dmg");
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A stand-in hdiutil: counts its calls; fails while the count is under
    // BUSY_FOR, as GitHub's runners print it; then writes the image named
    // last on its command line.
    let hdiutil = bin.join("hdiutil");
    std::fs::write(
        &hdiutil,
        r#"#!/bin/sh
n=$(($(cat "$CALLS" 2>/dev/null || echo 0) + 1)); echo "$n" > "$CALLS"
if [ "$n" -le "$BUSY_FOR" ]; then echo "hdiutil: create failed - Resource busy" >&2; exit 1; fi
for last; do :; done; echo image > "$last"
"#,
    )
    .unwrap();
    std::fs::set_permissions(&hdiutil, std::fs::Permissions::from_mode(0o755)).unwrap();
    let app = dir.join("swapsight.app");
    std::fs::create_dir_all(app.join("Contents")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = |busy_for: u32, dmg: &std::path::Path| {
        let calls = dir.join(&format!("calls-{busy_for}"));
        let out = std::process::Command::new("bash")
            .arg(DMG)
            .arg(&app)
            .arg(dmg)
            .env("PATH", &path)
            .env("CALLS", &calls)
            .env("BUSY_FOR", busy_for.to_string())
            .env("SWAPSIGHT_DMG_PAUSE", "0")
            .output()
            .unwrap();
        let calls: u32 = std::fs::read_to_string(&calls)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (out, calls)
    };
    let dmg = dir.join("out/swapsight.dmg");
    let (out, calls) = run(2, &dmg);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(calls, 3);
    assert_eq!(std::fs::read_to_string(&dmg).unwrap(), "image\n");
    assert!(
        stderr_of(&out).contains("try 2 of 5"),
        "{}",
        stderr_of(&out)
    );
    let (out, calls) = run(99, &dir.join("never.dmg"));
    assert!(!out.status.success());
    assert_eq!(calls, 5);
    assert!(
        stderr_of(&out).contains("failed 5 times"),
        "{}",
        stderr_of(&out)
    );
}
