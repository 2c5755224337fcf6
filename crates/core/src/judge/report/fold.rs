//! The report as one fold over a run's records, whichever way they come: a
//! trace in memory ([`report`](super::report())) or a file as it streams
//! ([`report_stream`](super::report_stream)). The run's verdict, its phase
//! table and its counters are folded here, once.

use super::by_phase::PhaseTable;
use super::judge::RunJudge;
use super::{counters, Report};
use crate::record::trace::{Event, Header, Mark, MarkList, ReadNotes, Record, TraceSample};
use crate::step::detect::DetectorConfig;

/// Makes the judge of a whole run or of one phase.
type NewJudge = Box<dyn Fn() -> RunJudge>;

fn maker(header: &Header, cfg: &Option<DetectorConfig>) -> NewJudge {
    let (header, cfg) = (header.clone(), cfg.clone());
    Box::new(move || RunJudge::new(&header, cfg.clone()))
}

/// The report of a run as its records come.
pub struct ReportFold {
    header: Header,
    cfg: Option<DetectorConfig>,
    run: RunJudge,
    /// The phase table; `None` once a mark came out of order (the spans are
    /// then known only at the end: [`SecondPass`]).
    table: Option<PhaseTable<RunJudge, NewJudge>>,
    marks: MarkList,
    log: counters::CounterLog,
    last_ms: u64,
}

impl ReportFold {
    /// A fold whose phases are told by the marks as they come, as a
    /// recording writes them (each after the samples up to its time).
    pub fn streaming(header: &Header, cfg: Option<DetectorConfig>) -> Self {
        let table = PhaseTable::streaming(header.watching(), maker(header, &cfg));
        Self::with_table(header, cfg, table)
    }

    /// A fold whose phases are known first: the run's `marks` and the time of
    /// its last sample.
    pub fn spans(
        header: &Header,
        cfg: Option<DetectorConfig>,
        marks: &[Mark],
        last_ms: u64,
    ) -> Self {
        let table = PhaseTable::new(marks, last_ms, header.watching(), maker(header, &cfg));
        Self::with_table(header, cfg, table)
    }

    fn with_table(
        header: &Header,
        cfg: Option<DetectorConfig>,
        table: PhaseTable<RunJudge, NewJudge>,
    ) -> Self {
        ReportFold {
            run: RunJudge::new(header, cfg.clone()),
            header: header.clone(),
            cfg,
            table: Some(table),
            marks: MarkList::default(),
            log: counters::CounterLog::default(),
            last_ms: 0,
        }
    }

    /// Takes the next record of the file.
    pub fn push(&mut self, record: Record) {
        match record {
            Record::Counter(c) => self.log.push(&c),
            Record::Sample(s) => {
                self.run.push(&s);
                self.last_ms = s.sample.t_ms;
                if let Some(t) = self.table.as_mut() {
                    t.push_owned(s);
                }
            }
            Record::Event(e) => self.push_event(&e),
            Record::Mark(m) => {
                self.run.note_mark(m.t_ms);
                let kept = self.marks.marks.len();
                self.marks.push(m);
                if let (Some(m), Some(t)) = (self.marks.marks.get(kept), self.table.as_mut()) {
                    if !t.mark(m) {
                        self.table = None;
                    }
                }
            }
            _ => {}
        }
    }

    /// Takes the next sample, kept by the caller.
    pub fn push_sample(&mut self, s: &TraceSample) {
        self.run.push(s);
        self.last_ms = s.sample.t_ms;
        if let Some(t) = self.table.as_mut() {
            t.push(s);
        }
    }

    /// Takes an event of the run.
    pub fn push_event(&mut self, e: &Event) {
        self.run.note_event(e);
    }

    /// Takes the time of a phase mark (the run's span covers its phases).
    pub fn note_mark(&mut self, t_ms: u64) {
        self.run.note_mark(t_ms);
    }

    /// Takes a counter point.
    pub fn push_counter(&mut self, c: &crate::record::trace::Counter) {
        self.log.push(c);
    }

    /// The report; or, when a mark came out of order, the run's verdict
    /// with the phase table still to fold over the samples again.
    pub fn finish(self, notes: &ReadNotes) -> Finished {
        let report = self.run.finish(notes);
        match self.table {
            Some(t) => Finished::Report(super::with_counters(report, t.finish(), &self.log)),
            None => Finished::SecondPass(SecondPass {
                table: PhaseTable::new(
                    &self.marks.marks,
                    self.last_ms,
                    self.header.watching(),
                    maker(&self.header, &self.cfg),
                ),
                report,
                log: self.log,
            }),
        }
    }
}

/// What a [`ReportFold`] ends with.
// Made once a report and taken apart at once by both entry points: a box
// would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Finished {
    /// The report, whole.
    Report(Report),
    /// The run's verdict, with the phase table to fold once more (rare:
    /// a mark out of order).
    SecondPass(SecondPass),
}

impl Finished {
    /// The report, folding the phase table over `samples` when it needs a
    /// second pass.
    pub fn or_second_pass(self, samples: impl IntoIterator<Item = TraceSample>) -> Report {
        match self {
            Finished::Report(r) => r,
            Finished::SecondPass(mut pass) => {
                samples.into_iter().for_each(|s| pass.push_owned(s));
                pass.finish()
            }
        }
    }
}

/// The phase table of a run whose marks came out of order, folded over its
/// samples once more now that every span is known.
pub struct SecondPass {
    report: Report,
    log: counters::CounterLog,
    table: PhaseTable<RunJudge, NewJudge>,
}

impl SecondPass {
    /// Takes the next sample of the second pass.
    pub fn push_owned(&mut self, s: TraceSample) {
        self.table.push_owned(s);
    }

    /// The report with its phase table.
    pub fn finish(self) -> Report {
        super::with_counters(self.report, self.table.finish(), &self.log)
    }
}
