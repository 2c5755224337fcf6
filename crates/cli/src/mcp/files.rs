//! The tools that read files: fit (a model's files, a past run), report
//! and compare (traces), recent_runs (the recordings folder). Each path
//! argument must resolve inside an allowed root ([`super::roots`]); each
//! answer is what the matching subcommand's JSON says, read the same way
//! (`crate::fit`, `crate::compare`, `swapsight::report`), with its lists
//! and strings bounded ([`bounded`]).

use std::ffi::OsString;
use std::path::PathBuf;

use serde_json::{json, Map, Value};
use swapsight::compare::{compare as compare_runs, TableFormat, MAX_RUNS, MIN_RUNS};
use swapsight::recordings;

use super::answer::{bounded, cap, count, only, string, Answer, Tools, MAX_ITEMS, MAX_TEXT};

/// Recordings recent_runs lists by default, and at most.
const RUNS: (u64, u64, u64) = (1, MAX_ITEMS as u64, 20);

/// The answer's schema where another part of swapsight owns its fields
/// (fit's, report's JSON): an object, as that subcommand's `--json` has it.
pub fn permissive_output() -> Value {
    json!({"type": "object", "additionalProperties": true})
}

pub fn fit_input() -> Value {
    json!({
        "type": "object",
        "required": ["model"],
        "properties": {
            "model": {"type": "string", "description": "A model file or folder (inside the \
    allowed roots), or a size like 40G, 512MiB or bytes"},
            "from": {"type": "string", "description": "A past run of the same pipeline (a \
    trace): its peak footprint is the need where it is more than the weights"},
            "context": {"type": ["integer", "string"], "description": "Tokens per sequence to \
    judge at (8192, or \"8k\"); without it, a short context and the largest that fits under \
    each bound"},
            "parallel": {"type": "integer", "minimum": 1, "maximum": 65536,
    "description": "Sequences held at once"},
            "kv_dtype": {"type": "string", "description": "The KV cache's type: f16, bf16, f32, \
    q8_0, q4_0, mlx-q8, mlx-q4[:GROUP]"},
            "runtime": {"type": "string", "enum": ["mlx", "llama.cpp", "torch"]},
            "no_history": {"type": "boolean", "description": "The estimate from the files \
    alone: without the ratio past runs of `swapsight fit MODEL -- CMD` taught (the command \
    line's --no-history); applied unless true, with a note"},
        },
        "additionalProperties": false,
    })
}

fn trace_property() -> Value {
    json!({"type": "string", "description": "A trace (JSON Lines, written by swapsight \
record), inside the allowed roots; recent_runs lists the recordings folder's"})
}

pub fn report_input() -> Value {
    json!({
        "type": "object",
        "required": ["trace"],
        "properties": {"trace": trace_property()},
        "additionalProperties": false,
    })
}

pub fn compare_input() -> Value {
    json!({
        "type": "object",
        "required": ["traces"],
        "properties": {
            "traces": {"type": "array", "items": trace_property(),
                       "minItems": MIN_RUNS, "maxItems": MAX_RUNS},
            "labels": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_RUNS,
                       "description": "A name for each run, in order (default: the file's stem)"},
        },
        "additionalProperties": false,
    })
}

pub fn compare_output() -> Value {
    json!({
        "type": "object",
        "required": ["runs"],
        "properties": {"runs": {"type": "array", "items": {
            "type": "object", "required": ["label", "verdict"],
            "properties": {"label": {"type": "string"}, "verdict": {"type": "string"}},
        }}},
    })
}

pub fn recent_runs_input() -> Value {
    json!({
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": RUNS.0, "maximum": RUNS.1,
                                 "description": "How many of the newest to list"}},
        "additionalProperties": false,
    })
}

pub fn recent_runs_output() -> Value {
    json!({
        "type": "object",
        "required": ["folder", "runs", "total"],
        "properties": {
            "folder": {"type": "string"},
            "total": {"type": "integer"},
            "runs": {"type": "array", "items": {
                "type": "object", "required": ["name", "path", "bytes", "modified_ms"],
                "properties": {
                    "name": {"type": "string"}, "path": {"type": "string"},
                    "bytes": {"type": "integer"}, "modified_ms": {"type": "integer"},
                },
            }},
        },
    })
}

/// A required string argument.
fn required<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    string(args, key)?.ok_or_else(|| format!("'{key}' is required"))
}

/// An error of a subcommand's reading, in one line.
fn said(e: anyhow::Error) -> String {
    format!("{e:#}")
}

