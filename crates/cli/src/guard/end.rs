//! How a guarded run ends: the command's own exit, a stop for a reason
//! (the budget, a signal, a trace that cannot be written), or a sampler
//! that died; in each, the tree is stopped and the trace says how.

use std::path::Path;
use std::process::{ExitCode, ExitStatus};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use swapsight::guard::{stop_line, stop_tree, Signal, StopPlan, StopReason};
use swapsight::sampler::Sampler;
use swapsight::session::RecordingSession;
use swapsight::tree::WatchTree;
use swapsight::Tick;

use crate::exit;
use crate::process::{Processes, SignalNumber};
use crate::session::finished_line;

/// The guarded run once its loop is over: what stops the tree, and the
/// trace that says how the run ended.
pub(super) struct End<'a> {
    pub(super) procs: Processes,
    pub(super) tree: WatchTree,
    pub(super) rec: RecordingSession,
    pub(super) ticks: &'a Receiver<Arc<Tick>>,
    pub(super) pid: u32,
    /// The command's name as the last tick saw it.
    pub(super) root_name: String,
    pub(super) elapsed: Duration,
    pub(super) plan: StopPlan,
}

impl End<'_> {
    /// The run's end, as the loop left it: the tree stopped (or the
    /// command's own exit), the trace closed, the exit code.
    pub(super) fn close(
        mut self,
        outcome: Outcome,
        sampler: Sampler,
        path: &Path,
    ) -> anyhow::Result<ExitCode> {
        let code = match outcome {
            Outcome::Exited(st) => self.exited(st, &sampler),
            Outcome::Stop(reason, first) => self.stopped(&reason, first)?,
            Outcome::SamplerDied => {
                let why = match sampler.stop() {
                    Err(e) => e.to_string(),
                    Ok(()) => "sampler stopped".into(),
                };
                return Err(self.probe_failed(why, path));
            }
        };
        let _ = sampler.stop();
        match self.rec.failed() {
            // The tree is stopped; only the end of the trace is missing.
            Some(why) => eprintln!("swapsight: {why}: the trace ends early"),
            None => eprintln!("{}", finished_line(self.rec.recorder())),
        }
        Ok(code)
    }

    /// The command ended by itself: nothing of its tree may outlive it.
    /// The scope is looked at once more, after the tree is gone, so an OOM
    /// kill at the very end reaches the trace.
    fn exited(&mut self, st: ExitStatus, sampler: &Sampler) -> ExitCode {
        let pid = self.pid;
        let report = stop_tree(&mut self.procs, &mut self.tree, &self.plan);
        if !report.stopped.is_empty() {
            let line = self.stop_line(&StopReason::Leftovers, &report);
            eprintln!("swapsight: {line}");
            self.rec.event("guard-stop", line, Some(pid), None);
        }
        drain(self.ticks, &mut self.rec);
        self.rec.scope_look(sampler.scope_now().as_ref());
        self.rec
            .event("command-exit", format!("{st}"), Some(pid), st.code());
        exit::from_status(st)
    }

    /// Stops the tree for `reason`, `first` the signal it gets first; the
    /// exit code to leave with.
    fn stopped(&mut self, reason: &StopReason, first: Signal) -> anyhow::Result<ExitCode> {
        let pid = self.pid;
        self.plan.first = first;
        let report = stop_tree(&mut self.procs, &mut self.tree, &self.plan);
        let line = self.stop_line(reason, &report);
        let code = match reason {
            StopReason::TraceFailed { .. } => {
                self.procs.wait_main(Duration::from_secs(1));
                return Err(exit::fail(exit::ERROR, line));
            }
            // A signal's code is 128 + its number, the platform's.
            _ => reason
                .exit_code()
                .unwrap_or_else(|| 128u8.wrapping_add(first.number() as u8)),
        };
        eprintln!("swapsight: {line}");
        self.rec
            .event("guard-stop", line, Some(pid), Some(i32::from(code)));
        self.procs.wait_main(Duration::from_secs(1));
        drain(self.ticks, &mut self.rec);
        if let Some(st) = self.procs.main_status {
            self.rec
                .event("command-exit", format!("{st}"), Some(pid), st.code());
        }
        Ok(ExitCode::from(code))
    }

    /// Stops the tree when the sampler died (the run can no longer be
    /// watched); the error to leave with.
    fn probe_failed(&mut self, why: String, path: &Path) -> anyhow::Error {
        let report = stop_tree(&mut self.procs, &mut self.tree, &self.plan);
        let reason = StopReason::ProbeFailed { why };
        let line = self.stop_line(&reason, &report);
        self.rec
            .event("guard-stop", line.clone(), Some(self.pid), Some(1));
        self.procs.wait_main(Duration::from_secs(1));
        let message = format!("{line}; trace kept in {}", path.display());
        exit::fail(exit::ERROR, message)
    }

    fn stop_line(&self, reason: &StopReason, report: &swapsight::guard::StopReport) -> String {
        stop_line(reason, self.elapsed, (self.pid, &self.root_name), report)
    }
}

pub(super) enum Outcome {
    Exited(ExitStatus),
    Stop(StopReason, Signal),
    SamplerDied,
}

/// The ticks that came in while the tree was being stopped: the trace shows
/// swap after the stop too.
fn drain(ticks: &std::sync::mpsc::Receiver<Arc<Tick>>, rec: &mut RecordingSession) {
    while let Ok(tick) = ticks.try_recv() {
        rec.turn(Some(&tick), Instant::now());
    }
}
