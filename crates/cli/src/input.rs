//! Reading a trace the way every subcommand does: unreadable or not a trace
//! is an error; each malformed line is a one-line warning, then skipped.

use std::path::Path;

use swapsight::trace::Trace;

pub fn read_trace(path: &Path) -> anyhow::Result<Trace> {
    let trace = swapsight::trace::read(path)?;
    for p in &trace.problems {
        eprintln!("swapsight: warning: {}: {p} (skipped)", path.display());
    }
    Ok(trace)
}
