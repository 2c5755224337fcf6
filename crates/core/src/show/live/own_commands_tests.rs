use std::path::{Path, PathBuf};
use std::time::Duration;

use super::keep_commands_in_jsonl;
use crate::probe::scripted::ScriptedProbe;
use crate::show::live::{Live, LiveConfig};
use crate::step::sampler::SamplerConfig;

fn session(dir: &Path, commands_of: Option<u32>) -> Live {
    let cfg = LiveConfig {
        sampler: SamplerConfig {
            interval: Duration::from_millis(20),
            history: 2,
            ..SamplerConfig::default()
        },
        recordings_dir: dir.to_path_buf(),
        commands_of,
        ..LiveConfig::default()
    };
    Live::start(Box::new(ScriptedProbe::two_users()), cfg).unwrap()
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swapsight-own-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Records a few samples; the recording's name.
fn record(l: &Live) -> String {
    l.wait_snapshot(Duration::from_secs(2)).unwrap();
    l.start_recording(None).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let (path, _) = l.stop_recording().unwrap();
    crate::record::recordings::file_name(&path)
}

fn json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn another_users_command_line_stays_out_of_every_view() {
    let dir = tmp("views");
    let l = session(&dir, Some(1000));
    let updates = l.subscribe(100);
    let name = record(&l);
    let seen: Vec<String> = updates.try_iter().map(|u| json(&*u)).collect();
    assert!(!seen.is_empty());
    let file = std::fs::read_to_string(dir.join(&name)).unwrap();
    let answers = [
        ("snapshot", json(&l.snapshot().unwrap())),
        ("process 2", json(&l.process(2).unwrap())),
        ("replay", json(&l.replay_recording(&name).unwrap())),
        ("report", json(&l.report_recording(&name).unwrap())),
        ("recording", file),
    ];
    let updates = seen.iter().map(|u| ("update", u.clone()));
    for (what, text) in answers.iter().cloned().chain(updates) {
        assert!(!text.contains("hunter"), "{what}: {text}");
    }
    for (what, text) in answers.iter().filter(|(what, _)| *what != "process 2") {
        assert!(text.contains("own --token=mine"), "{what}: {text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_read_back_keeps_the_rule_and_the_app_shows_all() {
    let dir = tmp("read");
    // The app's session: every command line the OS shows its user.
    let app = session(&dir, None);
    let name = record(&app);
    assert!(json(&app.snapshot().unwrap()).contains("--password=hunter2"));
    drop(app);
    let text = std::fs::read_to_string(dir.join(&name)).unwrap();
    assert!(
        text.contains(r#""cmdline":"db --password=hunter2","uid":1001"#),
        "{text}"
    );
    // A server reading that recording keeps to its user's command lines.
    let served = session(&dir, Some(1000));
    for text in [
        json(&served.replay_recording(&name).unwrap()),
        json(&served.report_recording(&name).unwrap()),
    ] {
        assert!(!text.contains("hunter"), "{text}");
        assert!(text.contains("own --token=mine"), "{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_exported_as_it_is_keeps_the_rule() {
    let uid = 1000;
    let text = concat!(
        "{\"type\":\"header\",\"schema\":1}\n",
        "{\"type\":\"sample\",\"t_ms\":0,\"procs\":[",
        "{\"pid\":1,\"cmdline\":\"own --token=mine\",\"uid\":1000},",
        "{\"pid\":2,\"cmdline\":\"db --password=hunter2\",\"uid\":1001},",
        "{\"pid\":3,\"cmdline\":\"old --password=hunter3\"}]}\n",
        "{\"type\":\"sample\",\"t_ms\":500,\"procs\":[{\"pid\":1,\"cmdline\":\"own --token=mine\",\"uid\":1000}]}\n",
        "{\"type\":\"sample\",\"procs\":[{\"pid\":2,\"cmdl\\u0069ne\":\"db --password=hunter2\"}]}\n",
        "{\"type\":\"sample\",\"t_ms\":1000,\"procs\":[{\"pid\":2,\"cmdline\":\"db --pass",
    );
    let out = String::from_utf8(keep_commands_in_jsonl(text.as_bytes(), uid)).unwrap();
    assert!(!out.contains("hunter"), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "the cut line is left out: {out}");
    // Lines without another's command line stay as they were.
    assert_eq!(lines[0], text.lines().next().unwrap());
    assert_eq!(lines[2], text.lines().nth(2).unwrap());
    let first: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(first["procs"][0]["cmdline"], "own --token=mine");
    assert_eq!(first["procs"][1]["pid"], 2);
    assert!(first["procs"][1].get("cmdline").is_none());
}
