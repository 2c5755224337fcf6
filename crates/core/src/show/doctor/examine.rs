//! The doctor's run: the child, a probe sample, the tools, a second probe
//! sample, then the rows. The tools run between the two samples, so a
//! figure that moved while they read it is judged against both of
//! swapsight's readings (see [`super::Bracket`]).
//!
//! Both platforms' readers are plain Rust over files and tools, compiled
//! everywhere; which one runs is chosen at run time by the OS.

use std::time::{Duration, Instant};

use super::child::Held;
use super::linux::{self, Rollup};
use super::macos;
use super::tools::{self, Outcome};
use super::{
    info, judge, Bracket, ChildInfo, MissingTool, Reading, Report, Row, Tolerance, Unit, UsedTool,
};
use crate::probe::linux::parse::{self as linux_parse, StatusFigures};
use crate::probe::{Probe, ProbeError, ProcessSample, SystemSample};

mod on_linux;
mod on_macos;

use on_linux::{linux_version, read_linux, rows_linux};
use on_macos::{macos_version, read_macos, rows_macos};

const MIB: f64 = 1048576.0;

/// Longest the child may take to touch its memory: on a machine already
/// swapping, writing 256 MiB can take a while, and it is not a tool.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// What the doctor is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Memory the child maps and touches.
    pub child_size: u64,
    /// Longest a tool may take.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            child_size: 256 << 20,
            timeout: tools::TIMEOUT,
        }
    }
}

/// Why the doctor could not run at all (a tool that fails is a row, not
/// this).
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error("cannot start the child that holds {}", super::format_bytes(*size as f64))]
    Child {
        size: u64,
        #[source]
        source: std::io::Error,
    },
}

/// One probe sample: the system and the processes.
type Snap = (SystemSample, Vec<ProcessSample>);

/// Runs the doctor with `probe` (the native one, or a scripted one in
/// tests) against this machine's own tools.
pub fn examine(probe: &mut dyn Probe, opts: &Options) -> Result<Report, DoctorError> {
    let held =
        Held::spawn(opts.child_size, CHILD_TIMEOUT).map_err(|source| DoctorError::Child {
            size: opts.child_size,
            source,
        })?;
    let child = ChildInfo {
        pid: held.pid(),
        size_bytes: held.size(),
        inherited_bytes: held.inherited(),
    };
    let mut ctx = Ctx {
        timeout: opts.timeout,
        missing: Vec::new(),
        used: Vec::new(),
    };
    let a = probe.sample()?;
    // The second sample closes the bracket around the tools' reading, so
    // every process the rows may compare is read afresh there: a probe
    // that leaves a process found at its first sample idle would repeat
    // that first reading instead.
    let mut listed: Vec<u32> = a.1.iter().map(|p| p.pid).collect();
    listed.sort_unstable();
    listed.dedup();
    probe.watch_closely(&listed);
    let start = Instant::now();
    let since = |start: Instant| start.elapsed().as_millis().try_into().unwrap_or(u64::MAX);
    let (rows, span_ms, (os_version, kernel)) = if cfg!(target_os = "macos") {
        let read = read_macos(&mut ctx, child.pid, &a.1);
        let b = probe.sample()?;
        let span = since(start);
        (
            rows_macos(&read, child, &a, &b),
            span,
            macos_version(&mut ctx),
        )
    } else {
        let read = read_linux(&mut ctx, child.pid, &a.1);
        let b = probe.sample()?;
        let span = since(start);
        (rows_linux(&read, child, &a, &b), span, linux_version())
    };
    drop(held);
    Ok(Report {
        os: std::env::consts::OS.into(),
        os_version,
        kernel,
        child: Some(child),
        rows,
        missing_tools: ctx.missing,
        tools: ctx.used,
        span_ms,
    })
}

/// Runs tools, noting each missing one once.
struct Ctx {
    timeout: Duration,
    missing: Vec<MissingTool>,
    used: Vec<UsedTool>,
}

impl Ctx {
    fn run(&mut self, name: &str, args: &[&str]) -> Reading<String> {
        let (outcome, path) = tools::run(name, args, self.timeout);
        if let Some(path) = path {
            if !self.used.iter().any(|u| u.tool == name) {
                self.used.push(UsedTool {
                    tool: name.into(),
                    path: path.display().to_string(),
                });
            }
        }
        match outcome {
            Outcome::Output(s) => Reading::Value(s),
            Outcome::Missing(not_found) => {
                if !self.missing.iter().any(|m| m.tool == name) {
                    self.missing.push(MissingTool {
                        tool: name.into(),
                        why: not_found.describe(),
                    });
                }
                Reading::Unreadable(format!("no trusted {name} is installed"))
            }
            Outcome::Failed(why) => Reading::Unreadable(why),
        }
    }

