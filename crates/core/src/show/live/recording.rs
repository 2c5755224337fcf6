//! A live session's recordings: starting and stopping one (a
//! [`RecordingSession`], as `record` and `guard` drive it), and the folder
//! of finished ones the UI lists, replays and reports.

use std::path::{Path, PathBuf};

use super::replay::{replay_file, Replay};
use super::{lock, log_marks, repace, Live, LiveError, RECORDING_TOP_N};
use crate::judge::report::Report;
use crate::record::recordings::{self, default_trace_path, Recording, RecordingError};
use crate::record::session::{self, RecordingSession, FIRST_SAMPLE_WAIT};
use crate::util::units::unix_now_ms;

impl Live {
    /// Starts recording the whole machine and the pinned process (or
    /// `pid`) to a new trace in the recordings folder.
    pub fn start_recording(&self, pid: Option<u32>) -> Result<PathBuf, LiveError> {
        self.check_pid(pid)?;
        let mut inner = lock(&self.inner);
        if let Some((r, _)) = &inner.recorder {
            return Err(LiveError::AlreadyRecording(r.path().to_path_buf()));
        }
        let pid = pid.or(inner.pinned);
        let header = session::header(
            inner.host.clone(),
            &session::Plan {
                interval: inner.cfg.sampler.interval,
                top_n: RECORDING_TOP_N,
                watch: pid,
                command: &[],
                verb: "live",
                detector: inner.cfg.sampler.detector.clone(),
                pressure: inner.cfg.sampler.pressure.clone(),
                pressure_absent: inner.pressure_absent.clone(),
                forecast: inner.cfg.sampler.forecast.clone(),
            },
        );
        std::fs::create_dir_all(&inner.cfg.recordings_dir).map_err(|source| {
            crate::record::trace::TraceError::Write {
                path: inner.cfg.recordings_dir.clone(),
                source,
            }
        })?;
        let path = default_trace_path(&inner.cfg.recordings_dir, unix_now_ms());
        // Without a private runtime dir the recording runs unmarked.
        let marks = crate::record::marks::MarkInbox::create(&path).ok();
        let recording = RecordingSession::create(&path, &header, marks)?;
        inner.recorder = Some((recording, pid));
        inner.recording_error = None;
        repace(&mut inner);
        drop(inner);
        if pid.is_some() {
            self.sampler.watch(pid);
        }
        Ok(path)
    }

    /// Stops the recording; returns its path and sample count. A recording
    /// with no sample yet (stopped within a tick of its start) first waits
    /// for the next tick, at most [`FIRST_SAMPLE_WAIT`]: without one the
    /// trace is one `report` and the replay refuse ("no samples").
    pub fn stop_recording(&self) -> Result<(PathBuf, u64), LiveError> {
        self.wait_first_sample(FIRST_SAMPLE_WAIT);
        let mut inner = lock(&self.inner);
        let (mut rec, _) = inner.recorder.take().ok_or(LiveError::NotRecording)?;
        repace(&mut inner);
        let now = inner.points.back().map_or(0, |p| p.t_ms);
        let last = rec.finish_marks(std::time::Instant::now());
        log_marks(&mut inner.phases, &last, now);
        inner.phases.end(now);
        rec.event("recording-stop", "stopped by the user", None, None);
        let path = rec.path().to_path_buf();
        inner.last_recording = Some(path.clone());
        Ok((path, rec.recorder().samples()))
    }

    /// Waits, the lock released so the tick can be written, until the
    /// recording has a sample, it ended, or `wait` passed.
    fn wait_first_sample(&self, wait: std::time::Duration) {
        let until = std::time::Instant::now() + wait;
        let empty = || {
            lock(&self.inner)
                .recorder
                .as_ref()
                .is_some_and(|(r, _)| r.recorder().samples() == 0 && r.failed().is_none())
        };
        while empty() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Where a line marks a phase of the ongoing recording (what
    /// `swapsight mark` finds); `None` when not recording.
    pub fn mark_path(&self) -> Option<PathBuf> {
        lock(&self.inner)
            .recorder
            .as_ref()
            .and_then(|(r, _)| r.mark_path().map(Path::to_path_buf))
    }

    /// The last finished recording, for "Export last recording…".
    pub fn last_recording(&self) -> Option<PathBuf> {
        lock(&self.inner).last_recording.clone()
    }

    /// Whose command lines the session shows ([`super::LiveConfig::commands_of`]).
    pub fn commands_of(&self) -> Option<u32> {
        lock(&self.inner).cfg.commands_of
    }

    /// The folder recordings go to ([`super::LiveConfig::recordings_dir`]).
    pub fn recordings_dir(&self) -> PathBuf {
        lock(&self.inner).cfg.recordings_dir.clone()
    }

    /// The recordings in the folder, newest first.
    pub fn recordings(&self) -> Result<Vec<Recording>, RecordingError> {
        recordings::list(&self.recordings_dir())
    }

    /// The path of recording `name` in the folder; a name that is not a
    /// plain recording name, or no regular file there, is refused.
    pub fn recording(&self, name: &str) -> Result<PathBuf, RecordingError> {
        recordings::resolve(&self.recordings_dir(), name)
    }

    /// Recording `name` shown as the live view shows a session; its `path`
    /// is the name, not where the folder is.
    pub fn replay_recording(&self, name: &str) -> Result<Replay, LiveError> {
        // Streamed, as the report is, with the command lines the session shows.
        replay_file(&self.recording(name)?, Path::new(name), self.commands_of())
    }

    /// The report of recording `name`.
    pub fn report_recording(&self, name: &str) -> Result<Report, LiveError> {
        // Streamed: a recording of any size is judged in bounded memory,
        // with the command lines the session shows.
        let mut reader = crate::record::trace::TraceReader::open(&self.recording(name)?)?
            .keep_commands_of(self.commands_of());
        Ok(crate::judge::report::report_stream(
            &mut reader,
            None,
            |_| {},
        )?)
    }
}
