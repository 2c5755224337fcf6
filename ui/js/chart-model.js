// @ts-check
// What the chart shows, as plain data (`node --test` covers it): the plot's
// rectangle, which processes get a line, the time and byte scales, the
// points in view, the point under the pointer and the legend's entries.
// chart-paint.js draws them; chart.js holds the data and the canvas.

import { bytes, pct } from './format.js';
import { byteTicks } from './ticks.js';

/** Room around the plot for the axes' labels (CSS pixels). */
export const MARGIN = { left: 46, right: 40, top: 10, bottom: 20 };

/**
 * @typedef {{ t_ms: number, swap_growth_bytes: number, free_pct: number, footprints: [number, number][] }} Point
 * @typedef {{ name: string, unit?: string, points: { t_ms: number, value: number }[] }} Counter
 * @typedef {{ x: number, y: number, w: number, h: number }} Rect
 * @typedef {{
 *   t0: number, t1: number, tspan: number, lo: number, hi: number, ticks: number[],
 *   X: (t: number) => number, Y: (b: number) => number, YR: (p: number) => number,
 * }} Scales
 */

/**
 * A counter's value at `t_ms`: its last point at or before, else null.
 * @param {{ t_ms: number, value: number }[]} points in time order
 * @param {number} t_ms
 * @returns {number | null}
 */
export function counterAt(points, t_ms) {
  let value = null;
  for (const p of points) {
    if (p.t_ms > t_ms) break;
    value = p.value;
  }
  return value;
}

/**
 * The plot inside a `w` × `h` canvas, at least 10 × 10.
 * @param {number} w
 * @param {number} h
 * @returns {Rect}
 */
export function plotArea(w, h) {
  return {
    x: MARGIN.left,
    y: MARGIN.top,
    w: Math.max(10, w - MARGIN.left - MARGIN.right),
    h: Math.max(10, h - MARGIN.top - MARGIN.bottom),
  };
}

/**
 * The pids to draw, at most `max`: those in the latest point first, then by
 * their peak footprint in `points`.
 * @param {Point[]} points
 * @param {number} [max]
 * @returns {number[]}
 */
export function seriesOf(points, max = 6) {
  const peak = new Map();
  for (const p of points) for (const [pid, b] of p.footprints) peak.set(pid, Math.max(peak.get(pid) || 0, b));
  const last = points.length ? new Set(points[points.length - 1].footprints.map(([pid]) => pid)) : new Set();
  return [...peak.entries()]
    .sort((a, b) => Number(last.has(b[0])) - Number(last.has(a[0])) || b[1] - a[1])
    .slice(0, max)
    .map(([pid]) => pid);
}

/**
 * The scales of one draw. Time: a live chart shows the last `spanMs`, but a
 * young session fills the width (at least a minute) instead of hugging the
 * right edge; a replay shows all. Bytes, on the left: from 0 (or the lowest
 * swap growth) to 8 % above the highest of swap growth, the drawn
 * footprints and the counters, at least 64 MiB, widened to the last tick.
 * Percent, on the right: 0–100.
 * @param {Point[]} points at least one, in time order
 * @param {{ pids: number[], counters: Counter[], live: boolean, spanMs: number }} what
 * @param {Rect} plot
 * @returns {Scales}
 */
export function scales(points, { pids, counters, live, spanMs }, plot) {
  const t1 = points[points.length - 1].t_ms;
  const age = t1 - points[0].t_ms;
  const t0 = live ? t1 - Math.min(spanMs, Math.max(60000, age)) : points[0].t_ms;
  const tspan = Math.max(1000, t1 - t0);
  let lo = 0;
  let hi = 64 * 1024 * 1024;
  for (const p of points) {
    if (p.t_ms < t0) continue;
    lo = Math.min(lo, p.swap_growth_bytes);
    hi = Math.max(hi, p.swap_growth_bytes);
    for (const [pid, b] of p.footprints) if (pids.includes(pid)) hi = Math.max(hi, b);
  }
  for (const c of counters) {
    for (const p of c.points) {
      if (p.t_ms < t0) continue;
      lo = Math.min(lo, p.value);
      hi = Math.max(hi, p.value);
    }
  }
  hi *= 1.08;
  const ticks = byteTicks(lo, hi, Math.max(2, Math.floor(plot.h / 28)));
  hi = Math.max(hi, ticks[ticks.length - 1]);
  return {
    t0,
    t1,
    tspan,
    lo,
    hi,
    ticks,
    X: (t) => plot.x + ((t - t0) / tspan) * plot.w,
    Y: (b) => plot.y + plot.h - ((b - lo) / (hi - lo)) * plot.h,
    YR: (p) => plot.y + plot.h - (p / 100) * plot.h,
  };
}

/**
 * The points from `t0` on, and the one before it (so a line enters from the
 * left edge rather than starting inside the plot).
 * @template {{ t_ms: number }} P
 * @param {P[]} points in time order
 * @param {number} t0
 * @returns {P[]}
 */
export function inView(points, t0) {
  return points.filter((p, i) => p.t_ms >= t0 || (points[i + 1] && points[i + 1].t_ms >= t0));
}

/**
 * The point the legend reads: the one nearest the pointer when it is over
 * the plot, else the latest; `hovered` says which.
 * @template {{ t_ms: number }} P
 * @param {P[]} visible at least one
 * @param {number | null} hoverX
 * @param {Rect} plot
 * @param {Scales} s
 * @returns {{ at: P, hovered: boolean }}
 */
export function pointAt(visible, hoverX, plot, s) {
  if (hoverX == null || hoverX < plot.x || hoverX > plot.x + plot.w) {
    return { at: visible[visible.length - 1], hovered: false };
  }
  const t = s.t0 + ((hoverX - plot.x) / plot.w) * s.tspan;
  const at = visible.reduce((best, p) => (Math.abs(p.t_ms - t) < Math.abs(best.t_ms - t) ? p : best), visible[0]);
  return { at, hovered: true };
}

/**
 * @typedef {{ cls: string, label: string, value: string, color: string, pid?: number }} LegendItem
 */

/**
 * The legend at point `at`: swap growth, free memory, each drawn process and
 * each counter, with its value there.
 * @param {Point} at
 * @param {{ pid: number, color: string }[]} drawn
 * @param {{ counters: Counter[], counterColors: string[], names: Map<number, string>, swap: string, free: string }} rest
 * @returns {LegendItem[]}
 */
export function legendItems(at, drawn, { counters, counterColors, names, swap, free }) {
  const footprintAt = (/** @type {number} */ pid) => {
    const f = at.footprints.find(([q]) => q === pid);
    return f ? f[1] : null;
  };
  return [
    { cls: 'swap', label: 'swap growth', value: bytes(at.swap_growth_bytes), color: swap },
    { cls: 'free', label: 'free', value: pct(at.free_pct), color: free },
    ...drawn.map(({ pid, color }) => ({
      cls: 'proc',
      pid,
      label: names.get(pid) || `pid ${pid}`,
      value: bytes(footprintAt(pid)),
      color,
    })),
    ...counters.map((c, i) => ({
      cls: 'counter',
      label: `${c.name} (counter)`,
      value: bytes(counterAt(c.points, at.t_ms)),
      color: counterColors[i],
    })),
  ];
}
