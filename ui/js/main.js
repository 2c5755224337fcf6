// The popover: header figures, live chart, process table, recording,
// export and replay. Talks to the session only through transport.js, so the
// same page works inside the menu-bar app and served by `swapsight serve`.

import { call, onUpdate, inTauri, fetchOk, exportPath } from './transport.js';
import { Chart } from './chart.js';
import { ProcessTable } from './table.js';
import { bytes, duration, pct, stateLabel } from './format.js';

const HISTORY_S = 300;
const $ = (sel) => document.querySelector(sel);

const app = {
  mode: 'live', // or 'replay'
  snapshot: null,
  lastRecording: null, // name of the newest recording (export target)
  replayName: null, // recording shown in replay, when it has a name
  statusTimer: 0,
};

const chart = new Chart($('#chart'), $('#legend'));
const table = new ProcessTable($('#processes'), {
  onPin: (pid) =>
    call('pin', { pid })
      .then(() => say(pid == null ? 'Unpinned.' : `Pinned pid ${pid}: its tree is watched and recorded.`))
      .catch(fail),
  onHover: (pid) => chart.setHighlight(pid),
});

// ------------------------------------------------------------------ status
function say(text, kind = 'info') {
  const el = $('#status');
  el.textContent = text;
  el.dataset.kind = kind;
  clearTimeout(app.statusTimer);
  app.statusTimer = setTimeout(() => {
    el.textContent = '';
    delete el.dataset.kind;
  }, kind === 'error' ? 10000 : 6000);
}

function fail(e) {
  console.error(e);
  say(e && e.message ? e.message : String(e), 'error');
}

function setBadge(el, state, text) {
  el.dataset.state = state;
  el.className = `badge state-${state}`;
  el.textContent = text ?? stateLabel(state);
}

// ------------------------------------------------------------------ header
function renderHeader(s) {
  const sys = s.system;
  const view = s.view;
  $('#free').textContent = pct(sys.free_pct);
  $('#free-sub').textContent = `of ${bytes(sys.phys_bytes)}`;
  $('#free-fig').classList.toggle('low', sys.free_pct < 15);

  $('#swap').textContent = bytes(sys.swap_used_bytes);
  const growth = view.swap_growth_bytes;
  const arrow = growth > 0 ? '⇡' : growth < 0 ? '⇣' : '';
  $('#swap-sub').textContent = `${arrow}${bytes(Math.abs(growth))} since baseline`;
  $('#swap-sub').title = `Swap grew ${bytes(view.swap_growth_window_bytes)} in the detector's window (tolerance ${bytes(view.swap_tolerance_bytes)})`;
  $('#swap-fig').classList.toggle('climbing', !!view.swap_climbing);

  const comp = sys.compressed_bytes || 0;
  $('#compressed-fig').hidden = !(comp > 0);
  if (comp > 0) $('#compressed').textContent = bytes(comp);

  renderGap(view);

  $('#count').textContent = String(s.process_count);
  const share = view.footprints_share;
  $('#count-sub').textContent = share ? `footprints ${Math.round(share * 100)} % of RAM` : '';

  setBadge($('#state'), s.state);
  $('#state').title = s.title ? `Menu bar: ${s.title}` : 'Nothing flagged';
  renderPhase(s.phase);
}

/** The phase the recording marked last (`swapsight mark`, $SWAPSIGHT_MARK). */
function renderPhase(name) {
  const el = $('#phase');
  el.hidden = !name;
  el.textContent = name ? `phase: ${name}` : '';
}

/** Memory not explained by footprints: used memory − Σ readable footprints. */
function renderGap(view) {
  const gap = view.gap;
  $('#gap-fig').hidden = !gap;
  if (!gap) return;
  $('#gap').textContent = bytes(gap.unexplained_bytes);
  const grew = view.unexplained_growth_window_bytes || 0;
  const parts = [`footprints: ${Math.round((gap.coverage || 0) * 100)} % of used`];
  if (grew > 0) parts.push(`⇡${bytes(grew)} in window`);
  if (gap.unreadable) parts.push(`${gap.unreadable} unreadable`);
  $('#gap-sub').textContent = parts.join(' · ');
  const extra = [];
  if (gap.wired_bytes != null) extra.push(`wired ${bytes(gap.wired_bytes)}`);
  if (gap.compressor_bytes) extra.push(`compressor ${bytes(gap.compressor_bytes)}`);
  if (gap.gpu_bytes) extra.push(`GPU memory of readable processes ${bytes(gap.gpu_bytes)}`);
  if (gap.outside_footprint_bytes) extra.push(`owned outside footprints ${bytes(gap.outside_footprint_bytes)}`);
  $('#gap-sub').title = [
    `used ${bytes(gap.used_bytes)} − readable footprints ${bytes(gap.footprints_bytes)}`,
    ...extra,
    'A false fit is this gap growing while swap climbs and free memory falls.',
  ].join('\n');
  $('#gap-fig').classList.toggle('climbing', grew > 0 && !!view.swap_climbing);
}

