// @ts-check
// The live chart, drawn on a <canvas> with no library: footprint lines of
// the largest, pinned and flagged processes and swap growth as a filled area
// on the left axis (bytes), free memory as a dashed line on the right axis
// (percent). Hovering shows the values at that instant in the legend. The
// phases a recording marked (`swapsight mark`, $SWAPSIGHT_MARK) are shaded
// bands named along the top.
//
// Why our own: the page must run under a strict CSP with no third-party
// code, refresh twice a second inside a small popover, and follow the
// system's light/dark colours (read from CSS custom properties at each
// draw). That is ~300 lines of canvas, far less than any charting library.

import { bytes, bytesAxis, duration, pct } from './format.js';
import { byteTicks, niceStep } from './ticks.js';

const MARGIN = { left: 46, right: 40, top: 10, bottom: 20 };
const PALETTE = 6; // --series-1 … --series-6

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

function css(el, name, fallback) {
  const v = getComputedStyle(el).getPropertyValue(name).trim();
  return v || fallback;
}


export class Chart {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {HTMLElement} legend element filled with one entry per series
   */
  constructor(canvas, legend) {
    this.canvas = canvas;
    this.legend = legend;
    this.ctx = canvas.getContext('2d');
    this.points = [];
    this.phases = []; // { name, start_ms, end_ms } in the points' clock
    this.counters = []; // { name, unit, points: [{ t_ms, value }] }: a replay's byte counters
    this.names = new Map(); // pid → name
    this.colors = new Map(); // pid → palette slot, stable while it is drawn
    this.spanMs = 5 * 60 * 1000;
    this.live = true;
    this.hoverX = null;
    this.highlight = null; // pid emphasised (hovered row)
    this.pending = false;
    new ResizeObserver(() => this.request()).observe(canvas);
    canvas.addEventListener('mousemove', (e) => {
      this.hoverX = e.offsetX;
      this.request();
    });
    canvas.addEventListener('mouseleave', () => {
      this.hoverX = null;
      this.request();
    });
    if (window.matchMedia) {
      window.matchMedia('(prefers-color-scheme: dark)').addEventListener?.('change', () => this.request());
    }
  }

  /**
   * Replaces the data. `live` charts show the last `spanMs`; a replay all.
   * @param {{ points: any[], names: any[], spanMs?: number, live: boolean, phases?: any[], counters?: any[] }} data
   */
  set({ points, names, spanMs, live, phases, counters }) {
    this.points = points || [];
    this.phases = phases || [];
    this.counters = counters || [];
    this.phasesKey = null;
    if (names) for (const [pid, n] of names) this.names.set(pid, n);
    if (spanMs) this.spanMs = spanMs;
    if (live != null) this.live = live;
    this.request();
  }

  /** Appends a live point and drops those older than the span. */
  push(point, names) {
    this.points.push(point);
    if (names) for (const [pid, n] of names) this.names.set(pid, n);
    const from = point.t_ms - this.spanMs - 2000;
    let i = 0;
    while (i < this.points.length && this.points[i].t_ms < from) i++;
    if (i) this.points.splice(0, i);
    // Names and colours of processes long gone would pile up over a day
    // with the window open: keep those of the points still held.
    if (this.names.size > 512) this.forgetGone();
    this.request();
  }

  /** The phases to shade (a live snapshot carries the recent ones). */
  setPhases(phases) {
    const next = phases || [];
    const key = JSON.stringify(next);
    if (key === this.phasesKey) return;
    this.phasesKey = key;
    this.phases = next;
    this.request();
  }

  forgetGone() {
    const live = new Set();
    for (const p of this.points) for (const [pid] of p.footprints) live.add(pid);
    for (const pid of this.names.keys()) if (!live.has(pid)) this.names.delete(pid);
    for (const pid of this.colors.keys()) if (!live.has(pid)) this.colors.delete(pid);
  }

  setHighlight(pid) {
    if (this.highlight !== pid) {
      this.highlight = pid;
      this.request();
    }
  }

  request() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  /** The pids to draw, largest (peak in view) first, at most `max`. */
  series(points, max = 6) {
    const peak = new Map();
    for (const p of points) for (const [pid, b] of p.footprints) peak.set(pid, Math.max(peak.get(pid) || 0, b));
    const last = points.length ? new Set(points[points.length - 1].footprints.map(([pid]) => pid)) : new Set();
    return [...peak.entries()]
      .sort((a, b) => Number(last.has(b[0])) - Number(last.has(a[0])) || b[1] - a[1])
      .slice(0, max)
      .map(([pid]) => pid);
  }

