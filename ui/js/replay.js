// @ts-check
// The replay view: a recorded run in the same header, chart and table, with
// a banner saying which run and its verdict; and the way back to live.

import { call, inTauri } from './transport.js';
import { bytes, duration } from './format.js';
import { renderHeader, replayFigures, setBadge } from './header.js';
import { loadLive } from './live.js';
import { $, app, chart, closeMenus, fail, setLastRecording, table, toggleMenu } from './page.js';

/** @param {string} text */
function note(text) {
  return Object.assign(document.createElement('div'), { className: 'menu-note', textContent: text });
}

/** The app opens a trace with its file dialog; a browser lists the server's recordings. */
export async function openReplay() {
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
  menu.replaceChildren(note('Loading…'));
  try {
    const list = await call('recordings');
    if (!list.length) {
      menu.replaceChildren(note('No recordings yet.'));
      return;
    }
    menu.replaceChildren(
      ...list.slice(0, 30).map((/** @type {any} */ r) => {
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

/**
 * @param {any} r the replay
 * @param {string | null} name the recording's name, when it has one
 */
export function showReplay(r, name) {
  app.mode = 'replay';
  app.replayName = name;
  document.body.dataset.mode = 'replay';
  const rep = r.report;
  const file = name || String(r.path).split(/[\\/]/).pop() || '';
  $('#banner').hidden = false;
  $('#banner-title').textContent = `Replay · ${file}`;
  setBadge($('#banner-verdict'), rep.verdict);
  $('#banner-summary').textContent = rep.summary;
  // A long run's chart is thinned: say so where the sample count is.
  const thinned = r.thinned_from
    ? [`chart: ${r.points.length} points for ${r.thinned_from} samples (the lowest and highest of each stretch)`]
    : [];
  $('#banner').title = [`${duration(rep.duration_ms)} · ${rep.samples} samples`, ...thinned, ...(r.problems || [])].join('\n');
  $('#source').hidden = false;
  $('#source').textContent = 'replay';
  renderHeader(replayFigures(r));
  chart.set({ points: r.points, names: r.names, live: false, phases: r.phases, counters: r.counters });
  table.update(r.processes, { showSwap: r.processes.some((/** @type {any} */ p) => p.swap_bytes != null), readOnly: true });
  setLastRecording(app.lastRecording);
}

/** `#replay=<name>` opens that recording (a link `swapsight serve` can give). */
export async function routeFromHash() {
  const m = /(?:^#|&)replay=([^&]+)/.exec(window.location.hash || '');
  if (!m) return;
  const name = decodeURIComponent(m[1]);
  try {
    showReplay(await call('replay', { name }), name);
  } catch (e) {
    fail(e);
  }
}

export async function backToLive() {
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
