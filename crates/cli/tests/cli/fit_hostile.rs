//! `swapsight fit` on input made to mislead or flood it: number words and
//! negative sizes, escape sequences, an index naming thousands of missing
//! shards, a FIFO named config.json.

use super::super::util::*;
use super::{fit, hf_folder, index, SHARDS};

#[test]
fn a_number_that_is_not_a_size_is_a_bad_argument_not_a_missing_path() {
    for word in ["NaN", "inf", "-Infinity", "-5G", "+3G"] {
        // After `--` comes a command to run (fit -- CMD): a size that
        // starts with a sign is given as it is.
        let out = swapsight().args(["fit", word]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{word}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).starts_with("swapsight: invalid size '"),
            "{word}: {}",
            stderr_of(&out)
        );
    }
}

#[test]
fn escape_sequences_in_what_was_given_are_not_printed() {
    for args in [
        vec!["fit", "4G", "--from", "/no/such\x1b[31mtrace"],
        vec!["fit", "8\x1b[2JG"],
        vec!["fit", "/no/such\x1b]0;title\x07model"],
    ] {
        let out = swapsight().args(&args).output().unwrap();
        let err = stderr_of(&out);
        assert!(matches!(out.status.code(), Some(3 | 4)), "{args:?}: {err}");
        assert!(
            !err.contains('\x1b') && !err.contains('\x07'),
            "{args:?}: {err:?}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn thousands_of_missing_shards_are_one_short_line() {
    let dir = TempDir::new("fit-missing-flood");
    hf_folder(dir.path());
    let mut names: Vec<String> = (0..20_000)
        .map(|i| format!("gone-{i:05}.safetensors"))
        .collect();
    names.extend(SHARDS.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    std::fs::write(dir.join("model.safetensors.index.json"), index(&refs)).unwrap();
    let out = fit(&[dir.path().to_str().unwrap()]);
    let text = stdout_of(&out);
    let line = text.lines().find(|l| l.contains("missing:")).unwrap();
    assert!(line.len() < 400, "{}", line.len());
    assert!(
        line.contains(" and 19990 more (--json lists them)"),
        "{line}"
    );
    assert!(text.len() < 8000, "{}", text.len());
}

#[cfg(unix)]
#[test]
fn a_fifo_named_config_json_is_a_note_not_a_hang() {
    let dir = TempDir::new("fit-fifo-config");
    hf_folder(dir.path());
    std::fs::remove_file(dir.join("config.json")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("config.json"))
        .status()
        .unwrap();
    assert!(status.success());
    let mut child = swapsight()
        .arg("fit")
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("fit hung on a FIFO named config.json");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text = stdout_of(&out);
    assert!(
        text.contains("config.json not read (a FIFO, not a file)"),
        "{text}"
    );
}
