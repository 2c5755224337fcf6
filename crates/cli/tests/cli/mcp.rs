//! `swapsight mcp`: spoken to over its stdin and stdout as an MCP client
//! does — initialize, tools/list, a call of each tool on traces and a model
//! folder the test writes — and the wire's failures: a path outside the
//! roots, a malformed line, an over-long one (the server still answers
//! after each), and EOF ending it with 0.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::util::*;

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    /// `swapsight mcp` with `args`, started in `cwd`.
    fn start(cwd: &Path, args: &[&str]) -> Server {
        Server::start_with(cwd, args, &[])
    }

    /// The same, with `env` set.
    fn start_with(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Server {
        let mut child = swapsight()
            .arg("mcp")
            .args(args)
            .envs(env.iter().copied())
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "no answer line: {line:?}");
        serde_json::from_str(&line).unwrap()
    }

    /// A request and its answer (the same id).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(format!("{msg}\n").as_bytes());
        let answer = self.read();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        answer
    }

    /// A tool's result (a JSON-RPC success either way).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        answer["result"].clone()
    }

    fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "cli-test", "version": "1"}}),
        );
        self.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        answer["result"].clone()
    }

    /// Closes stdin and waits for the exit.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait_with_deadline(&mut self.child, Duration::from_secs(20))
    }
}

fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A successful result: its structured content.
fn structured(result: &Value) -> &Value {
    assert_eq!(result["isError"], false, "{result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(!text.is_empty() && text.chars().count() <= 2001, "{text}");
    assert!(result["structuredContent"].is_object(), "{result:#}");
    &result["structuredContent"]
}

/// A refused call: its text.
fn refused(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result:#}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn an_assistant_lists_the_tools_and_calls_each_on_real_files() {
    let dir = TempDir::new("mcp");
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let offload = swapsight::synth::to_jsonl(&swapsight::synth::seed_offload());
    let eager = swapsight::synth::to_jsonl(&swapsight::synth::seed_eager());
    std::fs::write(runs.join("offload.jsonl"), &offload).unwrap();
    std::fs::write(runs.join("eager.jsonl"), &eager).unwrap();
    let model = dir.join("model");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(model.join("model.safetensors"), vec![0u8; 1 << 20]).unwrap();
    let llama = dir.join("llama");
    std::fs::create_dir_all(&llama).unwrap();
    super::fit::context::llama_folder(&llama);
    let mut s = Server::start(
        dir.path(),
        &["--recordings", runs.to_str().unwrap(), "--allow", "."],
    );
    let init = s.initialize();
    assert_eq!(init["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["serverInfo"]["name"], "swapsight");
    assert!(init["capabilities"]["tools"].is_object());

    let tools = s.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "memory_now",
            "why_swapping",
            "fit",
            "report",
            "compare",
            "recent_runs"
        ]
    );
    for t in tools.as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
    }

    let now = s.call("memory_now", json!({"processes": 3}));
    let now = structured(&now);
    assert!(now["system"]["phys_bytes"].as_u64().unwrap() > 0, "{now}");
    assert!(now["used_bytes"].is_u64(), "{now}");
    let rows = now["processes"].as_array().unwrap();
    assert!(!rows.is_empty() && rows.len() <= 50, "{now}");
    assert!(rows[0]["footprint_bytes"].is_u64(), "{now}");

    let why = s.call("why_swapping", json!({}));
    let why = structured(&why);
    for key in [
        "verdict", "swapping", "summary", "flagged", "holders", "forecast",
    ] {
        assert!(why.get(key).is_some(), "{key}: {why}");
    }

    let fit = s.call("fit", json!({"model": "model"}));
    let fit = structured(&fit);
    assert_eq!(fit["model_bytes"], 1 << 20, "{fit}");
    assert_eq!(fit["verdict"], "fits", "{fit}");
    let size = s.call("fit", json!({"model": "1P"}));
    assert_eq!(structured(&size)["verdict"], "does-not-fit");
    // The context asked, as `fit --context 128k --runtime mlx` is: the KV
    // cache of Llama-3.1-8B at 131,072 tokens is 16 GiB, from config.json.
    let long = s.call(
        "fit",
        json!({"model": "llama", "context": "128k", "runtime": "mlx", "kv_dtype": "bf16"}),
    );
    let long = structured(&long);
    assert_eq!(long["context"]["tokens"], 131072, "{long}");
    let kv = long["need"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == "kv-cache")
        .unwrap_or_else(|| panic!("no kv-cache line: {long}"));
    assert_eq!(kv["bytes"], 16u64 << 30, "{kv}");
    let bad = s.call("fit", json!({"model": "llama", "context": "lots"}));
    assert_eq!(bad["isError"], true, "{bad}");

    let report = s.call("report", json!({"trace": "runs/offload.jsonl"}));
    assert_eq!(structured(&report)["verdict"], "false-fit");
    let text = report["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("false fit"), "{text}");

    let cmp = s.call(
        "compare",
        json!({"traces": ["runs/offload.jsonl", "runs/eager.jsonl"], "labels": ["offload"]}),
    );
    let cmp = structured(&cmp);
    assert_eq!(cmp["runs"][0]["label"], "offload", "{cmp}");
    assert_eq!(cmp["runs"][0]["verdict"], "false-fit", "{cmp}");
    assert_eq!(cmp["runs"][1]["label"], "eager", "{cmp}");
    assert_eq!(cmp["runs"][1]["verdict"], "overflow", "{cmp}");

    let recent = s.call("recent_runs", json!({}));
    let recent = structured(&recent);
    assert_eq!(recent["total"], 2, "{recent}");
    let path = recent["runs"][0]["path"].as_str().unwrap();
    // A listed path is one report takes.
    let again = s.call("report", json!({"trace": path}));
    assert!(structured(&again)["verdict"].is_string());

    assert!(s.finish().success());
}

#[test]
fn the_fit_tool_applies_the_user_s_history_as_the_command_line_does() {
    let dir = TempDir::new("mcp-history");
    let llama = dir.join("llama");
    std::fs::create_dir_all(&llama).unwrap();
    super::fit::context::llama_folder(&llama);
    let data = dir.join("data");
    let kept_at = super::fit::run::history_path(&data);
    std::fs::create_dir_all(kept_at.parent().unwrap()).unwrap();
    let run = json!({"at_unix_ms": 1, "model": "m", "context": 4096, "estimated_bytes": 100,
                     "measured_bytes": 150, "measured": "mlx.peak", "ratio": 1.5});
    let history = json!({"about": "test", "version": 1, "groups": [
        {"runtime": "mlx", "architecture": "llama", "ratio": 1.5, "runs": [run]}]});
    std::fs::write(&kept_at, history.to_string()).unwrap();
    let env = [("XDG_DATA_HOME", data.as_path()), ("HOME", data.as_path())];
    let mut s = Server::start_with(dir.path(), &["--allow", "."], &env);
    s.initialize();
    let ask = json!({"model": "llama", "runtime": "mlx", "context": 8192});
    let taught = structured(&s.call("fit", ask.clone())).clone();
    let mut raw_ask = ask.clone();
    raw_ask["no_history"] = json!(true);
    let raw = structured(&s.call("fit", raw_ask)).clone();
    assert_eq!(taught["history"]["runs"], 1, "{taught:#}");
    assert!(raw.get("history").is_none(), "{raw:#}");
    let raw_bytes = raw["needed_bytes"].as_u64().unwrap();
    assert_eq!(
        taught["needed_bytes"].as_u64().unwrap(),
        (raw_bytes as f64 * 1.5) as u64
    );
    // The command line's answer from the same file: the same estimate and
    // the same note.
    let out = swapsight()
        .envs(env)
        .args([
            "fit",
            "llama",
            "--runtime",
            "mlx",
            "--context",
            "8192",
            "--json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["needed_bytes"], taught["needed_bytes"]);
    assert_eq!(cli["history"], taught["history"]);
    let note = "estimate +50 % from 1 past mlx run of llama models (--no-history to ignore)";
    assert!(taught["notes"].to_string().contains(note), "{taught:#}");
    assert!(!raw["notes"].to_string().contains(note), "{raw:#}");
    // A file that does not read is said in the answer, and not applied.
    std::fs::write(&kept_at, "{").unwrap();
    let unread = structured(&s.call("fit", ask)).clone();
    assert!(unread.get("history").is_none(), "{unread:#}");
    assert!(
        unread["notes"]
            .to_string()
            .contains("the history of past runs is not used: "),
        "{unread:#}"
    );
    assert_eq!(std::fs::read_to_string(&kept_at).unwrap(), "{");
    let why = refused(&s.call("fit", json!({"model": "llama", "no_history": "yes"})));
    assert_eq!(why, "'no_history' must be true or false");
    assert!(s.finish().success());
}

#[test]
fn paths_outside_the_roots_are_refused_naming_the_roots() {
    let dir = TempDir::new("mcp-roots");
    let inside = dir.join("inside");
    std::fs::create_dir_all(&inside).unwrap();
    let outside = write(
        &dir,
        "outside.jsonl",
        &swapsight::synth::to_jsonl(&swapsight::synth::seed_offload()),
    );
    let mut s = Server::start(&inside, &["--recordings", inside.to_str().unwrap()]);
    s.initialize();
    for (tool, args) in [
        ("report", json!({"trace": outside})),
        ("report", json!({"trace": "../outside.jsonl"})),
        ("compare", json!({"traces": [outside, outside]})),
        ("fit", json!({"model": "/etc"})),
        ("fit", json!({"model": "1G", "from": outside})),
    ] {
        let why = refused(&s.call(tool, args));
        assert!(
            why.contains("is outside the allowed roots ("),
            "{tool}: {why}"
        );
        let root = inside.path_canonical();
        assert!(why.contains(&root), "{tool}: {why}");
        assert!(why.contains("--allow"), "{tool}: {why}");
    }
    // Bad arguments are the tool's errors, said by name.
    let why = refused(&s.call("report", json!({"trace": 3})));
    assert_eq!(why, "'trace' must be a string");
    let why = refused(&s.call("memory_now", json!({"rows": 3})));
    assert_eq!(why, "unknown argument 'rows': expected processes");
    // An unknown tool is a protocol error.
    let answer = s.request("tools/call", json!({"name": "kill", "arguments": {}}));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(s.finish().success());
}

trait Canonical {
    fn path_canonical(&self) -> String;
}

impl Canonical for PathBuf {
    fn path_canonical(&self) -> String {
        self.canonicalize().unwrap().display().to_string()
    }
}

#[test]
fn bad_lines_are_answered_and_the_server_goes_on_until_eof() {
    let dir = TempDir::new("mcp-wire");
    let mut s = Server::start(dir.path(), &["--recordings", dir.path().to_str().unwrap()]);
    s.send_raw(b"this is not json\n");
    let e = s.read();
    assert_eq!(e["error"]["code"], -32700, "{e}");
    assert_eq!(e["id"], Value::Null);
    // An over-long line (over 1 MiB) is read to its end, answered, dropped.
    let mut long = vec![b'x'; (1 << 20) + 10];
    long.push(b'\n');
    s.send_raw(&long);
    let e = s.read();
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("1 MiB"),
        "{e}"
    );
    s.send_raw(b"[1, 2]\n");
    assert_eq!(s.read()["error"]["code"], -32600);
    let answer = s.request("no/such", json!({}));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    // Still alive, and it answers in order.
    assert_eq!(s.request("ping", json!({}))["result"], json!({}));
    let init = s.initialize();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    // A notification gets no answer: the next line answered is the ping.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}\n");
    assert_eq!(s.request("ping", json!({}))["result"], json!({}));
    let status = s.finish();
    assert_eq!(status.code(), Some(0));
}
