// @ts-check
// Numbers as swapsight writes them everywhere (same units as the CLI's
// reports: binary multiples, written GB / MB / KB).

import { STATES } from './contract.js';

const KIB = 1024;
const MIB = KIB * 1024;
const GIB = MIB * 1024;

/** 1288490188 → "1.2 GB", 356515840 → "340 MB", -5 MiB → "-5 MB". */
export function bytes(b) {
  if (b == null || Number.isNaN(b)) return '–';
  const sign = b < 0 ? '-' : '';
  const a = Math.abs(b);
  if (a >= GIB) return `${sign}${(a / GIB).toFixed(1)} GB`;
  if (a >= MIB) return `${sign}${(a / MIB).toFixed(0)} MB`;
  return `${sign}${(a / KIB).toFixed(0)} KB`;
}

/** A change: "+340 MB", "-1.2 GB", "0". */
export function delta(b) {
  if (!b) return '0';
  return b > 0 ? `+${bytes(b)}` : bytes(b);
}

/** Axis labels: short, "12G", "512M". */
export function bytesAxis(b) {
  const a = Math.abs(b);
  if (a >= GIB) return `${+(b / GIB).toFixed(a >= 10 * GIB ? 0 : 1)}G`;
  if (a >= MIB) return `${Math.round(b / MIB)}M`;
  if (a === 0) return '0';
  return `${Math.round(b / KIB)}K`;
}

/**
 * A limit as people set it: `256 MiB`, `16 GiB` when it is a whole number of
 * them (a cgroup limit usually is), else as `bytes` (units.rs format_limit).
 * @param {number} b
 */
export function limit(b) {
  if (b >= GIB && b % GIB === 0) return `${b / GIB} GiB`;
  if (b >= MIB && b % MIB === 0) return `${b / MIB} MiB`;
  return bytes(b);
}

export function pct(p) {
  return p == null ? '–' : `${Math.round(p)} %`;
}

export function rate(r) {
  if (!r) return '0';
  if (r >= 1000) return `${(r / 1000).toFixed(1)}k`;
  return r >= 10 ? r.toFixed(0) : r.toFixed(1);
}

/** 192400 ms → "3m12s", 12500 → "12.5s". */
export function duration(ms) {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** State name → words, as the Rust side writes them. */
export const STATE_LABEL = Object.fromEntries(STATES.map((s) => [s.name, s.label]));

/** @param {string | null | undefined} s */
export function stateLabel(s) {
  return (s && STATE_LABEL[s]) || s || '–';
}

/**
 * Severity for sorting, in the detector's order (fits < hidden memory <
 * overflow < false fit); an unknown state sorts with fits.
 * @param {string | null | undefined} s
 */
export function stateRank(s) {
  return Math.max(0, STATES.findIndex((x) => x.name === s));
}

/**
 * Time left, short: `~40 s`, `~3 min`, `~2 h`, `now` (as the core's
 * `forecast::short_eta`).
 * @param {number} secs
 */
export function eta(secs) {
  if (!Number.isFinite(secs) || secs >= 360000) return 'a long while';
  if (secs < 1) return 'now';
  if (secs < 90) return `~${Math.round(secs)} s`;
  if (secs < 5400) return `~${Math.round(secs / 60)} min`;
  return `~${Math.round(secs / 3600)} h`;
}
