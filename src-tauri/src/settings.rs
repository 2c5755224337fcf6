//! The app's settings file, `settings.json` in its config folder
//! (`~/Library/Application Support/dev.swapsight.monitor/` on macOS,
//! `$XDG_CONFIG_HOME/dev.swapsight.monitor/` or
//! `~/.config/dev.swapsight.monitor/` on Linux). It holds one setting
//! today, the push to Prometheus, off by default:
//!
//! ```json
//! {"push": {"enabled": false, "url": "https://mimir.example/api/v1/push",
//!           "interval": "15s", "labels": {"site": "home"},
//!           "auth_file": "/Users/me/.config/swapsight/push-auth", "ca": null}}
//! ```
//!
//! Credentials only by the path of a file (`auth_file`, one line: `bearer
//! TOKEN` or `basic USER:PASSWORD`): a settings file is read by backup
//! tools and pasted into bug reports. The app writes `enabled` back when
//! the tray's item toggles the push, leaving the rest of the file as it
//! was; a file it cannot read is never written over.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// The settings file's name in the config folder.
pub const FILE: &str = "settings.json";

/// The longest settings file read: a few hundred bytes is usual.
const MAX_FILE: u64 = 64 * 1024;

/// Keys that would put a secret in the file, refused with the way out.
const SECRET_KEYS: [&str; 4] = ["token", "password", "bearer", "basic"];

/// The `push` object as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PushFile {
    #[serde(default)]
    enabled: bool,
    url: Option<String>,
    interval: Option<String>,
    queue: Option<usize>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    auth_file: Option<PathBuf>,
    ca: Option<PathBuf>,
}

/// The push as the settings file says it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Push {
    /// Whether it is to run.
    pub enabled: bool,
    /// What to push, checked; `None` when the file names no URL.
    pub settings: Option<swapsight_push::Settings>,
}

/// The push setting of the file at `path`: off when there is no file; an
/// error in one line (the file's name, where, what) when it cannot be
/// read or says something that is not a push.
pub fn read_push(path: &Path) -> Result<Push, String> {
    let shown = path.display();
    let Some(text) = read_small(path)? else {
        return Ok(Push::default());
    };
    let root: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    let Some(push) = root.get("push") else {
        return Ok(Push::default());
    };
    push_of(push, path.parent().unwrap_or(Path::new(""))).map_err(|why| format!("{shown}: {why}"))
}

/// The `push` object checked; relative file paths are taken from `dir`,
/// the settings file's folder.
fn push_of(push: &Value, dir: &Path) -> Result<Push, String> {
    if let Some(key) = push
        .as_object()
        .and_then(|o| SECRET_KEYS.iter().find(|k| o.contains_key(**k)))
    {
        return Err(format!(
            "push.{key}: credentials do not go in the settings; put them in a file (one line: \
             `bearer TOKEN` or `basic USER:PASSWORD`) and name it in push.auth_file"
        ));
    }
    let file: PushFile = serde_json::from_value(push.clone()).map_err(|e| format!("push: {e}"))?;
    let Some(url) = file.url.as_deref().filter(|u| !u.trim().is_empty()) else {
        if file.enabled {
            return Err("push is enabled but has no url (push.url)".into());
        }
        return Ok(Push::default());
    };
    let mut s = swapsight_push::Settings::new(
        swapsight_push::url(url).map_err(|why| format!("push.url: {why}"))?,
    );
    if let Some(text) = &file.interval {
        s.interval = interval(text).map_err(|why| format!("push.interval {text:?}: {why}"))?;
    }
    if let Some(n) = file.queue {
        s.queue = swapsight_push::queue_samples(n).map_err(|why| format!("push.queue: {why}"))?;
    }
    s.labels = file
        .labels
        .iter()
        .map(|(k, v)| swapsight_push::label_pair(k, v).map_err(|why| format!("push.labels: {why}")))
        .collect::<Result<_, _>>()?;
    s.auth_file = file.auth_file.map(|p| dir.join(p));
    s.ca = file.ca.map(|p| dir.join(p));
    Ok(Push {
        enabled: file.enabled,
        settings: Some(s),
    })
}

fn interval(text: &str) -> Result<Duration, String> {
    let d = swapsight::units::parse_duration(text).map_err(|e| e.why)?;
    swapsight_push::interval(d)
}

/// The file's text; `None` when there is none.
fn read_small(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let shown = path.display();
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let mut text = String::new();
    file.take(MAX_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if text.len() as u64 > MAX_FILE {
        return Err(format!("{shown} is larger than {MAX_FILE} bytes"));
    }
    Ok(Some(text))
}

/// Sets `push.enabled` in the file at `path`, the rest as it was (a file
/// that is not there yet is made, its folder too). Written whole or not
/// at all, never through another user's link (`outpath`); a file that is
/// not JSON is left alone.
pub fn write_push_enabled(path: &Path, enabled: bool) -> Result<(), String> {
    let shown = path.display();
    let mut root = match read_small(path)? {
        Some(text) => serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?,
        None => Value::Object(Default::default()),
    };
    let Some(obj) = root.as_object_mut() else {
        return Err(format!("{shown}: not a JSON object"));
    };
    let push = obj
        .entry("push")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(push) = push.as_object_mut() else {
        return Err(format!("{shown}: push is not an object"));
    };
    push.insert("enabled".into(), Value::Bool(enabled));
    let mut text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())?;
    text.push('\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    swapsight::outpath::locate(path)
        .and_then(|place| place.replace_with(|out| out.write_all(text.as_bytes())))
        .map_err(|e| format!("cannot write {shown}: {e}"))
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
