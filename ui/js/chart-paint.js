// @ts-check
// The chart's strokes on its canvas, from what chart-model.js worked out:
// the axes, the phases' bands, swap growth as a filled area, free memory
// dashed, one line per process and per counter, the crosshair. Colours
// come from the page's CSS custom properties, read at each draw so the
// chart follows the system's light and dark schemes.

import { bytesAxis, duration } from './format.js';
import { niceStep } from './ticks.js';

/** Process lines take --series-1 … --series-6, in turn. */
export const PALETTE = 6;

/**
 * @typedef {import('./chart-model.js').Rect} Rect
 * @typedef {import('./chart-model.js').Scales} Scales
 * @typedef {import('./chart-model.js').Point} Point
 * @typedef {ReturnType<typeof colors>['color']} Colors
 */

/**
 * @param {Element} el
 * @param {string} name
 * @param {string} fallback
 */
function css(el, name, fallback) {
  const v = getComputedStyle(el).getPropertyValue(name).trim();
  return v || fallback;
}

/**
 * The chart's colours and font, and the processes' palette, as the page's
 * stylesheet sets them now.
 * @param {HTMLCanvasElement} canvas
 */
export function colors(canvas) {
  const color = {
    phase: css(canvas, '--chart-phase', 'rgba(100,100,200,.10)'),
    phaseAlt: css(canvas, '--chart-phase-alt', 'rgba(100,100,200,.18)'),
    grid: css(canvas, '--chart-grid', 'rgba(128,128,128,.2)'),
    text: css(canvas, '--chart-text', '#888'),
    swap: css(canvas, '--chart-swap', '#e5484d'),
    swapFill: css(canvas, '--chart-swap-fill', 'rgba(229,72,77,.18)'),
    free: css(canvas, '--chart-free', '#3e9b4f'),
    cross: css(canvas, '--chart-cross', 'rgba(128,128,128,.6)'),
    font: css(canvas, '--chart-font', '11px system-ui, sans-serif'),
  };
  const series = [];
  for (let i = 1; i <= PALETTE; i++) series.push(css(canvas, `--series-${i}`, '#888'));
  return { color, series };
}

/**
 * What an empty chart says.
 * @param {CanvasRenderingContext2D} ctx
 * @param {Rect} plot
 * @param {Colors} color
 */
export function paintWaiting(ctx, plot, color) {
  ctx.fillStyle = color.text;
  ctx.textAlign = 'center';
  ctx.fillText('waiting for the first samples…', plot.x + plot.w / 2, plot.y + plot.h / 2);
}

/**
 * The byte grid with its labels on the left, 0 / 50 / 100 % on the right
 * (free memory's axis), and the time axis below: `now`, `−30s`, … when
 * live, time since the start in a replay.
 * @param {CanvasRenderingContext2D} ctx
 * @param {Scales} s
 * @param {Rect} plot
 * @param {Colors} color
 * @param {boolean} live
 */
