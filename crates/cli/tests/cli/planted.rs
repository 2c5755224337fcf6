//! Root writing where another user has been first: links planted in a
//! sticky folder, another user's `XDG_RUNTIME_DIR`. The other user is real
//! (`nobody`, through `setpriv`); these run as root, and must in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::util::*;

/// A command run as `nobody`.
fn as_nobody(program: &str) -> Command {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--",
        program,
    ]);
    c
}

/// A world-writable sticky folder (like /tmp) in the test's own dir, or
/// `None` (a note) when not root outside CI.
fn sticky(tag: &str) -> Option<(TempDir, PathBuf)> {
    skip_unless_ci(
        tag,
        (!is_root()).then(|| "needs root to act as two users".into()),
    )?;
    let dir = TempDir::new(tag);
    use std::os::unix::fs::PermissionsExt;
    // The way to it must be walkable by `nobody`.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    Some((dir, shared))
}

fn plant(target: &Path, at: &Path) {
    let out = as_nobody("ln")
        .arg("-s")
        .arg(target)
        .arg(at)
        .output()
        .unwrap();
    assert!(out.status.success(), "ln as nobody: {}", stderr_of(&out));
}

#[test]
fn no_output_is_ever_written_through_another_users_link() {
    // Regression: as another user, `ln -s /etc/passwd /tmp/report.csv`; as
    // root, `export -o /tmp/report.csv` replaced /etc/passwd, whatever
    // fs.protected_symlinks said. A decoy stands in for /etc/passwd.
    let Some((dir, shared)) = sticky("planted-outputs") else {
        return;
    };
    let decoy = dir.join("passwd");
    std::fs::write(&decoy, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let trace = dir.join("run.jsonl");
    std::fs::write(
        &trace,
        swapsight::synth::to_jsonl(&swapsight::synth::seed_offload()),
    )
    .unwrap();
    let runs: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        (
            "report.csv",
            vec!["export".into(), trace.clone().into(), "-o".into()],
        ),
        (
            "plot.svg",
            vec!["plot".into(), trace.clone().into(), "-o".into()],
        ),
        (
            "runs.png",
            vec![
                "compare".into(),
                trace.clone().into(),
                trace.clone().into(),
                "--plot".into(),
            ],
        ),
        (
            "rec.jsonl",
            vec![
                "record".into(),
                "--interval".into(),
                "100ms".into(),
                "-o".into(),
            ],
        ),
        (
            "guard.jsonl",
            vec![
                "guard".into(),
                "--swap-budget".into(),
                "8G".into(),
                "-o".into(),
            ],
        ),
    ];
    for (name, args) in runs {
        let link = shared.join(name);
        plant(&decoy, &link);
        let mut cmd = swapsight();
        cmd.args(&args).arg(&link);
        if matches!(args[0].to_str(), Some("record" | "guard")) {
            cmd.args(["--", "true"]);
        }
        let out = cmd.output().unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("symbolic link owned by uid 65534"),
            "{name}: says why: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
        assert_eq!(
            std::fs::read_to_string(&decoy).unwrap(),
            "root:x:0:0:root:/root:/bin/bash\n",
            "{name}: the link's target is untouched"
        );
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name}: the link is left as it was"
        );
    }
}

#[test]
fn root_under_another_users_runtime_dir_keeps_its_marks_to_itself() {
    // Regression: root after `su` without `-` kept the other user's
    // XDG_RUNTIME_DIR, and worked by path inside a folder that user could
    // swap: root's trace got marks holding /etc/shadow lines.
    let Some((dir, _shared)) = sticky("planted-runtime") else {
        return;
    };
    let theirs = dir.join("run-user-65534");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let trace = dir.join("t.jsonl");
    let seen = dir.join("mark-path");
    let out = swapsight()
        .env("XDG_RUNTIME_DIR", &theirs)
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo \"$SWAPSIGHT_MARK\" > {}; echo load > \"$SWAPSIGHT_MARK\"; sleep 0.5",
            seen.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let mark_path = std::fs::read_to_string(&seen).unwrap();
    assert!(
        !mark_path.starts_with(theirs.to_str().unwrap()),
        "the mark path is not in their folder: {mark_path}"
    );
    assert!(
        std::fs::read_dir(&theirs).unwrap().next().is_none(),
        "nothing written there"
    );
    let t = swapsight::trace::read(&trace).unwrap();
    assert_eq!(t.marks.len(), 1, "marks still work: {:?}", t.marks);
}

#[test]
fn a_runtime_dir_planted_by_another_user_does_not_turn_marks_off() {
    // Regression: another user could pre-create /tmp/swapsight-UID and turn
    // the marks of UID off. Here root plants it for `nobody`, who then
    // records and marks through the private fallback.
    let Some((dir, _shared)) = sticky("planted-tmp") else {
        return;
    };
    let planted = Path::new("/tmp/swapsight-65534");
    let fallback = Path::new("/tmp/swapsight-65534.1");
    // Only `nobody`'s runtime folders: any leftover of theirs goes first.
    let _ = std::fs::remove_dir_all(planted);
    let _ = std::fs::remove_dir_all(fallback);
    std::fs::create_dir(planted).unwrap();
    let home = dir.join("nobody");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    let trace = home.join("t.jsonl");
    let mut rec = as_nobody(env!("CARGO_BIN_EXE_swapsight"))
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("TMPDIR")
        .args(["record", "--interval", "100ms", "-o"])
        .arg(&trace)
        .args(["--", "sleep", "2"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    let out = as_nobody(env!("CARGO_BIN_EXE_swapsight"))
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("TMPDIR")
        .args(["mark", "decode"])
        .output()
        .unwrap();
    let status = wait_with_deadline(&mut rec, std::time::Duration::from_secs(10));
    let used_fallback = std::fs::symlink_metadata(fallback).is_ok();
    let _ = std::fs::remove_dir(planted);
    let _ = std::fs::remove_dir_all(fallback);
    assert!(
        used_fallback,
        "nobody's marks went to {}",
        fallback.display()
    );
    assert!(out.status.success(), "mark as nobody: {}", stderr_of(&out));
    assert!(status.success());
    let t = swapsight::trace::read(&trace).unwrap();
    assert_eq!(t.marks.len(), 1, "{:?}", t.marks);
}