function renderRecording(s) {
  const rec = s && s.recording;
  const btn = $('#record');
  btn.classList.toggle('on', !!rec);
  btn.querySelector('.label').textContent = rec ? 'Stop' : 'Record';
  btn.title = rec
    ? `Stop recording (${rec.path})`
    : "Record the whole machine (and the pinned process's tree) to a trace";
  $('#rec-status').textContent = rec
    ? `${duration(rec.elapsed_ms).replace(/\.\ds$/, 's')} · ${rec.samples} samples${rec.pid ? ` · pid ${rec.pid}` : ''}`
    : '';
}

function renderLive(s) {
  renderHeader(s);
  table.update(s.processes, { showSwap: s.measures_process_swap, readOnly: false });
}

function namesOf(rows) {
  return rows.map((r) => [r.pid, r.name]);
}

// --------------------------------------------------------------- updates
function onLiveUpdate(u) {
  app.snapshot = u.snapshot;
  renderRecording(u.snapshot);
  if (app.mode !== 'live') return;
  renderLive(u.snapshot);
  chart.setPhases(u.snapshot.phases);
  chart.push(u.point, namesOf(u.snapshot.processes));
}

async function loadLive() {
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

/**
 * `body[data-shown]`: when (epoch ms) a kept page was on screen again, its
 * figures current (updates reach a hidden page too). The app keeps a hidden
 * popover built for a while, so a second look shows this page again rather
 * than a new one ([`markPainted`] times a new one).
 */
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState !== 'visible') return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      document.body.dataset.shown = String(Math.round(performance.timeOrigin + performance.now()));
    }),
  );
});

// --------------------------------------------------------------- record
async function toggleRecording() {
  const btn = $('#record');
  btn.disabled = true;
  try {
    if (app.snapshot && app.snapshot.recording) {
      const r = await call('stop_recording');
      setLastRecording(r.name);
      say(`Saved ${r.samples} samples to ${r.name}.`);
      if (app.snapshot) app.snapshot.recording = null;
    } else {
      const r = await call('start_recording', {});
      say(`Recording to ${r.name}…`);
    }
  } catch (e) {
    fail(e);
  } finally {
    btn.disabled = false;
    renderRecording(app.snapshot);
  }
}

function setLastRecording(name) {
  app.lastRecording = name || null;
  const target = exportTarget();
  $('#export').disabled = !target;
  $('#export').title = target ? `Export ${target}` : 'Record something first, then export it';
}

function exportTarget() {
  return (app.mode === 'replay' && app.replayName) || app.lastRecording;
}

// --------------------------------------------------------------- menus
function closeMenus(except) {
  for (const m of document.querySelectorAll('.menu')) {
    if (m === except) continue;
    m.hidden = true;
    m.previousElementSibling?.setAttribute('aria-expanded', 'false');
  }
}

function toggleMenu(menu) {
  const open = menu.hidden;
  closeMenus(menu);
  menu.hidden = !open;
  menu.previousElementSibling.setAttribute('aria-expanded', String(open));
  if (open) menu.querySelector('button')?.focus();
}

document.addEventListener('click', (e) => {
  if (!e.target.closest('.menu-wrap')) closeMenus();
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') closeMenus();
});

