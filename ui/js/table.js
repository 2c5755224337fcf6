// @ts-check
// The per-process table: sortable by clicking a header, filtered by a text
// box, pinned process first, a state badge whose tooltip is the detector's
// evidence. Rows are keyed by pid and updated in place (a tooltip or a hover
// survives the twice-a-second refresh); nodes move only when the order
// changes. Process names are set as text, never as HTML.

import { bytes, delta, rate, stateLabel } from './format.js';
import { COL, COLUMNS, DEFAULT_DIR, visibleRows } from './rows.js';


const SVG = 'http://www.w3.org/2000/svg';

/** The 📌 glyph as a small SVG (emoji fonts are not everywhere). */
function pinIcon() {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', 'M10.2 1.5 14.5 5.8l-1.3 1.3-1-.4-2.6 2.6.3 2.9-1.3 1.3-2.6-2.6-3.3 3.3-.7-.7 3.3-3.3L2.7 7.6 4 6.3l2.9.3 2.6-2.6-.4-1z');
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}


export class ProcessTable {
  /**
   * @param {HTMLTableElement} table  `#processes`
   * @param {object} opts  `onPin(pid|null)`, `onHover(pid|null)`
   */
  constructor(table, { onPin, onHover } = {}) {
    this.table = table;
    this.onPin = onPin || (() => {});
    this.onHover = onHover || (() => {});
    this.sort = { key: 'footprint', dir: -1 };
    this.filter = '';
    this.rows = [];
    this.showSwap = false;
    this.showGpu = false;
    this.readOnly = false;
    this.trs = new Map(); // pid → <tr>
    this.buildHead();
    this.tbody = table.tBodies[0] || table.appendChild(document.createElement('tbody'));
    this.tbody.addEventListener('click', (e) => {
      const btn = /** @type {Element} */ (e.target).closest('button.pin');
      if (!btn || this.readOnly) return;
      const tr = /** @type {HTMLElement} */ (btn.closest('tr'));
      const pid = Number(tr.dataset.pid);
      this.onPin(tr.classList.contains('pinned') ? null : pid);
    });
    this.tbody.addEventListener('mouseover', (e) => {
      const tr = /** @type {HTMLElement | null} */ (/** @type {Element} */ (e.target).closest('tr[data-pid]'));
      this.onHover(tr ? Number(tr.dataset.pid) : null);
    });
    this.tbody.addEventListener('mouseleave', () => this.onHover(null));
  }

  buildHead() {
    const thead = this.table.tHead || this.table.createTHead();
    const tr = document.createElement('tr');
    for (const c of COLUMNS) {
      const th = document.createElement('th');
      th.dataset.key = c.key;
      th.className = `col-${c.key}${c.num ? ' num' : ''}`;
      if (c.title) th.title = c.title;
      if (c.sortable === false) {
        th.textContent = c.label;
      } else {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'sort';
        b.textContent = c.label;
        b.addEventListener('click', () => this.sortBy(c.key));
        th.append(b);
        th.setAttribute('aria-sort', 'none');
      }
      tr.append(th);
    }
    thead.replaceChildren(tr);
    this.ths = [...tr.children];
  }

  sortBy(key) {
    if (this.sort.key === key) this.sort.dir = -this.sort.dir;
    else this.sort = { key, dir: DEFAULT_DIR[key] || -1 };
    this.render();
  }

  setFilter(text) {
    this.filter = text.trim().toLowerCase();
    this.render();
  }

  /**
   * New rows; `showSwap` when rows carry measured swap.
   * @param {any[]} rows
   * @param {{ showSwap?: boolean, readOnly?: boolean }} [opts]
   */
  update(rows, { showSwap, readOnly } = {}) {
    this.rows = rows || [];
    if (showSwap != null) this.showSwap = showSwap;
    // The GPU and outside-footprint columns appear where the OS gives them (macOS).
    this.showGpu = this.rows.some((r) => r.gpu_bytes != null || r.outside_footprint_bytes != null);
    if (readOnly != null) this.readOnly = readOnly;
    this.render();
  }

  visibleRows() {
    return visibleRows(this.rows, this.filter, this.sort);
  }

