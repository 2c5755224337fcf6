// @ts-check
// The header's figures, one renderer for both views: live (the machine now)
// and replay (a recorded run). `liveFigures` and `replayFigures` are pure —
// what each figure says, from a snapshot or a replay — so `node --test`
// covers them; `renderHeader` only writes them into the page.

import { bytes, duration, pct, stateLabel } from './format.js';

/**
 * @typedef {{ text: string, sub: string, title?: string, flag?: boolean }} Figure
 * @typedef {{
 *   state: string, stateTitle: string,
 *   free: Figure, swap: Figure, compressed: string | null,
 *   gap: Figure | null, count: Figure, phase: string | null,
 * }} Figures
 */

/**
 * A live snapshot's header.
 * @param {any} s the session's snapshot
 * @returns {Figures}
 */
export function liveFigures(s) {
  const sys = s.system;
  const view = s.view;
  const growth = view.swap_growth_bytes;
  const arrow = growth > 0 ? '⇡' : growth < 0 ? '⇣' : '';
  const comp = sys.compressed_bytes || 0;
  const share = view.footprints_share;
  return {
    state: s.state,
    stateTitle: s.title ? `Menu bar: ${s.title}` : 'Nothing flagged',
    free: { text: pct(sys.free_pct), sub: `of ${bytes(sys.phys_bytes)}`, flag: sys.free_pct < 15 },
    swap: {
      text: bytes(sys.swap_used_bytes),
      sub: `${arrow}${bytes(Math.abs(growth))} since baseline`,
      title: `Swap grew ${bytes(view.swap_growth_window_bytes)} in the detector's window (tolerance ${bytes(view.swap_tolerance_bytes)})`,
      flag: !!view.swap_climbing,
    },
    compressed: comp > 0 ? bytes(comp) : null,
    gap: liveGap(view),
    count: { text: String(s.process_count), sub: share ? `footprints ${Math.round(share * 100)} % of RAM` : '' },
    phase: s.phase ? `phase: ${s.phase}` : null,
  };
}

/**
 * Memory not explained by footprints: used memory − Σ readable footprints.
 * @param {any} view
 * @returns {Figure | null}
 */
function liveGap(view) {
  const gap = view.gap;
  if (!gap) return null;
  const grew = view.unexplained_growth_window_bytes || 0;
  const parts = [`footprints: ${Math.round((gap.coverage || 0) * 100)} % of used`];
  if (grew > 0) parts.push(`⇡${bytes(grew)} in window`);
  if (gap.unreadable) parts.push(`${gap.unreadable} unreadable`);
  const extra = [];
  if (gap.wired_bytes != null) extra.push(`wired ${bytes(gap.wired_bytes)}`);
  if (gap.compressor_bytes) extra.push(`compressor ${bytes(gap.compressor_bytes)}`);
  if (gap.gpu_bytes) extra.push(`GPU memory of readable processes ${bytes(gap.gpu_bytes)}`);
  if (gap.outside_footprint_bytes) extra.push(`owned outside footprints ${bytes(gap.outside_footprint_bytes)}`);
  return {
    text: bytes(gap.unexplained_bytes),
    sub: parts.join(' · '),
    title: [
      `used ${bytes(gap.used_bytes)} − readable footprints ${bytes(gap.footprints_bytes)}`,
      ...extra,
      'A false fit is this gap growing while swap climbs and free memory falls.',
    ].join('\n'),
    flag: grew > 0 && !!view.swap_climbing,
  };
}

/**
 * A replayed run's header: the run's own figures (lowest free memory, swap
 * growth over the run, the phases it marked).
 * @param {any} r the replay (report, points, processes, phases)
 * @returns {Figures}
 */
export function replayFigures(r) {
  const rep = r.report;
  const fp = rep.footprints;
  const names = (r.phases || []).map((/** @type {{name: string}} */ p) => p.name);
  return {
    state: rep.verdict,
    stateTitle: `Verdict of the run: ${stateLabel(rep.verdict)}`,
    free: { text: pct(rep.min_free_pct), sub: `lowest, of ${bytes(rep.phys_bytes)}`, flag: rep.min_free_pct < 15 },
    swap: {
      text: `${rep.swap_growth_bytes > 0 ? '⇡' : ''}${bytes(rep.swap_growth_bytes)}`,
      sub: `grew during the run (${duration(rep.duration_ms)})`,
      title: `Tolerance ${bytes(rep.swap_tolerance_bytes)}`,
      flag: rep.swap_growth_bytes > rep.swap_tolerance_bytes,
    },
    compressed: null,
    gap: fp
      ? {
          text: `${fp.unexplained_growth_bytes > 0 ? '⇡' : ''}${bytes(fp.unexplained_growth_bytes)}`,
          sub: `grew to ${bytes(fp.unexplained_peak_bytes)}; footprints ≥ ${Math.round((fp.min_coverage || 0) * 100)} % of used`,
          title: '',
          flag: false,
        }
      : null,
    count: { text: String(rep.processes.length), sub: 'in the trace' },
    phase: names.length ? `phases: ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}` : null,
  };
}

/**
 * A state badge: its class, data and words.
 * @param {HTMLElement} el
 * @param {string} state
 * @param {string} [text]
 */
export function setBadge(el, state, text) {
  el.dataset.state = state;
  el.className = `badge state-${state}`;
  el.textContent = text ?? stateLabel(state);
}

/**
 * Writes `f` into the header.
 * @param {Figures} f
 */
export function renderHeader(f) {
  const el = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
  /**
   * @param {string} id
   * @param {Figure} fig
   * @param {string} flagClass
   */
  const figure = (id, fig, flagClass) => {
    el(id).textContent = fig.text;
    el(`${id}-sub`).textContent = fig.sub;
    if (fig.title != null) el(`${id}-sub`).title = fig.title;
    el(`${id}-fig`).classList.toggle(flagClass, !!fig.flag);
  };
  setBadge(el('state'), f.state);
  el('state').title = f.stateTitle;
  figure('free', f.free, 'low');
  figure('swap', f.swap, 'climbing');
  el('compressed-fig').hidden = f.compressed == null;
  if (f.compressed != null) el('compressed').textContent = f.compressed;
  el('gap-fig').hidden = !f.gap;
  if (f.gap) figure('gap', f.gap, 'climbing');
  figure('count', f.count, 'none');
  el('phase').hidden = !f.phase;
  el('phase').textContent = f.phase || '';
}