// --------------------------------------------------------------- export
async function doExport(format) {
  closeMenus();
  const name = exportTarget();
  try {
    if (inTauri) {
      const path = await call('export_recording', { format, name });
      if (path) say(`Exported to ${path}.`);
      return;
    }
    if (!name) throw new Error('no recording yet: record one first');
    const res = await fetchOk(exportPath(name, format));
    const blob = await res.blob();
    const ext = { jsonl: 'jsonl', csv: 'csv', perfetto: 'json', png: 'png' }[format];
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `${name.replace(/\.jsonl$/, '')}.${ext}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    say(`Downloaded ${a.download}.`);
  } catch (e) {
    fail(e);
  }
}

// --------------------------------------------------------------- replay
async function openReplay() {
  if (inTauri) {
    closeMenus();
    try {
      const r = await call('open_trace');
      if (r) showReplay(r, null);
    } catch (e) {
      fail(e);
    }
    return;
  }
  const menu = $('#replay-menu');
  toggleMenu(menu);
  if (menu.hidden) return;
  menu.replaceChildren(Object.assign(document.createElement('div'), { className: 'menu-note', textContent: 'Loading…' }));
  try {
    const list = await call('recordings');
    if (!list.length) {
      menu.replaceChildren(Object.assign(document.createElement('div'), { className: 'menu-note', textContent: 'No recordings yet.' }));
      return;
    }
    menu.replaceChildren(
      ...list.slice(0, 30).map((r) => {
        const b = document.createElement('button');
        b.type = 'button';
        b.setAttribute('role', 'menuitem');
        b.dataset.name = r.name;
        const n = document.createElement('span');
        n.textContent = r.name;
        const m = document.createElement('small');
        m.textContent = `${new Date(r.modified_ms).toLocaleString()} · ${bytes(r.bytes)}`;
        b.append(n, m);
        b.addEventListener('click', async () => {
          closeMenus();
          try {
            showReplay(await call('replay', { name: r.name }), r.name);
          } catch (e) {
            fail(e);
          }
        });
        return b;
      }),
    );
  } catch (e) {
    menu.hidden = true;
    fail(e);
  }
}

function showReplay(r, name) {
  app.mode = 'replay';
  app.replayName = name;
  document.body.dataset.mode = 'replay';
  const rep = r.report;
  const file = name || String(r.path).split(/[\\/]/).pop();
  $('#banner').hidden = false;
  $('#banner-title').textContent = `Replay · ${file}`;
  setBadge($('#banner-verdict'), rep.verdict);
  $('#banner-summary').textContent = rep.summary;
  $('#banner').title = [
    `${duration(rep.duration_ms)} · ${rep.samples} samples`,
    ...(r.problems || []),
  ].join('\n');
  $('#source').hidden = false;
  $('#source').textContent = 'replay';

  // Header: the run's own figures.
  setBadge($('#state'), rep.verdict);
  $('#free').textContent = pct(rep.min_free_pct);
  $('#free-sub').textContent = `lowest, of ${bytes(rep.phys_bytes)}`;
  $('#swap').textContent = `${rep.swap_growth_bytes > 0 ? '⇡' : ''}${bytes(rep.swap_growth_bytes)}`;
  $('#swap-sub').textContent = `grew during the run (${duration(rep.duration_ms)})`;
  $('#swap-fig').classList.toggle('climbing', rep.swap_growth_bytes > rep.swap_tolerance_bytes);
  $('#compressed-fig').hidden = true;
  const fp = rep.footprints;
  $('#gap-fig').hidden = !fp;
  if (fp) {
    $('#gap').textContent = `${fp.unexplained_growth_bytes > 0 ? '⇡' : ''}${bytes(fp.unexplained_growth_bytes)}`;
    $('#gap-sub').textContent = `grew to ${bytes(fp.unexplained_peak_bytes)}; footprints ≥ ${Math.round((fp.min_coverage || 0) * 100)} % of used`;
    $('#gap-sub').title = '';
  }
  $('#count').textContent = String(rep.processes.length);
  $('#count-sub').textContent = 'in the trace';

  chart.set({ points: r.points, names: r.names, live: false, phases: r.phases });
  const phases = r.phases || [];
  renderPhase(null);
  if (phases.length) {
    const names = phases.map((p) => p.name);
    $('#phase').hidden = false;
    $('#phase').textContent = `phases: ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}`;
  }
  table.update(r.processes, { showSwap: r.processes.some((p) => p.swap_bytes != null), readOnly: true });
  setLastRecording(app.lastRecording);
}

/** `#replay=<name>` opens that recording (a link `swapsight serve` can give). */
async function routeFromHash() {
  const m = /(?:^#|&)replay=([^&]+)/.exec(window.location.hash || '');
  if (!m) return;
  const name = decodeURIComponent(m[1]);
  try {
    showReplay(await call('replay', { name }), name);
  } catch (e) {
    fail(e);
  }
}

async function backToLive() {
  if (/(?:^#|&)replay=/.test(window.location.hash || '')) {
    history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  app.mode = 'live';
  app.replayName = null;
  delete document.body.dataset.mode;
  $('#banner').hidden = true;
  $('#source').hidden = true;
  setLastRecording(app.lastRecording);
  try {
    await loadLive();
  } catch (e) {
    fail(e);
  }
}

// --------------------------------------------------------------- wiring
$('#record').addEventListener('click', toggleRecording);
$('#export').addEventListener('click', () => toggleMenu($('#export-menu')));
for (const b of document.querySelectorAll('#export-menu [data-format]')) {
  b.addEventListener('click', () => doExport(b.dataset.format));
}
$('#replay').addEventListener('click', openReplay);
$('#live').addEventListener('click', backToLive);
$('#reset').addEventListener('click', () =>
  call('reset_baseline')
    .then(() => say('Baseline reset: swap growth counts from now.'))
    .catch(fail),
);
$('#filter').addEventListener('input', (e) => table.setFilter(e.target.value));

document.body.dataset.transport = inTauri ? 'tauri' : 'http';
window.addEventListener('hashchange', routeFromHash);
onUpdate(onLiveUpdate);
loadLive()
  .catch(fail)
  .then(routeFromHash);
call('recordings')
  .then((list) => setLastRecording(list && list.length ? list[0].name : null))
  .catch(() => setLastRecording(null));