  render() {
    this.table.classList.toggle('with-swap', this.showSwap);
    this.table.classList.toggle('with-gpu', this.showGpu);
    this.table.classList.toggle('read-only', this.readOnly);
    const fpHead = this.ths[COL.footprint].querySelector('.sort');
    fpHead.textContent = this.readOnly ? 'peak footprint' : 'footprint';
    for (const th of /** @type {HTMLElement[]} */ (this.ths)) {
      const on = th.dataset.key === this.sort.key;
      if (th.hasAttribute('aria-sort')) th.setAttribute('aria-sort', on ? (this.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
    const rows = this.visibleRows();
    const seen = new Set();
    const order = [];
    for (const r of rows) {
      seen.add(r.pid);
      let tr = this.trs.get(r.pid);
      if (!tr) {
        tr = this.makeRow(r.pid);
        this.trs.set(r.pid, tr);
      }
      this.fill(tr, r);
      order.push(tr);
    }
    for (const [pid, tr] of this.trs) {
      if (!seen.has(pid)) {
        tr.remove();
        this.trs.delete(pid);
      }
    }
    const current = this.tbody.children;
    let same = current.length === order.length;
    for (let i = 0; same && i < order.length; i++) same = current[i] === order[i];
    if (!same) this.tbody.replaceChildren(...order);
    this.table.dataset.empty = rows.length ? 'false' : 'true';
  }

  makeRow(pid) {
    const tr = document.createElement('tr');
    tr.dataset.pid = pid;
    for (const c of COLUMNS) {
      const td = document.createElement('td');
      td.className = `col-${c.key}${c.num ? ' num' : ''}`;
      if (c.key === 'pin') {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'pin';
        b.append(pinIcon());
        td.append(b);
      } else if (c.key === 'state') {
        const s = document.createElement('span');
        s.className = 'badge';
        td.append(s);
      }
      tr.append(td);
    }
    return tr;
  }

  fill(tr, r) {
    const cells = tr.children;
    const set = (i, text) => {
      if (cells[i].textContent !== text) cells[i].textContent = text;
    };
    if (tr.dataset.state !== r.state) tr.dataset.state = r.state;
    tr.classList.toggle('pinned', !!r.pinned);
    tr.classList.toggle('watched', !!r.watched);
    const pin = cells[0].firstChild;
    pin.title = r.pinned ? `📌 Unpin ${r.name}` : `📌 Pin ${r.name}: watch its tree, keep it first, record it`;
    pin.setAttribute('aria-label', r.pinned ? `Unpin ${r.name}` : `Pin ${r.name}`);
    pin.setAttribute('aria-pressed', r.pinned ? 'true' : 'false');
    set(COL.name, r.name);
    // The hover shows the command line (capped by the probe) where the OS gave it.
    const what = r.cmdline || r.name;
    const title = r.watched && !r.pinned ? `${what}\n(watched tree)` : what;
    if (cells[COL.name].title !== title) cells[COL.name].title = title;
    set(COL.pid, String(r.pid));
    // Another user's process: the OS denied its figures; unknown, not 0.
    const unreadable = r.readable === false;
    tr.classList.toggle('unreadable', unreadable);
    set(COL.footprint, unreadable ? '?' : bytes(r.footprint_bytes));
    cells[COL.footprint].title = unreadable ? "Another user's process: macOS does not give its figures" : '';
    // A replay's rows carry the peak footprint and no window change.
    set(COL.delta, this.readOnly || unreadable ? '–' : delta(r.footprint_delta_bytes));
    cells[COL.delta].classList.toggle('up', r.footprint_delta_bytes > 0);
    cells[COL.delta].classList.toggle('down', r.footprint_delta_bytes < 0);
    set(COL.pageins, unreadable ? '–' : rate(r.swapins_per_s ?? r.pageins_per_s));
    cells[COL.pageins].title = r.swapins_per_s != null ? 'swap-ins/s (pages)' : 'page-ins/s';
    set(COL.swap, r.swap_bytes != null ? bytes(r.swap_bytes) : '–');
    set(COL.gpu, r.gpu_bytes != null ? bytes(r.gpu_bytes) : '–');
    set(COL.outside, r.outside_footprint_bytes != null ? bytes(r.outside_footprint_bytes) : '–');
    cells[COL.outside].classList.toggle('up', (r.outside_footprint_bytes || 0) > 0);
    const badge = cells[COL.state].firstChild;
    const label = r.state === 'fits' && r.worst && r.worst !== 'fits' ? `fits (was ${stateLabel(r.worst)})` : stateLabel(r.state);
    if (badge.textContent !== label) badge.textContent = label;
    badge.className = `badge state-${r.state}`;
    const evidence = r.evidence || (r.state === 'fits' ? 'Fits: swap did not climb while it ran, or it is not to blame.' : '');
    if (badge.title !== evidence) badge.title = evidence;
  }
}
