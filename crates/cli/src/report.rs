//! `swapsight report`: the verdict on a recorded run.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(after_help = "Verdicts, per process and for the run:
  fits           swap did not grow beyond the tolerance while it ran
  overflow       swap grew and the footprints explain it (Activity Monitor shows it)
  false-fit      swap grew while the footprint left clear room: the hidden case
  hidden-memory  the footprint fell without free memory rising, or the process owns memory
                 outside its footprint (macOS ledger tags): memory held out of sight

The footprint is macOS phys_footprint, which includes the process's compressed memory
(in RAM or swapped out), or Linux RssAnon + RssShmem (resident only). Memory outside
the footprints (GPU driver, other users' processes) shows as \"memory not explained by
footprints\"; other users' processes are never flagged.

When the trace has phase marks (`swapsight mark`, $SWAPSIGHT_MARK), a table follows with one
row per phase: start, duration, peak footprint of the watched tree, swap growth, minimum free
memory, memory not explained by footprints and the phase's own verdict; `--json` has it in
`phases`.

A malformed line is named on stderr and skipped; a cut-off last line (a killed
recorder) is expected and read up to the cut.")]
pub struct Args {
    /// Trace to read (written by `swapsight record` or `guard`)
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut reader = crate::input::open_trace(&args.trace)?;
    let report = swapsight::report::report_stream(&mut reader, None, |_| {})?;
    crate::input::done(&args.trace, report.samples, reader.notes(), "judge")?;
    let text = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        report.to_text()
    };
    crate::exit::print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