pub fn fit(tools: &Tools, args: &Map<String, Value>) -> Answer {
    only(
        args,
        &[
            "model",
            "from",
            "context",
            "parallel",
            "kv_dtype",
            "runtime",
            "no_history",
        ],
    )?;
    let target = required(args, "model")?;
    // A size where no file has that name (fit's own rule); any other
    // argument is a path, and must be inside the roots.
    let is_size = crate::fit::looks_like_size(target) && std::fs::symlink_metadata(target).is_err();
    let model = if is_size {
        OsString::from(target)
    } else {
        tools.roots.check(target)?.into_os_string()
    };
    let path = std::path::PathBuf::from(&model);
    let model = crate::fit::model(&model).map_err(said)?;
    let described = swapsight::fit::Described::of(&model, &path);
    let past = match string(args, "from")? {
        Some(p) => Some(crate::fit::past(&tools.roots.check(p)?).map_err(said)?),
        None => None,
    };
    let figures = crate::fit::figures().map_err(said)?;
    let mut ask = fit_ask(args)?;
    // The user's history, as the command line applies it; the tool runs
    // nothing, so it never learns.
    let unread = if flag(args, "no_history")? {
        None
    } else {
        crate::fit::load_history(&swapsight::fit::default_history_path())
            .map(|h| ask.history = Some(h))
            .err()
    };
    let mut answer = swapsight::fit::plan(model, &described, past, &figures, &ask);
    answer.notes.extend(unread);
    let value = serde_json::to_value(&answer).map_err(|e| e.to_string())?;
    Ok((cap(&answer.to_text(), MAX_TEXT), bounded(value)))
}

/// fit's `--context`, `--parallel`, `--kv-dtype` and `--runtime`, read as
/// the command line reads them.
fn fit_ask(args: &Map<String, Value>) -> Result<swapsight::fit::Ask, String> {
    let named = |key: &str, why: String| format!("'{key}': {why}");
    let context = match args.get("context") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            Some(crate::fit::tokens(&n.to_string()).map_err(|w| named("context", w))?)
        }
        Some(Value::String(s)) => Some(crate::fit::tokens(s).map_err(|w| named("context", w))?),
        Some(_) => return Err("'context' must be a number of tokens or a string like 8k".into()),
    };
    let parallel = match args.get("parallel") {
        None | Some(Value::Null) => None,
        Some(_) => Some(count(args, "parallel", (1, 65536, 1))?),
    };
    let kv_dtype = string(args, "kv_dtype")?
        .map(|s| swapsight::fit::KvDtype::parse(s).map_err(|w| named("kv_dtype", w)))
        .transpose()?;
    let runtime = string(args, "runtime")?
        .map(|s| crate::fit::runtime(s).map_err(|w| named("runtime", w)))
        .transpose()?;
    Ok(swapsight::fit::Ask {
        context,
        parallel,
        kv_dtype,
        runtime,
        history: None,
    })
}

/// A boolean argument; `false` where it is not given.
fn flag(args: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("'{key}' must be true or false")),
    }
}

pub fn report(tools: &Tools, args: &Map<String, Value>) -> Answer {
    only(args, &["trace"])?;
    let path = tools.roots.check(required(args, "trace")?)?;
    let mut reader = crate::input::open_trace(&path)
        .map_err(said)?
        .keep_commands_of(tools.commands_of);
    let report = swapsight::report::report_stream(&mut reader, None, |_| {})
        .map_err(|e| format!("{}: {e}", path.display()))?;
    crate::input::done(&path, report.samples, reader.notes(), "judge").map_err(said)?;
    let value = serde_json::to_value(&report).map_err(|e| e.to_string())?;
    Ok((cap(&report.to_text(), MAX_TEXT), bounded(value)))
}

/// A list of strings argument.
fn strings(args: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("'{key}' must be a list of strings"))
            })
            .collect(),
        Some(_) => Err(format!("'{key}' must be a list of strings")),
    }
}

pub fn compare(tools: &Tools, args: &Map<String, Value>) -> Answer {
    only(args, &["traces", "labels"])?;
    let traces = strings(args, "traces")?;
    let labels = strings(args, "labels")?;
    let n = traces.len();
    if !(MIN_RUNS..=MAX_RUNS).contains(&n) {
        return Err(format!(
            "compare takes {MIN_RUNS} to {MAX_RUNS} traces, got {n}"
        ));
    }
    if labels.len() > n {
        return Err(format!("{} labels for {n} traces", labels.len()));
    }
    let paths = traces
        .iter()
        .map(|t| tools.roots.check(t))
        .collect::<Result<Vec<PathBuf>, String>>()?;
    let (rows, _) = crate::compare::fold_runs(&paths, &labels, false).map_err(said)?;
    let cmp = compare_runs(rows);
    let value = serde_json::to_value(&cmp).map_err(|e| e.to_string())?;
    Ok((cmp.render(TableFormat::Text), bounded(value)))
}

pub fn recent_runs(tools: &Tools, args: &Map<String, Value>) -> Answer {
    only(args, &["limit"])?;
    let limit = count(args, "limit", RUNS)? as usize;
    let dir = &tools.recordings;
    let all = recordings::list(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let runs: Vec<Value> = all
        .iter()
        .take(limit)
        .filter_map(|r| {
            let mut v = serde_json::to_value(r).ok()?;
            let name = v["name"].as_str()?.to_owned();
            v["path"] = Value::String(dir.join(name).display().to_string());
            Some(v)
        })
        .collect();
    let text = if all.is_empty() {
        format!("No recordings in {}.", dir.display())
    } else {
        let names: Vec<&str> = runs
            .iter()
            .take(10)
            .filter_map(|r| r["name"].as_str())
            .collect();
        format!(
            "{} recordings in {}, newest first: {}",
            all.len(),
            dir.display(),
            names.join(", ")
        )
    };
    Ok((
        text,
        json!({"folder": dir.display().to_string(), "total": all.len(), "runs": runs}),
    ))
}