  colorOf(pid, used) {
    let slot = this.colors.get(pid);
    if (slot == null || used.has(slot)) {
      slot = 0;
      while (used.has(slot) && slot < PALETTE - 1) slot++;
      this.colors.set(pid, slot);
    }
    used.add(slot);
    return slot;
  }

  draw() {
    const { canvas, ctx } = this;
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    if (!w || !h) return;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);

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

    const pts = this.points;
    const plot = {
      x: MARGIN.left,
      y: MARGIN.top,
      w: Math.max(10, w - MARGIN.left - MARGIN.right),
      h: Math.max(10, h - MARGIN.top - MARGIN.bottom),
    };
    ctx.font = color.font;
    if (!pts.length) {
      ctx.fillStyle = color.text;
      ctx.textAlign = 'center';
      ctx.fillText('waiting for the first samples…', plot.x + plot.w / 2, plot.y + plot.h / 2);
      this.fillLegend([]);
      return;
    }

    // ---------------------------------------------------------------- scales
    const t1 = pts[pts.length - 1].t_ms;
    // Live: the last `spanMs`, but a young session fills the width (at
    // least a minute) instead of hugging the right edge.
    const age = t1 - pts[0].t_ms;
    const t0 = this.live ? t1 - Math.min(this.spanMs, Math.max(60000, age)) : pts[0].t_ms;
    const tspan = Math.max(1000, t1 - t0);
    const X = (t) => plot.x + ((t - t0) / tspan) * plot.w;
    const pids = this.series(pts);
    let lo = 0;
    let hi = 64 * 1024 * 1024;
    for (const p of pts) {
      if (p.t_ms < t0) continue;
      lo = Math.min(lo, p.swap_growth_bytes);
      hi = Math.max(hi, p.swap_growth_bytes);
      for (const [pid, b] of p.footprints) if (pids.includes(pid)) hi = Math.max(hi, b);
    }
    for (const c of this.counters) {
      for (const p of c.points) {
        if (p.t_ms < t0) continue;
        lo = Math.min(lo, p.value);
        hi = Math.max(hi, p.value);
      }
    }
    hi *= 1.08;
    const ticks = byteTicks(lo, hi, Math.max(2, Math.floor(plot.h / 28)));
    hi = Math.max(hi, ticks[ticks.length - 1]);
    const Y = (b) => plot.y + plot.h - ((b - lo) / (hi - lo)) * plot.h;
    const YR = (p) => plot.y + plot.h - (p / 100) * plot.h;