export function paintAxes(ctx, s, plot, color, live) {
  ctx.lineWidth = 1;
  ctx.strokeStyle = color.grid;
  ctx.fillStyle = color.text;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  for (const v of s.ticks) {
    const y = Math.round(s.Y(v)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(plot.x, y);
    ctx.lineTo(plot.x + plot.w, y);
    ctx.stroke();
    ctx.fillText(bytesAxis(v), plot.x - 6, y);
  }
  ctx.textAlign = 'left';
  ctx.fillStyle = color.free;
  for (const p of [0, 50, 100]) ctx.fillText(`${p}%`, plot.x + plot.w + 6, s.YR(p));

  ctx.fillStyle = color.text;
  ctx.textBaseline = 'top';
  const below = plot.y + plot.h + 5;
  const label = (/** @type {number} */ ms) => duration(ms).replace(/\.0s$/, 's');
  const stepMs = niceStep(s.tspan / 1000, Math.max(2, Math.floor(plot.w / 90))) * 1000;
  if (live) {
    ctx.textAlign = 'right';
    ctx.fillText('now', plot.x + plot.w, below);
    ctx.textAlign = 'center';
    for (let ago = stepMs; ago < s.tspan - stepMs / 3; ago += stepMs) {
      ctx.fillText(`−${label(ago)}`, s.X(s.t1 - ago), below);
    }
  } else {
    for (let at = 0; at <= s.tspan + 1; at += stepMs) {
      ctx.textAlign = at === 0 ? 'left' : 'center';
      ctx.fillText(label(at), s.X(s.t0 + at), below);
    }
  }
}

/**
 * Shaded bands for the phases in view, each named at its top left when
 * wide enough to hold the name.
 * @param {CanvasRenderingContext2D} ctx
 * @param {{ name: string, start_ms: number, end_ms: number }[]} phases
 * @param {Scales} s
 * @param {Rect} plot
 * @param {Colors} color
 */
export function paintPhases(ctx, phases, s, plot, color) {
  const shown = phases.filter((p) => p.end_ms >= s.t0 && p.start_ms <= s.t1);
  shown.forEach((p, i) => {
    const x0 = s.X(Math.max(p.start_ms, s.t0));
    const x1 = s.X(Math.min(Math.max(p.end_ms, p.start_ms), s.t1));
    ctx.fillStyle = i % 2 ? color.phaseAlt : color.phase;
    ctx.fillRect(x0, plot.y, Math.max(1, x1 - x0), plot.h);
    const label = String(p.name);
    ctx.font = color.font;
    if (ctx.measureText(label).width + 6 <= x1 - x0) {
      ctx.fillStyle = color.text;
      ctx.textAlign = 'left';
      ctx.textBaseline = 'top';
      ctx.fillText(label, x0 + 3, plot.y + 2);
    }
  });
}

/**
 * The figures: swap growth as a filled area, free memory (%) dashed, a line
 * per drawn process (wider for the highlighted one), and the pipeline's
 * counters dashed (figures it reported, not read from the OS), each given
 * as its points in view.
 * @param {CanvasRenderingContext2D} ctx
 * @param {Scales} s
 * @param {{
 *   visible: Point[], color: Colors, highlight: number | null,
 *   drawn: { pid: number, color: string }[],
 *   counters: { t_ms: number, value: number }[][], counterColors: string[],
 * }} what
 */
export function paintData(ctx, s, { visible, color, highlight, drawn, counters, counterColors }) {
  const { X, Y, YR } = s;
  const zero = Y(0);
  ctx.beginPath();
  ctx.moveTo(X(visible[0].t_ms), zero);
  for (const p of visible) ctx.lineTo(X(p.t_ms), Y(p.swap_growth_bytes));
  ctx.lineTo(X(visible[visible.length - 1].t_ms), zero);
  ctx.closePath();
  ctx.fillStyle = color.swapFill;
  ctx.fill();
  line(ctx, visible, (p) => Y(p.swap_growth_bytes), X, color.swap, 1.5);

  ctx.setLineDash([4, 3]);
  line(ctx, visible, (p) => YR(p.free_pct), X, color.free, 1.25);
  ctx.setLineDash([]);

  for (const { pid, color: stroke } of drawn) {
    const footprint = (/** @type {Point} */ p) => {
      const f = p.footprints.find(([q]) => q === pid);
      return f ? Y(f[1]) : null;
    };
    line(ctx, visible, footprint, X, stroke, highlight === pid ? 2.75 : 1.6);
  }

  ctx.setLineDash([6, 3]);
  counters.forEach((points, i) => line(ctx, points, (p) => Y(p.value), X, counterColors[i], 1.5));
  ctx.setLineDash([]);
}

/**
 * The crosshair at the hovered instant.
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} x
 * @param {Rect} plot
 * @param {Colors} color
 */
export function paintCrosshair(ctx, x, plot, color) {
  const at = Math.round(x) + 0.5;
  ctx.strokeStyle = color.cross;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(at, plot.y);
  ctx.lineTo(at, plot.y + plot.h);
  ctx.stroke();
}

/**
 * A polyline through the points; `y` may answer null to break it.
 * @template {{ t_ms: number }} P
 * @param {CanvasRenderingContext2D} ctx
 * @param {P[]} points
 * @param {(p: P) => number | null} y
 * @param {(t: number) => number} X
 * @param {string} stroke
 * @param {number} width
 */
export function line(ctx, points, y, X, stroke, width) {
  ctx.strokeStyle = stroke;
  ctx.lineWidth = width;
  ctx.lineJoin = 'round';
  ctx.beginPath();
  let open = false;
  for (const p of points) {
    const v = y(p);
    if (v == null) {
      open = false;
      continue;
    }
    if (open) ctx.lineTo(X(p.t_ms), v);
    else ctx.moveTo(X(p.t_ms), v);
    open = true;
  }
  ctx.stroke();
}
