//! The wire: JSON-RPC 2.0 messages, one per line on stdin and stdout (MCP's
//! stdio transport), and the lifecycle MCP puts on it — `initialize` and
//! its version negotiation, `notifications/initialized`, `ping`,
//! `tools/list`, `tools/call`. What the tools do is [`super::tools`]'.
//!
//! Errors of the message itself (not JSON, not a request, an unknown
//! method or tool, a line over [`MAX_LINE`]) are JSON-RPC errors; a tool
//! that cannot answer says so in its result (`isError`), as the spec asks,
//! so that the model reads why. A line over the limit is read to its end
//! and dropped, never held: memory stays bounded whatever comes in.

use std::io::{self, BufRead, Write};

use serde_json::{json, Map, Value};

use super::answer::Tools;
use super::tools::CallError;

/// The longest request line read (1 MiB); a longer one is answered with an
/// error and skipped.
pub const MAX_LINE: usize = 1 << 20;

/// The protocol revisions this server speaks, newest first: the ones
/// negotiated by `initialize` (the official Python SDK's handshake
/// versions). A client asking for one gets it; any other gets the newest.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC's error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// One line of input, bounded.
enum Line {
    Text(Vec<u8>),
    /// Longer than the limit: read to its end and dropped.
    TooLong,
    Eof,
}

/// Reads up to the next `\n`, keeping at most `max` bytes of it.
fn read_line(input: &mut impl BufRead, max: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut over = false;
    let mut read_any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (read_any, over) {
                (false, _) => Line::Eof,
                (true, true) => Line::TooLong,
                (true, false) => Line::Text(line),
            });
        }
        read_any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        if !over {
            if line.len() + chunk.len() > max {
                over = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let ended = done > chunk.len();
        input.consume(done);
        if ended {
            return Ok(if over {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
    }
}

/// Serves requests from `input` until it ends (EOF); each answer is one
/// line on `output`, flushed at once.
pub fn serve(mut input: impl BufRead, mut output: impl Write, tools: &Tools) -> io::Result<()> {
    loop {
        let answer = match read_line(&mut input, MAX_LINE)? {
            Line::Eof => return Ok(()),
            Line::TooLong => Some(error(
                Value::Null,
                INVALID_REQUEST,
                format!("request line over {} MiB: ignored", MAX_LINE >> 20),
            )),
            Line::Text(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
            Line::Text(bytes) => handle(&bytes, tools),
        };
        if let Some(answer) = answer {
            let mut text = serde_json::to_vec(&answer).map_err(io::Error::other)?;
            text.push(b'\n');
            output.write_all(&text)?;
            output.flush()?;
        }
    }
}

/// A JSON-RPC error answer.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

fn answer(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The answer to one line, `None` for a notification (or a response,
/// which this server never asked for).
pub fn handle(bytes: &[u8], tools: &Tools) -> Option<Value> {
    let msg: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Some(error(Value::Null, PARSE_ERROR, format!("parse error: {e}"))),
    };
    let Value::Object(msg) = msg else {
        let why = if msg.is_array() {
            "invalid request: batches are not supported, send one message a line"
        } else {
            "invalid request: expected a JSON-RPC 2.0 object"
        };
        return Some(error(Value::Null, INVALID_REQUEST, why));
    };
    let id = msg.get("id").cloned();
    let valid_id = matches!(id, Some(Value::String(_) | Value::Number(_)));
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let id = if valid_id { id } else { None };
        return Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        if msg.contains_key("result") || msg.contains_key("error") {
            return None;
        }
        let id = if valid_id { id } else { None };
        return Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "invalid request: no \"method\"",
        ));
    };
    let id = match id {
        None => return None, // a notification: initialized, cancelled, …
        Some(id) if valid_id => id,
        Some(_) => {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: \"id\" must be a string or a number",
            ))
        }
    };
    let params = match msg.get("params") {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Some(error(id, INVALID_PARAMS, "\"params\" must be an object")),
    };
    Some(match method {
        "initialize" => answer(id, initialize(&params)),
        "ping" => answer(id, json!({})),
        "tools/list" => answer(id, json!({"tools": Tools::list()})),
        "tools/call" => call(id, &params, tools),
        other => error(
            id,
            METHOD_NOT_FOUND,
            format!(
                "method not found: {}",
                swapsight::text::clean(&other.chars().take(100).collect::<String>())
            ),
        ),
    })
}

/// The version asked for when this server speaks it, else the newest.
pub fn negotiate(asked: Option<&str>) -> &'static str {
    PROTOCOL_VERSIONS
        .iter()
        .find(|v| Some(**v) == asked)
        .copied()
        .unwrap_or(PROTOCOL_VERSIONS[0])
}

fn initialize(params: &Map<String, Value>) -> Value {
    let version = negotiate(params.get("protocolVersion").and_then(Value::as_str));
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {
            "name": "swapsight",
            "title": "swapsight",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "Read-only memory tools for this machine: memory_now and why_swapping \
    read the live figures (free, swap, pressure, GPU, the largest processes); fit says whether a \
    model will fit; report, compare and recent_runs read swapsight recordings (traces). No tool \
    starts, stops or signals a process or writes a file; paths must be inside the roots the user \
    allowed.",
    })
}

fn call(id: Value, params: &Map<String, Value>, tools: &Tools) -> Value {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return error(id, INVALID_PARAMS, "tools/call needs \"name\", a string");
    };
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return error(id, INVALID_PARAMS, "\"arguments\" must be an object"),
    };
    match tools.call(name, args) {
        Ok(result) => answer(id, result),
        Err(CallError::UnknownTool) => error(
            id,
            INVALID_PARAMS,
            format!(
                "unknown tool: {} (tools/list names them)",
                swapsight::text::clean(&name.chars().take(100).collect::<String>())
            ),
        ),
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