    // ------------------------------------------------------------------ grid
    ctx.lineWidth = 1;
    ctx.strokeStyle = color.grid;
    ctx.fillStyle = color.text;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    for (const v of ticks) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(plot.x, y);
      ctx.lineTo(plot.x + plot.w, y);
      ctx.stroke();
      ctx.fillText(bytesAxis(v), plot.x - 6, y);
    }
    ctx.textAlign = 'left';
    ctx.fillStyle = color.free;
    for (const p of [0, 50, 100]) ctx.fillText(`${p}%`, plot.x + plot.w + 6, YR(p));

    // time axis
    ctx.fillStyle = color.text;
    ctx.textBaseline = 'top';
    const stepMs = niceStep(tspan / 1000, Math.max(2, Math.floor(plot.w / 90))) * 1000;
    if (this.live) {
      ctx.textAlign = 'right';
      ctx.fillText('now', plot.x + plot.w, plot.y + plot.h + 5);
      ctx.textAlign = 'center';
      for (let ago = stepMs; ago < tspan - stepMs / 3; ago += stepMs) {
        ctx.fillText(`−${duration(ago).replace(/\.0s$/, 's')}`, X(t1 - ago), plot.y + plot.h + 5);
      }
    } else {
      ctx.textAlign = 'center';
      for (let at = 0; at <= tspan + 1; at += stepMs) {
        ctx.textAlign = at === 0 ? 'left' : 'center';
        ctx.fillText(duration(at).replace(/\.0s$/, 's'), X(t0 + at), plot.y + plot.h + 5);
      }
    }

    ctx.save();
    ctx.beginPath();
    ctx.rect(plot.x, plot.y - 2, plot.w, plot.h + 4);
    ctx.clip();

    // ---------------------------------------------------------------- phases
    this.drawPhases(t0, t1, X, plot, color);

    // ------------------------------------------------------ swap growth area
    const visible = pts.filter((p, i) => p.t_ms >= t0 || (pts[i + 1] && pts[i + 1].t_ms >= t0));
    const zero = Y(0);
    ctx.beginPath();
    ctx.moveTo(X(visible[0].t_ms), zero);
    for (const p of visible) ctx.lineTo(X(p.t_ms), Y(p.swap_growth_bytes));
    ctx.lineTo(X(visible[visible.length - 1].t_ms), zero);
    ctx.closePath();
    ctx.fillStyle = color.swapFill;
    ctx.fill();
    this.line(visible, (p) => Y(p.swap_growth_bytes), X, color.swap, 1.5);

    // ------------------------------------------------------ free memory (%)
    ctx.setLineDash([4, 3]);
    this.line(visible, (p) => YR(p.free_pct), X, color.free, 1.25);
    ctx.setLineDash([]);

    // ------------------------------------------------------- footprint lines
    const used = new Set();
    const drawn = pids.map((pid) => ({ pid, slot: this.colorOf(pid, used) }));
    for (const { pid, slot } of drawn) {
      const wide = this.highlight === pid ? 2.75 : 1.6;
      this.line(
        visible,
        (p) => {
          const f = p.footprints.find(([q]) => q === pid);
          return f ? Y(f[1]) : null;
        },
        X,
        series[slot],
        wide,
      );
    }

    // ----------------------------------------------- the pipeline's counters
    // Dashed: figures the pipeline reported (its allocator's pool), not read
    // from the OS; in the colours after the processes'.
    const counterColor = (i) => series[(drawn.length + i) % PALETTE];
    ctx.setLineDash([6, 3]);
    this.counters.forEach((c, i) => {
      const inView = c.points.filter((p, j) => p.t_ms >= t0 || (c.points[j + 1] && c.points[j + 1].t_ms >= t0));
      this.line(inView, (p) => Y(p.value), X, counterColor(i), 1.5);
    });
    ctx.setLineDash([]);

    // ------------------------------------------------------------ crosshair
    let at = visible[visible.length - 1];
    if (this.hoverX != null && this.hoverX >= plot.x && this.hoverX <= plot.x + plot.w) {
      const t = t0 + ((this.hoverX - plot.x) / plot.w) * tspan;
      at = visible.reduce((best, p) => (Math.abs(p.t_ms - t) < Math.abs(best.t_ms - t) ? p : best), visible[0]);
      const x = Math.round(X(at.t_ms)) + 0.5;
      ctx.strokeStyle = color.cross;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x, plot.y);
      ctx.lineTo(x, plot.y + plot.h);
      ctx.stroke();
    }
    ctx.restore();

    const footprintAt = (pid) => {
      const f = at.footprints.find(([q]) => q === pid);
      return f ? f[1] : null;
    };
    this.fillLegend([
      { cls: 'swap', label: 'swap growth', value: bytes(at.swap_growth_bytes), color: color.swap },
      { cls: 'free', label: 'free', value: pct(at.free_pct), color: color.free },
      ...drawn.map(({ pid, slot }) => ({
        cls: 'proc',
        pid,
        label: this.names.get(pid) || `pid ${pid}`,
        value: bytes(footprintAt(pid)),
        color: series[slot],
      })),
      ...this.counters.map((c, i) => ({
        cls: 'counter',
        label: `${c.name} (counter)`,
        value: bytes(counterAt(c.points, at.t_ms)),
        color: counterColor(i),
      })),
    ]);
  }

  /** Shaded bands for the phases in view, each named at its top left when
   *  wide enough to hold the name. */
  drawPhases(t0, t1, X, plot, color) {
    const { ctx } = this;
    const shown = this.phases.filter((p) => p.end_ms >= t0 && p.start_ms <= t1);
    shown.forEach((p, i) => {
      const x0 = X(Math.max(p.start_ms, t0));
      const x1 = X(Math.min(Math.max(p.end_ms, p.start_ms), t1));
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

  /** A polyline through the points; `y` may answer null to break it. */
  line(points, y, X, stroke, width) {
    const { ctx } = this;
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

  fillLegend(items) {
    if (!this.legend) return;
    const key = items.map((i) => `${i.label}|${i.value}|${i.color}`).join('\n');
    if (key === this.legendKey) return;
    this.legendKey = key;
    this.legend.replaceChildren(
      ...items.map((i) => {
        const li = document.createElement('li');
        li.className = `legend-${i.cls}`;
        if (i.pid != null) li.dataset.pid = i.pid;
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.background = i.color;
        const name = document.createElement('span');
        name.className = 'name';
        name.textContent = i.label;
        // A long process name is cut by the stylesheet; the hover has it whole.
        name.title = i.label;
        const val = document.createElement('span');
        val.className = 'value';
        val.textContent = i.value;
        li.append(sw, name, val);
        return li;
      }),
    );
  }
}
