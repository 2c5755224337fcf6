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
// draw). It is three small modules, far less than any charting library:
// this one holds the data, the canvas and the legend; chart-model.js works
// out what to show (scales, series, the legend's values; pure, tested by
// node); chart-paint.js draws it.

import { inView, legendItems, plotArea, pointAt, scales, seriesOf } from './chart-model.js';
import { colors, paintAxes, paintCrosshair, paintData, paintPhases, paintWaiting, PALETTE } from './chart-paint.js';

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

  /** Draws the chart and fills the legend for the data held now. */
  draw() {
    const { canvas, ctx } = this;
    const size = this.fitCanvas();
    if (!size) return;
    const { color, series } = colors(canvas);
    const plot = plotArea(size.w, size.h);
    ctx.font = color.font;
    const pts = this.points;
    if (!pts.length) {
      paintWaiting(ctx, plot, color);
      this.fillLegend([]);
      return;
    }
    const pids = seriesOf(pts);
    const s = scales(pts, { pids, counters: this.counters, live: this.live, spanMs: this.spanMs }, plot);
    paintAxes(ctx, s, plot, color, this.live);

    ctx.save();
    ctx.beginPath();
    ctx.rect(plot.x, plot.y - 2, plot.w, plot.h + 4);
    ctx.clip();
    paintPhases(ctx, this.phases, s, plot, color);
    const visible = inView(pts, s.t0);
    const used = new Set();
    const drawn = pids.map((pid) => ({ pid, color: series[this.colorOf(pid, used)] }));
    // The counters take the colours after the processes'.
    const counterColors = this.counters.map((_, i) => series[(drawn.length + i) % PALETTE]);
    paintData(ctx, s, {
      visible,
      color,
      highlight: this.highlight,
      drawn,
      counters: this.counters.map((c) => inView(c.points, s.t0)),
      counterColors,
    });
    const { at, hovered } = pointAt(visible, this.hoverX, plot, s);
    if (hovered) paintCrosshair(ctx, s.X(at.t_ms), plot, color);
    ctx.restore();

    this.fillLegend(
      legendItems(at, drawn, { counters: this.counters, counterColors, names: this.names, swap: color.swap, free: color.free }),
    );
  }

  /**
   * Sizes the canvas's pixels to its box at the screen's density and clears
   * it; null while it has no box (hidden).
   * @returns {{ w: number, h: number } | null}
   */
  fitCanvas() {
    const { canvas, ctx } = this;
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    if (!w || !h) return null;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    return { w, h };
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
