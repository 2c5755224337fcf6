// @ts-check
// The header's figures, one renderer for both views: live (the machine now)
// and replay (a recorded run). `liveFigures` and `replayFigures` are pure —
// what each figure says, from a snapshot or a replay — so `node --test`
// covers them; `renderHeader` only writes them into the page.

import { LOW_FREE_PCT } from './contract.js';
import { bytes, duration, eta, limit, pct, stateLabel } from './format.js';

/**
 * @typedef {{ text: string, sub: string, title?: string, flag?: boolean }} Figure
 * @typedef {{
 *   state: string, stateTitle: string,
 *   free: Figure, swap: Figure, compressed: string | null,
 *   gap: Figure | null, count: Figure, phase: string | null,
 *   pressure: (Figure & { level: string }) | null, trouble: string | null,
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
  const scope = s.scope || null;
  const swapUsed = scope && scope.swap_bytes != null ? scope.swap_bytes : sys.swap_used_bytes;
  return {
    state: s.state,
    stateTitle: s.title ? `Menu bar: ${s.title}` : 'Nothing flagged',
    free: scope
      ? scopeFree(scope)
      : { text: pct(sys.free_pct), sub: `of ${bytes(sys.phys_bytes)}`, flag: sys.free_pct < LOW_FREE_PCT },
    swap: {
      text: bytes(swapUsed),
      sub: `${arrow}${bytes(Math.abs(growth))} since baseline`,
      title: [
        `Swap grew ${bytes(view.swap_growth_window_bytes)} in the detector's window (tolerance ${bytes(view.swap_tolerance_bytes)})`,
        ...(view.swap_written_bytes != null
          ? [`${bytes(view.swap_written_bytes)} written to swap since baseline (SSD wear; pages written and read back count each time)`]
          : []),
      ].join('\n'),
      flag: !!view.swap_climbing,
    },
    compressed: comp > 0 ? bytes(comp) : null,
    gap: withCaches(liveGap(view), s.caches),
    count: { text: String(s.process_count), sub: share ? `footprints ${Math.round(share * 100)} % of RAM${view.gap && view.gap.held_bytes > view.gap.footprints_bytes ? ' with their swap' : ''}` : '' },
    phase: s.phase ? `phase: ${s.phase}` : null,
    pressure: livePressure(sys.pressure),
    trouble: nearestTrouble(s.forecast),
  };
}

/** The limits of the forecast: its field, and the words for it. */
const LIMITS = [
  ['swap_budget_s', 'swap budget'],
  ['free_floor_s', 'free memory floor'],
  ['swap_full_s', 'swap full'],
];

/**
 * The nearest limit at this rate: `swap budget in ~40 s`; null when none is
 * approached (not at this rate).
 * @param {any} forecast
 * @returns {string | null}
 */
export function nearestTrouble(forecast) {
  if (!forecast) return null;
  /** @type {{ secs: number, words: string } | null} */
  let best = null;
  for (const [key, words] of LIMITS) {
    const secs = forecast[key];
    if (typeof secs === 'number' && (best == null || secs < best.secs)) best = { secs, words };
  }
  return best ? `${best.words} in ${eta(best.secs)}` : null;
}

/**
 * Memory pressure: the level in force and, on Linux, PSI; null where the OS
 * gives none (never a calm-looking zero).
 * @param {any} p the sample's `pressure`
 * @returns {(Figure & { level: string }) | null}
 */
function livePressure(p) {
  if (!p || !p.level) return null;
  const sub = p.some
    ? `PSI some ${p.some.avg10.toFixed(1)} %${p.full ? `, full ${p.full.avg10.toFixed(1)} %` : ''} (10 s)`
    : "the kernel's level";
  return {
    level: p.level,
    text: p.level,
    sub,
    title: p.some
      ? 'Share of time tasks stalled waiting for memory over the last 10 s (Linux PSI); the level is derived from it (docs/detector.md)'
      : 'macOS kern.memorystatus_vm_pressure_level',
    flag: p.level !== 'normal',
  };
}

/**
 * Free memory inside the scope — the memory cgroup the run is judged
 * against (docs/detector.md, "Scope"): limit − usage, of its limit.
 * @param {any} scope
 * @returns {Figure}
 */
