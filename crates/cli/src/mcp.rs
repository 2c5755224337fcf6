//! `swapsight mcp`: a Model Context Protocol server over stdio, so that an
//! assistant (Claude Desktop, VS Code, Cursor) can ask "why is it
//! swapping?" and "will it fit?". Read-only tools ([`tools`]) over the same
//! live session `serve` runs and the same readers `report`, `compare` and
//! `fit` use; the wire ([`protocol`]) is newline-delimited JSON-RPC 2.0.
//!
//! Hand-written, not the `rmcp` SDK: the server needs five methods over
//! stdio and `serde_json`, which the CLI has; rmcp would bring an async
//! runtime into a loop that reads one line at a time, schemars and a macro
//! layer for six tools. docs/mcp.md says more.
//!
//! Safety: no tool starts, stops or signals a process or writes a file; a
//! path argument must resolve inside the allowed roots ([`roots`]); request
//! lines, lists, strings and texts are bounded; other users' command lines
//! are hidden as `serve` hides them.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use swapsight::live::{Live, LiveConfig};

mod answer;
mod files;
mod now;
mod protocol;
mod roots;
mod tools;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Speaks MCP (JSON-RPC 2.0, one message a line) on stdin and stdout; logs go to \
stderr. An assistant starts it: docs/mcp.md has the settings for Claude Desktop, VS Code and \
Cursor.

Tools (all read-only): memory_now, why_swapping, fit, report, compare, recent_runs. No tool \
starts, stops or signals a process or writes a file. Paths passed to fit, report and compare \
must resolve inside an allowed root: --allow, or by default the recordings folder and the \
folder mcp was started in. Command lines are shown for the processes of the user mcp runs as \
only (--show-all-commands shows them all).

Examples:
  swapsight mcp
  swapsight mcp --allow ~/models --allow ~/runs"
)]
pub struct Args {
    /// A folder (or file) the tools may read; repeat for more [default: the
    /// recordings folder and the current folder]
    #[arg(long = "allow", value_name = "PATH")]
    pub allow: Vec<PathBuf>,
    /// The recordings folder recent_runs lists [default: as `swapsight
    /// serve`'s: DATA_DIR/swapsight-recordings]
    #[arg(long, value_name = "DIR")]
    pub recordings: Option<PathBuf>,
    /// Show every user's command lines in memory_now and why_swapping, not
    /// only those of the user mcp runs as
    #[arg(long)]
    pub show_all_commands: bool,
}

/// How long a live tool waits for the session's first sample.
const FIRST_TICK_WAIT: Duration = Duration::from_secs(3);

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dir = args
        .recordings
        .unwrap_or_else(swapsight::recordings::default_recordings_dir);
    // Read only: the folder is not made when it is not there.
    let dir = dir.canonicalize().unwrap_or(dir);
    let allowed = if args.allow.is_empty() {
        vec![dir.clone(), PathBuf::from(".")]
    } else {
        args.allow
    };
    let roots = roots::Roots::new(allowed).context("cannot read the current folder")?;
    let commands_of = crate::serve::commands_of(args.show_all_commands);
    let live = start_live(dir.clone(), commands_of);
    if let Err(e) = &live {
        eprintln!("swapsight: warning: {e}; memory_now and why_swapping will say so");
    }
    eprintln!(
        "swapsight mcp: serving on stdio; paths allowed under {}",
        roots.shown()
    );
    let tools = answer::Tools {
        live,
        roots,
        recordings: dir,
        commands_of,
        first_tick_wait: FIRST_TICK_WAIT,
    };
    protocol::serve(std::io::stdin().lock(), std::io::stdout().lock(), &tools)
        .context("cannot read stdin or write stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The live session memory_now and why_swapping read, sampling from the
/// start so that swap growth and the forecast have a history when asked.
fn start_live(recordings_dir: PathBuf, commands_of: Option<u32>) -> Result<Live, String> {
    let probe = swapsight::probe::native().map_err(|e| format!("cannot start the probe: {e}"))?;
    let config = LiveConfig {
        recordings_dir,
        commands_of,
        ..LiveConfig::default()
    };
    Live::start(probe, config).map_err(|e| format!("cannot start the probe: {e}"))
}
