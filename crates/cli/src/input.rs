//! Reading a trace the way every subcommand does: unreadable or not a trace
//! is an error; each malformed line is a one-line warning, then skipped —
//! the first few of them, then one line with the total, so that a file of
//! garbage cannot flood the terminal; a trace left with no sample is an error.

use std::path::Path;

use swapsight::trace::Trace;

/// Malformed lines named one by one on stderr.
const SHOWN_PROBLEMS: usize = 5;

/// Reads `path` for a subcommand that needs samples to `what` (judge,
/// export, draw).
pub fn read_trace(path: &Path, what: &str) -> anyhow::Result<Trace> {
    let trace = swapsight::trace::read(path)?;
    let file = path.display();
    if trace.samples.is_empty() {
        // One line: the first bad line says why nothing is left.
        let Some(first) = trace.problems.first() else {
            anyhow::bail!("{file}: the trace has no samples: nothing to {what}");
        };
        let more = match trace.bad_lines {
            0 | 1 => String::new(),
            n => format!(" (and {} more malformed lines)", n - 1),
        };
        anyhow::bail!("{file}: {first}{more}; the trace has no samples left: nothing to {what}");
    }
    for p in trace.problems.iter().take(SHOWN_PROBLEMS) {
        eprintln!("swapsight: warning: {file}: {p} (skipped)");
    }
    let shown = trace.problems.len().min(SHOWN_PROBLEMS);
    if trace.bad_lines > shown {
        eprintln!(
            "swapsight: warning: {file}: {} malformed lines skipped in all ({} more not shown)",
            trace.bad_lines,
            trace.bad_lines - shown
        );
    }
    Ok(trace)
}
