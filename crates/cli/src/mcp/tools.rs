//! The tools: each one's name, description and input and output schemas
//! (`tools/list`), and the call that answers it (`tools/call`). Every tool
//! reads only: none starts, stops or signals a process or writes a file.
//! An answer is structured content (what the output schema declares) and
//! a short text; a tool that cannot answer returns `isError` with the
//! reason, which names the bad argument.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Map, Value};
use swapsight::live::Live;

use super::roots::Roots;
use super::{files, now};

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

/// A call that is no tool's.
#[derive(Debug)]
pub enum CallError {
    UnknownTool,
}

/// What a tool answers: its short text and its structured content; or why
/// it cannot.
pub type Answer = Result<(String, Value), String>;

type Call = fn(&Tools, &Map<String, Value>) -> Answer;

/// A tool: name, description, input and output schemas, and its call.
struct Tool {
    name: &'static str,
    description: &'static str,
    input: fn() -> Value,
    output: fn() -> Value,
    call: Call,
}

const TOOLS: [Tool; 6] = [
    Tool {
        name: "memory_now",
        description: "This machine's memory now: free, used, swap, pressure, GPU and wired \
figures, and the largest processes with their state (fits, overflow, false-fit, hidden-memory) \
and the evidence for it. Live, from swapsight's sampler.",
        input: now::memory_now_input,
        output: now::memory_now_output,
        call: now::memory_now,
    },
    Tool {
        name: "why_swapping",
        description: "Why this machine is swapping, now: the verdict (false fit: swap climbing \
while footprints leave room; overflow; hidden memory), the processes flagged with their \
evidence, who holds the memory no footprint explains (the GPU, an allocator's cache), and the \
forecast (e.g. swap budget in ~40 s).",
        input: now::why_swapping_input,
        output: now::why_swapping_output,
        call: now::why_swapping,
    },
    Tool {
        name: "fit",
        description: "Whether a model will fit in memory before it is loaded: a model file or \
folder (safetensors, gguf, …) or a size like 40G, against each bound of this machine (physical \
memory, free memory now, the GPU's limit, a cgroup's), as `swapsight fit --json` answers.",
        input: files::fit_input,
        output: files::permissive_output,
        call: files::fit,
    },
    Tool {
        name: "report",
        description: "The verdict on a recorded run (a trace written by swapsight record): \
fits, overflow, false-fit or hidden-memory, per process and per phase, as \
`swapsight report --json` answers.",
        input: files::report_input,
        output: files::permissive_output,
        call: files::report,
    },
    Tool {
        name: "compare",
        description: "Recorded runs side by side (2 to 20 traces): duration, peak footprint, \
swap growth, minimum free memory and verdict of each, as `swapsight compare --format json` \
answers.",
        input: files::compare_input,
        output: files::compare_output,
        call: files::compare,
    },
    Tool {
        name: "recent_runs",
        description: "The recordings in swapsight's recordings folder, newest first, with the \
path to pass to report or compare.",
        input: files::recent_runs_input,
        output: files::recent_runs_output,
        call: files::recent_runs,
    },
];

impl Tools {
    /// Every tool as `tools/list` shows it.
    pub fn list() -> Vec<Value> {
        TOOLS
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": (t.input)(),
                    "outputSchema": (t.output)(),
                    "annotations": {
                        "readOnlyHint": true,
                        "destructiveHint": false,
                        "idempotentHint": true,
                        "openWorldHint": false,
                    },
                })
            })
            .collect()
    }

    /// Calls tool `name`: its result, an `isError` one when it cannot answer.
    pub fn call(&self, name: &str, args: &Map<String, Value>) -> Result<Value, CallError> {
        let tool = TOOLS
            .iter()
            .find(|t| t.name == name)
            .ok_or(CallError::UnknownTool)?;
        Ok(match (tool.call)(self, args) {
            Ok((text, structured)) => json!({
                "content": [{"type": "text", "text": cap(&text, MAX_TEXT)}],
                "structuredContent": structured,
                "isError": false,
            }),
            Err(why) => json!({
                "content": [{"type": "text", "text": cap(&why, MAX_TEXT)}],
                "isError": true,
            }),
        })
    }
}

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
#[path = "tools_tests.rs"]
mod tests;
