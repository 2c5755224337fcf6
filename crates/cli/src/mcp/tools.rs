//! The tools: each one's name, description and input and output schemas
//! (`tools/list`), and the call that answers it (`tools/call`). Every tool
//! reads only: none starts, stops or signals a process or writes a file.
//! An answer is structured content (what the output schema declares) and
//! a short text; a tool that cannot answer returns `isError` with the
//! reason, which names the bad argument.

use serde_json::{json, Map, Value};

use super::answer::{cap, Answer, Tools, MAX_TEXT};
use super::{files, now};

/// A call that is no tool's.
#[derive(Debug)]
pub enum CallError {
    UnknownTool,
}

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
memory, free memory now, the GPU's limit, a cgroup's), as `swapsight fit --json` answers: with \
the ratio the user's past runs taught applied as the command line applies it (no_history: the \
files alone).",
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

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
