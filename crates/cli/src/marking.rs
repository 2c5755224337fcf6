//! Phase marks in `record` and `guard`: the mark path the command inherits
//! (`SWAPSIGHT_MARK`), looked at on every turn of the recording loop (every
//! 100 ms at most), each mark written to the trace as it comes.

use std::path::Path;

use swapsight::marks::{MarkInbox, MarkLine, ENV_VAR};

use crate::session::TraceSink;

pub struct Marks {
    inbox: Option<MarkInbox>,
    /// The phase open now, to end it by name and to say so once.
    current: Option<String>,
    dropped_told: u64,
}

impl Marks {
    /// The inbox for a recording to `trace`. Without one (no private
    /// runtime directory) the run is recorded without marks, said once.
    pub fn open(trace: &Path) -> Marks {
        let inbox = match MarkInbox::create(trace) {
            Ok(i) => Some(i),
            Err(e) => {
                eprintln!("swapsight: warning: phase marks are off: {e}");
                None
            }
        };
        Marks {
            inbox,
            current: None,
            dropped_told: 0,
        }
    }

    /// Puts the mark path in the command's environment.
    pub fn export(&self, command: &mut std::process::Command) {
        if let Some(i) = &self.inbox {
            command.env(ENV_VAR, i.path());
        }
    }

    /// Writes the marks that came in since the last look.
    pub fn pump(&mut self, sink: &mut TraceSink) {
        let lines = match self.inbox.as_mut() {
            Some(inbox) => inbox.poll(),
            None => return,
        };
        self.write(lines, sink);
    }

    fn write(&mut self, lines: Vec<MarkLine>, sink: &mut TraceSink) {
        let Some(inbox) = self.inbox.as_ref() else {
            return;
        };
        for line in lines {
            match line {
                MarkLine::Start(name) => {
                    sink.mark(&name, false);
                    self.current = Some(name);
                }
                MarkLine::End(name) => {
                    let name = name.or_else(|| self.current.take()).unwrap_or_default();
                    sink.mark(&name, true);
                    self.current = None;
                }
            }
        }
        let dropped = inbox.dropped();
        if dropped > self.dropped_told {
            sink.event(
                "marks-dropped",
                format!(
                    "{dropped} marks dropped in all: over {} a second, a write over 64 KiB cut \
                     short (the marks past the cut are not counted), or a mark path that was \
                     not a regular file",
                    swapsight::marks::MAX_PER_SECOND
                ),
                None,
                None,
            );
            self.dropped_told = dropped;
        }
    }

    /// The recording ends: the reader's last look, and `swapsight mark` no
    /// longer finds it.
    pub fn finish(&mut self, sink: &mut TraceSink) {
        self.pump(sink);
        let last = self.inbox.as_mut().map(|i| i.finish()).unwrap_or_default();
        self.write(last, sink);
    }
}
