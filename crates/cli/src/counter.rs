//! `swapsight counter`: write a named figure (the allocator's pool, a
//! queue's length) into the running recording from any shell, through the
//! mark path the recording reads.

use std::path::PathBuf;
use std::process::ExitCode;

use swapsight::marks::{counter_line, is_counter_value, is_unit, write_mark, MAX_UNIT_CHARS};

use crate::exit;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The value lands in the trace at this instant; `swapsight report` shows \
each counter's peak and last value over the run and per phase. At most 50 values a second \
are kept (the rest are counted in a counters-dropped event). A command run under `record` \
or `guard` can write one itself: a line \"#counter VALUE UNIT NAME\" to $SWAPSIGHT_MARK.

Examples:
  swapsight counter mps.driver_allocated 3221225472
  swapsight counter pool 3G
  swapsight counter queue 12 --unit items --trace run.jsonl"
)]
pub struct Args {
    /// Counter name (up to 64 characters; control characters become '?')
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The value: a number, or with the unit bytes a size like 3G or 512M
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    pub value: String,
    /// What the value counts: 1 to 16 of A-Z a-z 0-9 _ % / . -
    #[arg(long, default_value = "bytes", value_name = "UNIT")]
    pub unit: String,
    /// The recording writing this trace, when several run
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let usage = |why: String| exit::fail(exit::USAGE, why);
    if !is_unit(&args.unit) {
        return Err(usage(format!(
            "bad unit {:?}: 1 to {MAX_UNIT_CHARS} of A-Z a-z 0-9 _ % / . -",
            args.unit
        )));
    }
    let value = parse_value(&args.value, &args.unit).map_err(usage)?;
    let Some(line) = counter_line(&args.name, value, &args.unit) else {
        return Err(usage("the counter name is empty".to_string()));
    };
    let target = crate::mark::recording(args.trace.as_deref())?;
    write_mark(&target.mark_path, &line).map_err(|e| {
        exit::fail(
            exit::ERROR,
            format!("cannot write to {}: {e}", target.mark_path.display()),
        )
    })?;
    eprintln!(
        "swapsight: counter {} = {} in {} (recorder pid {})",
        line.splitn(4, ' ').nth(3).unwrap_or_default(),
        swapsight::report::counters::figure(value, &args.unit),
        target.trace.display(),
        target.pid
    );
    Ok(ExitCode::SUCCESS)
}

/// A number, or for bytes a size (`3G`); within ±2^53.
fn parse_value(text: &str, unit: &str) -> Result<f64, String> {
    let quoted: String = swapsight::text::clean(text).chars().take(40).collect();
    let value = match text.trim().parse::<f64>() {
        Ok(v) => v,
        Err(_) if unit == "bytes" => swapsight::units::parse_size(text)
            .map(|b| b as f64)
            .map_err(|e| format!("bad value {quoted:?}: {}", e.why))?,
        Err(_) => return Err(format!("bad value {quoted:?}: expected a number")),
    };
    if !is_counter_value(value) {
        return Err(format!(
            "bad value {quoted:?}: a finite number within ±{} (2^53)",
            swapsight::trace::MAX_BYTES
        ));
    }
    Ok(value)
}
