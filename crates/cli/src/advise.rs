//! `swapsight advise`: the PyTorch MPS watermark ratios that make a job fail
//! fast instead of swapping. The words come from `swapsight::advise`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use swapsight::advise::{advise_alone, AdviceInput, RunChecker};
use swapsight::trace::Record;

#[derive(Debug, clap::Args)]
#[command(after_help = "PyTorch's MPS allocator refuses to allocate past \
PYTORCH_MPS_HIGH_WATERMARK_RATIO × torch.mps.recommended_max_memory(). The default ratio 1.7 \
puts that above physical memory, so a job that does not fit swaps instead of failing. advise \
prints both ratios (high and low: the low one may not exceed the high one) that cap the pool \
below where this machine (or the trace's) swaps. With a trace, it says whether the cap would \
have stopped that run before its swap grew. Where this shell already sets either ratio, it says \
what PyTorch makes of it (read with C's strtod: '1.5x' is 1.5, a word is 0, no limit; a high ratio \
under the low one, whose default is 1.4, makes PyTorch refuse to start MPS).

On Linux, or any machine without MPS, it says so and exits 0 (unless --recommended-max is given).

Examples:
  swapsight advise
  swapsight advise run.jsonl --recommended-max 40200960000
  eval \"$(swapsight advise | grep ^export)\"")]
pub struct Args {
    /// A recorded run to check the cap against (its host's memory is used)
    #[arg(value_name = "TRACE")]
    pub trace: Option<PathBuf>,
    /// Memory kept for the OS, other apps and what the job holds outside the MPS pool [default: 30 % of memory]
    #[arg(long, value_name = "SIZE", value_parser = crate::args::size, allow_hyphen_values = true)]
    pub reserve: Option<u64>,
    /// torch.mps.recommended_max_memory(), in bytes or a size [default: on a Mac, Metal's figure as read now (the one torch returns); with a trace or no figure, estimated at 78 % of memory]
    #[arg(long, value_name = "SIZE", value_parser = crate::args::size, allow_hyphen_values = true)]
    pub recommended_max: Option<u64>,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut reader = match &args.trace {
        Some(p) => Some(crate::input::open_trace(p)?),
        None => None,
    };
    let (host, metal) = match &reader {
        Some(r) => (r.header().host.clone(), None),
        None => this_mac()?,
    };
    // Given beats read: the user may advise for another Mac's figure.
    let read_from_metal = args.recommended_max.is_none() && metal.is_some();
    let input = AdviceInput {
        os: host.os.clone(),
        hostname: host.hostname.clone(),
        phys_bytes: host.phys_bytes,
        reserve_bytes: args.reserve,
        recommended_max_bytes: args.recommended_max.or(metal),
        recommended_read_from_metal: read_from_metal,
        high_ratio_set: crate::fit::ratio_as_set(swapsight::fit::MPS_RATIO_ENV),
        low_ratio_set: crate::fit::ratio_as_set(swapsight::fit::MPS_LOW_RATIO_ENV),
    };
    swapsight::advise::check_input(&input)
        .map_err(|why| crate::exit::fail(crate::exit::USAGE, why))?;
    let mut advice = advise_alone(&input);
    if let (Some(reader), Some(path)) = (reader.as_mut(), &args.trace) {
        // The run is checked as it streams: the cap is known from the header.
        let mut check = RunChecker::new(reader.header(), advice.cap_bytes);
        let mut samples = 0;
        while let Some(record) = reader.next_record()? {
            if let Record::Sample(s) = record {
                samples += 1;
                check.push(&s);
            }
        }
        crate::input::done(path, samples, reader.notes(), "check")?;
        if advice.applies {
            advice.add_run(check.finish());
        }
    }
    let text = if args.json {
        serde_json::to_string_pretty(&advice)? + "\n"
    } else {
        advice.text
    };
    crate::exit::print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// This machine's facts, and on a Mac Metal's recommended working set as
/// the probe reads it (what `torch.mps.recommended_max_memory()` returns):
/// only a whole sample reads the GPU.
fn this_mac() -> anyhow::Result<(swapsight::probe::HostInfo, Option<u64>)> {
    let mut probe = swapsight::probe::native().context("cannot start the memory probe")?;
    let host = probe
        .host()
        .context("cannot read the host's memory facts")?;
    if host.os != "macos" {
        return Ok((host, None));
    }
    let metal = probe
        .sample()
        .ok()
        .and_then(|(system, _)| system.gpu)
        .and_then(|g| g.recommended_working_set_bytes);
    Ok((host, metal))
}
