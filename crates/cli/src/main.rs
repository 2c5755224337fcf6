//! `swapsight`: the command line. Thin glue over the `swapsight` library —
//! argument parsing, terminal output and exit codes live here, nothing else.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod advise;
mod args;
mod compare;
mod counter;
mod doctor;
mod exit;
mod export;
mod fit;
mod guard;
mod input;
mod mark;
mod mcp;
mod output;
mod plot;
mod process;
mod push;
mod record;
mod report;
mod serve;
mod session;

/// Footprint beside swap: catch the "false fit".
///
/// On Apple Silicon a process's footprint does not count memory held outside
/// it (by the GPU driver, owned with no footprint, or not yet touched; its own
/// swapped heap does stay in a macOS footprint), and on Linux swapped pages
/// leave the footprint. So a pipeline can look like it fits while swap climbs
/// and the machine crawls. swapsight records footprint, swap, free memory and
/// the memory no footprint explains together, and says which runs fit,
/// overflowed, or only looked like they fit.
#[derive(Debug, Parser)]
#[command(
    name = "swapsight",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(after_help = "Examples:
  swapsight record -o run.jsonl -- python generate.py   record a run, then…
  swapsight report run.jsonl                           …see whether it really fit

Figures (each with its source in docs/trace-format.md):
  footprint  macOS phys_footprint (proc_pid_rusage): includes the process's compressed
             memory, in RAM or swapped out (XNU osfmk/kern/task.c); Linux RssAnon + RssShmem
  used       macOS app + wired + compressed pages of host_statistics64(HOST_VM_INFO64),
             Activity Monitor's \"Memory Used\"; Linux MemTotal − MemAvailable
  free       macOS free_count pages (vm_stat's free + speculative); Linux MemAvailable
  available  macOS kern.memorystatus_level: pages neither wired nor compressed (XNU
             vm_pressure_response), what guard --wait-free waits on; Linux MemAvailable
  swap       macOS sysctl vm.swapusage; Linux SwapTotal − SwapFree

Sizes: 8G, 512M, 8GiB or bytes (binary: 1G = 1024³ bytes, as macOS shows them), 4K to 8P.
Durations: 500ms, 2s, 3m, 1h.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Record footprint, swap and free memory to a trace (JSON Lines).
    Record(record::Args),
    /// Say whether a recorded run fit, overflowed, or was a false fit.
    Report(report::Args),
    /// Run a command once memory is free; stop it when swap grows past a budget.
    Guard(guard::Args),
    /// Convert a trace to CSV, Perfetto (Chrome trace JSON) or Prometheus text.
    Export(export::Args),
    /// Draw a trace as a PNG or SVG chart.
    Plot(plot::Args),
    /// Compare runs side by side: a table (text, md, json, csv) and a chart.
    Compare(compare::Args),
    /// Print the PyTorch MPS watermark ratios that fail a job before it swaps.
    Advise(advise::Args),
    /// Say whether a model (a file, a folder or a size) will fit before it is loaded.
    Fit(fit::Args),
    /// Mark the start (or --end) of a phase in the running recording.
    Mark(mark::Args),
    /// Write a named figure (bytes, items, …) into the running recording.
    Counter(counter::Args),
    /// Serve the live UI, a JSON + SSE API and Prometheus /metrics over HTTP.
    Serve(serve::Args),
    /// Set swapsight's figures beside the OS's own tools and say where they disagree.
    Doctor(doctor::Args),
    /// Answer an assistant over MCP (stdio): read-only memory, fit and trace tools.
    Mcp(mcp::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if fit::asked() => return fit::clap_error(e),
        Err(e) => return exit::clap_error(e),
    };
    let result = match cli.command {
        Command::Record(a) => record::run(a),
        Command::Report(a) => report::run(a),
        Command::Guard(a) => guard::run(a),
        Command::Export(a) => export::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Mark(a) => mark::run(a),
        Command::Counter(a) => counter::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Advise(a) => advise::run(a),
        Command::Fit(a) => fit::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Mcp(a) => mcp::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => exit::error(&e),
    }
}