function scopeFree(scope) {
  const free = scope.limit_bytes > 0
    ? Math.max(0, scope.limit_bytes - scope.usage_bytes) * 100 / scope.limit_bytes
    : 0;
  const swap = scope.swap_bytes != null ? `; its swap ${bytes(scope.swap_bytes)}` : '';
  return {
    text: pct(free),
    sub: `inside a ${limit(scope.limit_bytes)} cgroup limit`,
    title: `cgroup v${scope.version} ${scope.path}: ${bytes(scope.usage_bytes)} used of ${limit(scope.limit_bytes)}${swap}`,
    flag: free < LOW_FREE_PCT,
  };
}

/**
 * The gap card with the allocator caches the recording's counters name
 * (docs/detector.md, "An allocator's cache, named"): said under it, and
 * flagged.
 * @param {Figure | null} gap
 * @param {Array<{allocator: string, words: string}> | undefined} caches
 * @returns {Figure | null}
 */
function withCaches(gap, caches) {
  if (!gap || !caches || caches.length === 0) return gap;
  const names = caches.map((c) => c.allocator).join(', ');
  return {
    ...gap,
    sub: `${gap.sub} · ${names} cache growing`,
    title: [gap.title, ...caches.map((c) => c.words)].join('\n'),
    flag: true,
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
  // The GPU beside the footprints: what of the gap it holds outside them
  // (in use less the footprints' graphics memory), as the report says.
  const gpuOutside = gap.gpu_in_use_bytes != null
    ? Math.max(0, gap.gpu_in_use_bytes - (gap.gpu_bytes || 0))
    : null;
  if (gpuOutside != null && gpuOutside > 0) {
    parts.push(`GPU holds ${bytes(Math.min(gpuOutside, Math.max(0, gap.unexplained_bytes)))}`);
  }
  if (grew > 0) parts.push(`⇡${bytes(grew)} in window`);
  if (gap.unreadable) parts.push(`${gap.unreadable} unreadable`);
  const extra = [];
  if (gap.gpu_in_use_bytes != null) extra.push(`GPU in use ${bytes(gap.gpu_in_use_bytes)} · footprints ${bytes(gap.footprints_bytes)} · not explained ${bytes(gap.unexplained_bytes)}`);
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
    free: { text: pct(rep.min_free_pct), sub: `lowest, of ${bytes(rep.phys_bytes)}`, flag: rep.min_free_pct < LOW_FREE_PCT },
    swap: {
      text: `${rep.swap_growth_bytes > 0 ? '⇡' : ''}${bytes(rep.swap_growth_bytes)}`,
      sub: `grew during the run (${duration(rep.duration_ms)})`,
      title: [
        `Tolerance ${bytes(rep.swap_tolerance_bytes)}`,
        ...(rep.swap_written
          ? [`${bytes(rep.swap_written.bytes)} written to swap over the run${rep.swap_written.host_wide ? ' (the whole machine)' : ''}${(rep.swap_written.counters ?? 1) > 1 ? `, added up from ${rep.swap_written.counters} counters (the counter's source changed during the run)` : ''}`]
          : []),
      ].join('\n'),
      flag: rep.swap_growth_bytes > rep.swap_tolerance_bytes,
    },
    compressed: null,
    gap: fp
      ? {
          text: `${fp.unexplained_growth_bytes > 0 ? '⇡' : ''}${bytes(fp.unexplained_growth_bytes)}`,
          sub: `grew to ${bytes(fp.unexplained_peak_bytes)}; footprints ≥ ${Math.round((fp.min_coverage || 0) * 100)} % of used`,
          title: fp.gpu_at_peak
            ? `At the peak: GPU in use ${bytes(fp.gpu_at_peak.in_use_bytes)} · footprints ${bytes(fp.gpu_at_peak.footprints_bytes)} · not explained ${bytes(fp.gpu_at_peak.unexplained_bytes)}; the GPU holds ${bytes(fp.gpu_at_peak.held_by_gpu_bytes)} of it outside footprints`
            : '',
          flag: false,
        }
      : null,
    count: { text: String(rep.processes.length), sub: 'in the trace' },
    phase: names.length ? `phases: ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}` : null,
    pressure: rep.pressure
      ? {
          level: rep.pressure.peak,
          text: rep.pressure.peak,
          sub: `peak; ${duration(rep.pressure.warning_ms + rep.pressure.critical_ms)} above normal`,
          title: 'The highest memory pressure level of the run',
          flag: rep.pressure.peak !== 'normal',
        }
      : null,
    trouble: null,
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
  el('pressure-fig').hidden = !f.pressure;
  if (f.pressure) {
    figure('pressure', f.pressure, 'pressed');
    el('pressure-fig').dataset.level = f.pressure.level;
  }
  el('trouble').hidden = !f.trouble;
  el('trouble').textContent = f.trouble || '';
}