    /// A tool's output through `parse`; output it cannot read is named.
    fn parsed<T>(
        &mut self,
        name: &str,
        args: &[&str],
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Reading<T> {
        self.run(name, args).and_then(|text| match parse(&text) {
            Some(v) => Reading::Value(v),
            None => Reading::Unreadable(format!("cannot read {name}'s output")),
        })
    }
}

/// A process picked for a per-process row.
#[derive(Debug, Clone)]
struct Pick {
    pid: u32,
    name: String,
    /// `largest process`, `largest readable process`.
    what: &'static str,
}

impl Pick {
    fn label(&self) -> String {
        format!("{}: {} (pid {})", self.what, self.name, self.pid)
    }
}

/// Processes by footprint, largest first, without the child.
fn by_footprint(procs: &[ProcessSample], child: u32) -> Vec<&ProcessSample> {
    let mut v: Vec<&ProcessSample> = procs.iter().filter(|p| p.pid != child).collect();
    v.sort_by_key(|p| std::cmp::Reverse(p.footprint_bytes));
    v
}

fn sys_bracket(a: &Snap, b: &Snap, f: impl Fn(&SystemSample) -> f64) -> Reading<Bracket> {
    Reading::Value(Bracket::new(f(&a.0), f(&b.0)))
}

/// A process's figure in both samples (the first alone if it is gone from
/// the second).
fn proc_bracket(
    a: &Snap,
    b: &Snap,
    pid: u32,
    f: impl Fn(&ProcessSample) -> Option<u64>,
) -> Reading<Bracket> {
    fn find(s: &Snap, pid: u32) -> Option<&ProcessSample> {
        s.1.iter().find(|p| p.pid == pid)
    }
    let Some(pa) = find(a, pid) else {
        return Reading::Unreadable(format!("pid {pid} is not in swapsight's sample"));
    };
    if !pa.readable {
        return Reading::Unreadable(format!(
            "pid {pid} is another user's process: macOS shows its figures only to root"
        ));
    }
    let Some(va) = f(pa) else {
        return Reading::Unreadable("swapsight has no such figure for this process".into());
    };
    let vb = find(b, pid)
        .filter(|p| p.readable)
        .and_then(&f)
        .unwrap_or(va);
    Reading::Value(Bracket::new(va as f64, vb as f64))
}

fn bytes(r: Reading<u64>) -> Reading<f64> {
    r.map(|v| v as f64)
}

fn opt(v: Option<u64>, what: &str) -> Reading<f64> {
    match v {
        Some(v) => Reading::Value(v as f64),
        None => Reading::Unreadable(format!("{what} is out of range")),
    }
}

/// The allocation row: what the child owns against what it mapped. On
/// Linux that is its footprint plus `VmSwap` (swapped pages leave a Linux
/// footprint); on macOS the footprint alone, which keeps compressed and
/// swapped pages. The child also holds its share of the parent's pages and
/// its stack: the slack.
fn allocated_row(a: &Snap, b: &Snap, child: ChildInfo, figure: &str) -> Row {
    judge(
        figure,
        "allocated by the doctor",
        Unit::Bytes,
        proc_bracket(a, b, child.pid, |p| Some(p.owned_bytes())),
        // What it mapped, and the parent's pages it maps too (Linux counts
        // them in the child's RssAnon).
        Reading::Value(child.size_bytes.saturating_add(child.inherited_bytes) as f64),
        Tolerance::new(8.0 * MIB, 2.0),
    )
}

/// The rows of the largest (readable) processes: their footprint against
/// the tool's figure.
fn largest_rows<T>(
    procs: &[(Pick, Reading<T>)],
    a: &Snap,
    b: &Snap,
    tool_name: &str,
    value: impl Fn(&T) -> (f64, Tolerance),
) -> Vec<Row> {
    let base = Tolerance::new(4.0 * MIB, 2.0);
    procs
        .iter()
        .map(|(pick, got)| {
            let (tool, tolerance) = match got {
                Reading::Value(v) => {
                    let (v, t) = value(v);
                    (Reading::Value(v), t)
                }
                Reading::Unreadable(w) => (Reading::Unreadable(w.clone()), base),
            };
            judge(
                &pick.label(),
                tool_name,
                Unit::Bytes,
                proc_bracket(a, b, pick.pid, |p| Some(p.footprint_bytes)),
                tool,
                tolerance,
            )
        })
        .collect()
}

pub(super) fn read_file(path: &str) -> Reading<String> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Reading::Unreadable(format!("cannot read {path}: {e}")),
    };
    let mut text = String::new();
    match file.take(tools::MAX_OUTPUT).read_to_string(&mut text) {
        Ok(_) => Reading::Value(text),
        Err(e) => Reading::Unreadable(format!("cannot read {path}: {e}")),
    }
}

#[cfg(test)]
#[path = "examine_tests.rs"]
mod tests;
