// @ts-check
// What the live and the replay views share: the page's state, the chart and
// the table, the status line, the menus and the export target.

import { call } from './transport.js';
import { Chart } from './chart.js';
import { ProcessTable } from './table.js';

/**
 * @param {string} sel
 * @returns {HTMLElement}
 */
export const $ = (sel) => /** @type {HTMLElement} */ (document.querySelector(sel));

export const app = {
  mode: 'live', // or 'replay'
  /** @type {any} */
  snapshot: null,
  /** @type {string | null} name of the newest recording (export target) */
  lastRecording: null,
  /** @type {string | null} recording shown in replay, when it has a name */
  replayName: null,
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  statusTimer: undefined,
};

export const chart = new Chart(/** @type {HTMLCanvasElement} */ ($('#chart')), $('#legend'));
export const table = new ProcessTable(/** @type {HTMLTableElement} */ ($('#processes')), {
  onPin: (/** @type {number | null} */ pid) =>
    call('pin', { pid })
      .then(() => say(pid == null ? 'Unpinned.' : `Pinned pid ${pid}: its tree is watched and recorded.`))
      .catch(fail),
  onHover: (/** @type {number | null} */ pid) => chart.setHighlight(pid),
});

/**
 * One line of status under the header, gone after a while.
 * @param {string} text
 * @param {'info' | 'error'} [kind]
 */
export function say(text, kind = 'info') {
  const el = $('#status');
  el.textContent = text;
  el.dataset.kind = kind;
  clearTimeout(app.statusTimer);
  app.statusTimer = setTimeout(() => {
    el.textContent = '';
    delete el.dataset.kind;
  }, kind === 'error' ? 10000 : 6000);
}

/** @param {any} e */
export function fail(e) {
  console.error(e);
  say(e && e.message ? e.message : String(e), 'error');
}

/** @param {Element} [except] */
export function closeMenus(except) {
  for (const m of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.menu'))) {
    if (m === except) continue;
    m.hidden = true;
    m.previousElementSibling?.setAttribute('aria-expanded', 'false');
  }
}

/** @param {HTMLElement} menu */
export function toggleMenu(menu) {
  const open = menu.hidden;
  closeMenus(menu);
  menu.hidden = !open;
  menu.previousElementSibling?.setAttribute('aria-expanded', String(open));
  if (open) menu.querySelector('button')?.focus();
}

/** What Export exports: the replayed recording, else the newest one. */
export function exportTarget() {
  return (app.mode === 'replay' && app.replayName) || app.lastRecording;
}

/** @param {string | null | undefined} name */
export function setLastRecording(name) {
  app.lastRecording = name || null;
  const target = exportTarget();
  const btn = /** @type {HTMLButtonElement} */ ($('#export'));
  btn.disabled = !target;
  btn.title = target ? `Export ${target}` : 'Record something first, then export it';
}
