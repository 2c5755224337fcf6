//! What every tool shares: the context it reads ([`Tools`]), the form of
//! its answer, and the bounds on what goes out (texts, lists, strings) and
//! what comes in (arguments no schema names, numbers out of range).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Map, Value};
use swapsight::live::Live;

use super::roots::Roots;

/// The text content's length, at most (characters).
pub const MAX_TEXT: usize = 2000;
/// Items kept of any one list in a trace's or a fit's answer.
pub const MAX_ITEMS: usize = 200;
/// Characters kept of any one string in an answer.
pub const MAX_STRING: usize = 4000;

/// What the tools share.
pub struct Tools {
    /// The live session memory_now and why_swapping read, or why it did
    /// not start.
    pub live: Result<Live, String>,
    /// The folders path arguments must resolve inside.
    pub roots: Roots,
    /// The recordings folder recent_runs lists.
    pub recordings: PathBuf,
    /// Whose command lines are shown (`swapsight serve`'s rule).
    pub commands_of: Option<u32>,
    /// How long a live tool waits for the session's first sample.
    pub first_tick_wait: Duration,
}

/// What a tool answers: its short text and its structured content; or why
/// it cannot.
pub type Answer = Result<(String, Value), String>;

/// `s` cut to `max` characters, with `…` where it was cut.
pub fn cap(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Refuses an argument no schema names (the schemas say
/// `additionalProperties: false`).
pub fn only(args: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unknown argument '{}': expected {}",
            cap(&swapsight::text::clean(k), 100),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )),
        None => Ok(()),
    }
}

/// A string argument, when given.
pub fn string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("'{key}' must be a string")),
    }
}

/// A whole-number argument from `min` to `max`, else `default`.
pub fn count(
    args: &Map<String, Value>,
    key: &str,
    (min, max, default): (u64, u64, u64),
) -> Result<u64, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| format!("'{key}' must be a whole number from {min} to {max}")),
    }
}

/// `value` with every list cut to [`MAX_ITEMS`] and every string to
/// [`MAX_STRING`] characters; when anything was cut, a top-level
/// `truncated` says how much.
pub fn bounded(mut value: Value) -> Value {
    let mut cuts = (0u64, 0u64);
    bound(&mut value, &mut cuts);
    if cuts != (0, 0) {
        if let Value::Object(m) = &mut value {
            m.insert(
                "truncated".into(),
                json!({"lists": cuts.0, "strings": cuts.1,
                       "max_items": MAX_ITEMS, "max_string_chars": MAX_STRING}),
            );
        }
    }
    value
}

fn bound(v: &mut Value, cuts: &mut (u64, u64)) {
    match v {
        Value::Array(a) => {
            if a.len() > MAX_ITEMS {
                a.truncate(MAX_ITEMS);
                cuts.0 += 1;
            }
            a.iter_mut().for_each(|x| bound(x, cuts));
        }
        Value::Object(m) => m.values_mut().for_each(|x| bound(x, cuts)),
        Value::String(s) if s.chars().count() > MAX_STRING => {
            *s = cap(s, MAX_STRING);
            cuts.1 += 1;
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
