//! `swapsight doctor`: swapsight's figures beside the OS's own tools, read
//! at the same moment. The run and the table are `swapsight::doctor`'s.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use swapsight::doctor::{examine, Options};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "doctor starts a child that maps and touches --child-size of memory, reads \
swapsight's figures, runs the OS's own tools, and reads swapsight's figures again, so each tool's \
figure is judged against the span of swapsight's two readings. One row per figure: swapsight's \
reading, the tool's, the difference, the tolerance and ok / OFF; rows it cannot read say why \
(a missing tool, another user's process without root).

  macOS  footprint and top for the child and the largest readable process; vm_stat (used memory \
by Activity Monitor's formula, compressed, wired), sysctl vm.swapusage, memory_pressure
  Linux  free -b and /proc/meminfo; ps -o rss and /proc/PID/smaps_rollup for the child and the \
largest readable process; swapon --show; the child's VmSwap

What each row compares and its tolerance: docs/doctor.md. Paste the output into a bug report.

Examples:
  swapsight doctor
  swapsight doctor --child-size 1G --strict      exit 1 if any figure is off
  swapsight doctor --json > doctor.json"
)]
pub struct Args {
    /// Memory the child maps and touches: its footprint has a known answer
    #[arg(long, value_name = "SIZE", default_value = "256M",
          value_parser = crate::args::size, allow_hyphen_values = true)]
    pub child_size: u64,
    /// Longest each tool may take before it is stopped
    #[arg(long, value_name = "DURATION", default_value = "10s",
          value_parser = crate::args::duration, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Exit 1 when any figure is off
    #[arg(long)]
    pub strict: bool,
    /// Print one JSON object instead of the table
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut probe = swapsight::probe::native().context("cannot start the memory probe")?;
    let host = probe
        .host()
        .context("cannot read the host's memory facts")?;
    // The child's memory comes out of what the machine has: more than half
    // of it would push the machine into swap to measure it.
    if args.child_size > host.phys_bytes / 2 {
        return Err(crate::exit::fail(
            crate::exit::USAGE,
            format!(
                "--child-size {} is more than half of this machine's {} of memory",
                swapsight::units::format_bytes(i64::try_from(args.child_size).unwrap_or(i64::MAX)),
                swapsight::units::format_bytes(i64::try_from(host.phys_bytes).unwrap_or(i64::MAX)),
            ),
        ));
    }
    let opts = Options {
        child_size: args.child_size,
        timeout: args.timeout,
    };
    let report = examine(probe.as_mut(), &opts)?;
    let text = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        report.to_text()
    };
    crate::exit::print_stdout(&text)?;
    if args.strict && report.any_off() {
        let off = report.count(swapsight::doctor::Status::Off);
        return Err(crate::exit::fail(
            crate::exit::ERROR,
            format!(
                "{off} figure{} off (--strict)",
                if off == 1 { " is" } else { "s are" }
            ),
        ));
    }
    Ok(ExitCode::SUCCESS)
}
