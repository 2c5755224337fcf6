//! What each tick does to a live session: the recording takes it (and its
//! marks become the live phases), the chart's history and the latest
//! snapshot are brought up to date, and every subscriber gets the update
//! with the notifications it calls for.

use std::sync::mpsc::TrySendError;
use std::sync::{Arc, Mutex};

use super::display::{self, Notice, RecordingStatus, Snapshot, Update};
use super::{lock, repace, Inner};
use crate::step::tick::Tick;

/// The marks a recording wrote, into the live phases at `t_ms` (the
/// points' clock).
pub(super) fn log_marks(
    log: &mut crate::record::phases::PhaseLog,
    marks: &[crate::record::trace::Mark],
    t_ms: u64,
) {
    for m in marks {
        if m.end {
            log.end(t_ms);
        } else {
            log.start(&m.name, t_ms);
        }
    }
}

pub(super) fn on_tick(shared: &Mutex<Inner>, tick: &Tick, now: std::time::Instant) {
    let mut inner = lock(shared);
    let inner = &mut *inner;
    if let Some((rec, _)) = inner.recorder.as_mut() {
        let marks = rec.turn(Some(tick), now);
        log_marks(&mut inner.phases, &marks, tick.sample.t_ms);
        if let Some(why) = rec.failed() {
            // Keep sampling; the UI shows the error and the trace so far stays.
            inner.recording_error = Some(why.to_string());
            inner.recorder = None;
            repace(inner);
        }
    }
    let snapshot = snapshot_of(tick, inner);
    let point = display::point_of(tick, &snapshot, inner.cfg.chart_processes);
    let keep_ms = inner.cfg.history_secs * 1000;
    while inner
        .points
        .front()
        .is_some_and(|p| point.t_ms.saturating_sub(p.t_ms) > keep_ms)
    {
        inner.points.pop_front();
    }
    inner.points.push_back(point.clone());
    let mut notices: Vec<Notice> = tick.flags.iter().filter_map(display::notice_of).collect();
    notices.extend(display::forecast_notices(tick));
    let level = tick.sample.system.pressure.and_then(|p| p.level);
    notices.extend(display::pressure_notice(inner.last_level, level));
    inner.last_level = level;
    inner.latest = Some(snapshot.clone());
    let update = Arc::new(Update {
        snapshot,
        point,
        notices,
    });
    inner
        .subscribers
        .retain(|s| match s.try_send(Arc::clone(&update)) {
            Ok(()) | Err(TrySendError::Full(_)) => true,
            Err(TrySendError::Disconnected(_)) => false,
        });
}

fn snapshot_of(tick: &Tick, inner: &Inner) -> Snapshot {
    let rows = display::rows_of(tick, inner.cfg.rows, inner.pinned, &inner.host);
    let state = tick.view.worst;
    Snapshot {
        t_ms: tick.sample.t_ms,
        system: tick.sample.system,
        view: tick.view,
        state,
        title: display::full_title(
            &tick.view,
            state,
            tick.sample.system.pressure.and_then(|p| p.level),
            tick.forecast.nearest(),
            inner.cfg.sampler.forecast.horizon_ms as f64 / 1000.0,
        ),
        process_count: tick.sample.processes.len(),
        processes: rows,
        pinned: inner.pinned,
        recording: inner.recorder.as_ref().map(|(r, pid)| RecordingStatus {
            path: r.path().to_path_buf(),
            samples: r.recorder().samples(),
            elapsed_ms: r.recorder().elapsed_ms(),
            pid: *pid,
        }),
        measures_process_swap: crate::probe::MEASURES_PROCESS_SWAP,
        phase: inner.phases.current().map(String::from),
        phases: inner.phases.recent(
            tick.sample
                .t_ms
                .saturating_sub(inner.cfg.history_secs.saturating_mul(1000)),
            tick.sample.t_ms,
        ),
        forecast: tick.forecast,
        scope: tick.sample.scope.clone(),
        caches: inner
            .recorder
            .as_ref()
            .map(|(r, _)| {
                let v = &tick.view;
                let swap_grew = v.swap_growth_bytes > 0
                    && v.swap_growth_bytes.unsigned_abs() >= v.swap_tolerance_bytes;
                r.caches().findings(swap_grew)
            })
            .unwrap_or_default(),
    }
}
