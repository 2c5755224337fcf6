// @ts-check
// The process table's columns and its order: which rows a filter keeps and
// how they sort. Pure, so `node --test` covers it; table.js draws.

import { stateRank } from './format.js';

/**
 * @typedef {{ pid: number, name: string, cmdline?: string | null, pinned?: boolean,
 *   footprint_bytes: number, readable?: boolean, [key: string]: any }} Row
 * @typedef {{ key: string, label: string, title?: string, num?: boolean,
 *   sortable?: boolean, value?: (r: Row) => any }} Column
 */

/** @type {Column[]} */
export const COLUMNS = [
  { key: 'pin', label: '', title: 'Pin a process: watched, kept first, recorded', sortable: false },
  { key: 'name', label: 'process', value: (r) => r.name.toLowerCase() },
  { key: 'pid', label: 'pid', value: (r) => r.pid, num: true },
  { key: 'footprint', label: 'footprint', value: (r) => (r.readable === false ? -1 : r.footprint_bytes), num: true, title: "Memory charged to the process. macOS: phys_footprint (Activity Monitor's Memory), which includes its compressed memory, in RAM or swapped out. Linux: RssAnon + RssShmem, resident only (swapped pages are in VmSwap). Neither counts memory owned outside the footprint." },
  { key: 'delta', label: 'Δ footprint', value: (r) => r.footprint_delta_bytes, num: true, title: "Change of footprint over the detector's window" },
  { key: 'pageins', label: 'page-ins/s', value: (r) => r.swapins_per_s ?? r.pageins_per_s, num: true, title: 'macOS: swap-ins per second in pages (TASK_VM_INFO ledger_swapins) where the OS gives them, else file page-ins (ri_pageins, not swap). Linux: major faults per second (majflt), swap and file alike.' },
  { key: 'swap', label: 'swap (measured)', value: (r) => r.swap_bytes ?? -1, num: true, title: "The process's own swap, as the OS measures it (Linux VmSwap). macOS does not say; its footprint already includes what is compressed or swapped." },
  { key: 'gpu', label: 'GPU memory', value: (r) => r.gpu_bytes ?? -1, num: true, title: 'macOS: memory the process owns under the "graphics" ledger tag (TASK_VM_INFO), in or out of its footprint. That Metal buffers are tagged so is likely, not established.' },
  { key: 'outside', label: 'outside the footprint', value: (r) => r.outside_footprint_bytes ?? -1, num: true, title: 'macOS: memory the process owns that its footprint does not count (graphics, neural and media *_nofootprint ledger tags, resident or compressed): hidden memory.' },
  { key: 'state', label: 'state', value: (r) => stateRank(r.state) * 10 + stateRank(r.worst) },
];

/** Column index by key. */
export const COL = Object.fromEntries(COLUMNS.map((c, i) => [c.key, i]));

/** Text and pid sort ascending first; figures largest first. */
export const DEFAULT_DIR = /** @type {Record<string, number>} */ ({ name: 1, pid: 1 });

/**
 * The rows a filter keeps (name, pid prefix or command line, any case),
 * pinned first, then by the column in `sort.dir` (1 ascending, -1
 * descending), ties by footprint then pid.
 * @param {Row[]} rows
 * @param {string} filter already trimmed and lower-cased
 * @param {{ key: string, dir: number }} sort
 * @returns {Row[]}
 */
export function visibleRows(rows, filter, sort) {
  const col = COLUMNS.find((c) => c.key === sort.key && c.value) || COLUMNS[COL.footprint];
  const value = /** @type {(r: Row) => any} */ (col.value);
  const f = filter;
  const kept = f
    ? rows.filter((r) => r.name.toLowerCase().includes(f) || String(r.pid).startsWith(f) || (r.cmdline || '').toLowerCase().includes(f))
    : rows.slice();
  const dir = sort.dir;
  kept.sort((a, b) => {
    if (!!a.pinned !== !!b.pinned) return a.pinned ? -1 : 1;
    const va = value(a);
    const vb = value(b);
    if (va < vb) return -dir;
    if (va > vb) return dir;
    return b.footprint_bytes - a.footprint_bytes || a.pid - b.pid;
  });
  return kept;
}
