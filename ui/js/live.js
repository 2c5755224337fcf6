// @ts-check
// The live view: the machine now, updated by the session's events, and the
// Record button.

import { call } from './transport.js';
import { duration } from './format.js';
import { liveFigures, renderHeader } from './header.js';
import { $, app, chart, fail, say, setLastRecording, table } from './page.js';

const HISTORY_S = 300;

/** @param {any[]} rows */
function namesOf(rows) {
  return rows.map((r) => [r.pid, r.name]);
}

/** @param {any} s */
function renderLive(s) {
  renderHeader(liveFigures(s));
  table.update(s.processes, { showSwap: s.measures_process_swap, readOnly: false });
}

/** @param {any} s */
export function renderRecording(s) {
  const rec = s && s.recording;
  const btn = $('#record');
  btn.classList.toggle('on', !!rec);
  /** @type {HTMLElement} */ (btn.querySelector('.label')).textContent = rec ? 'Stop' : 'Record';
  btn.title = rec
    ? `Stop recording (${rec.path})`
    : "Record the whole machine (and the pinned process's tree) to a trace";
  $('#rec-status').textContent = rec
    ? `${duration(rec.elapsed_ms).replace(/\.\ds$/, 's')} · ${rec.samples} samples${rec.pid ? ` · pid ${rec.pid}` : ''}`
    : '';
}

/**
 * Whether updates came while the page was hidden and are not drawn yet. The
 * app keeps a hidden popover built for a while (after a hide, and a minute
 * after it starts); its page keeps every update but draws none until it is
 * on screen again ({@link catchUp}), so a kept page costs the web process
 * next to nothing.
 */
let behind = false;

/**
 * A recording this page started, until an update shows it: the button is on
 * from the start's answer, not from the next update (a tick away, more on a
 * loaded machine, and one already on its way says "not recording"), so a
 * second click stops rather than starts again. Kept at most
 * {@link STARTED_HOLD_MS}: a recording stopped elsewhere meanwhile shows off.
 * @type {{status: any, at: number} | null}
 */
let started = null;
const STARTED_HOLD_MS = 10_000;

/** @param {any} u an update: {snapshot, point, notices} */
export function onLiveUpdate(u) {
  if (started && !u.snapshot.recording && Date.now() - started.at < STARTED_HOLD_MS) {
    u.snapshot.recording = started.status;
  } else {
    started = null;
  }
  app.snapshot = u.snapshot;
  if (app.mode === 'live') {
    chart.setPhases(u.snapshot.phases);
    // Drawn at the next frame, which a hidden page does not get.
    chart.push(u.point, namesOf(u.snapshot.processes));
  }
  if (document.visibilityState === 'hidden') {
    behind = true;
    return;
  }
  renderRecording(u.snapshot);
  if (app.mode === 'live') renderLive(u.snapshot);
}

/** The page is on screen again: draws the last update it kept while hidden. */
export function catchUp() {
  if (!behind || !app.snapshot) return;
  behind = false;
  renderRecording(app.snapshot);
  if (app.mode === 'live') renderLive(app.snapshot);
}

export async function loadLive() {
  if (!performance.getEntriesByName('live-ask').length) performance.mark('live-ask');
  const [snap, points] = await Promise.all([call('snapshot'), call('history', { seconds: HISTORY_S })]);
  // When the figures arrived: the app's benchmark splits an open's time by it.
  if (!performance.getEntriesByName('live-data').length) performance.mark('live-data');
  if (snap) {
    app.snapshot = snap;
    renderLive(snap);
    renderRecording(snap);
  }
  chart.set({ points: points || [], names: snap ? namesOf(snap.processes) : [], spanMs: HISTORY_S * 1000, live: true, phases: snap ? snap.phases : [] });
  // Where the history drawn starts: the same after the popover is rebuilt.
  document.body.dataset.historyFrom = points && points.length ? String(points[0].t_ms) : '';
  if (!performance.getEntriesByName('live-rendered').length) performance.mark('live-rendered');
  if (snap) markPainted();
}

/**
 * `body[data-painted]`: when (epoch ms) the first frame with current figures
 * and the history was on screen. The popover is rebuilt at every open (the
 * app closes it when it hides), so this is how long an open took; the app's
 * benchmark and end-to-end test read it. Two frames: the callback of the
 * second runs once the first has been painted.
 */
function markPainted() {
  if (document.body.dataset.painted) return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      document.body.dataset.painted = String(Math.round(performance.timeOrigin + performance.now()));
    }),
  );
}

export async function toggleRecording() {
  const btn = /** @type {HTMLButtonElement} */ ($('#record'));
  btn.disabled = true;
  try {
    // Before the first update there is no snapshot; a start is still known.
    if ((app.snapshot && app.snapshot.recording) || (!app.snapshot && started)) {
      const r = await call('stop_recording');
      setLastRecording(r.name);
      say(`Saved ${r.samples} samples to ${r.name}.`);
      started = null;
      if (app.snapshot) app.snapshot.recording = null;
    } else {
      const r = await call('start_recording', {});
      say(`Recording to ${r.name}…`);
      started = { status: { path: r.name, samples: 0, elapsed_ms: 0, pid: null }, at: Date.now() };
      if (app.snapshot) app.snapshot.recording = started.status;
    }
  } catch (e) {
    fail(e);
  } finally {
    btn.disabled = false;
    renderRecording(app.snapshot || (started && { recording: started.status }));
  }
}
