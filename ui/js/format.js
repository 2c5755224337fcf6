// @ts-check
// Numbers as swapsight writes them everywhere: each function here copies a
// Rust one (named in its comment) and writes what it writes, checked on the
// table of cases the Rust side generates (tests/ui/format-cases.json).
// Sizes are binary multiples under their binary names, GiB / MiB / KiB
// (docs/units.md).

import { STATES } from './contract.js';

const KIB = 1024;
const MIB = KIB * 1024;
const GIB = MIB * 1024;

/**
 * `x` with `digits` decimals as Rust's `{:.N}` writes it. That is
 * `toFixed` (both round the exact binary value) but for an exact tie —
 * 2.5, 1.25: a binary fraction halfway between two results — which Rust
 * rounds to the even digit and `toFixed` away from zero. A tie at `digits`
 * decimals is an odd multiple of 2^-(digits+1), and `%` is exact.
 * @param {number} x
 * @param {number} digits
 */
export function fixed(x, digits) {
  const s = x.toFixed(digits);
  const step = 2 ** -digits;
  if (Math.abs(x) % step !== step / 2) return s;
  const last = Number(s[s.length - 1]);
  // Rounded away from zero to an odd digit: the even one is one below (an
  // odd digit is at least 1, so nothing carries).
  return last % 2 ? s.slice(0, -1) + String(last - 1) : s;
}

/**
 * 1288490188 → "1.2 GiB", 356515840 → "340 MiB", -5 MiB → "-5 MiB"
 * (units.rs `format_bytes`); no figure → "–".
 * @param {number | null | undefined} b
 */
export function bytes(b) {
  if (b == null || Number.isNaN(b)) return '–';
  const sign = b < 0 ? '-' : '';
  const a = Math.abs(b);
  if (a >= GIB) return `${sign}${fixed(a / GIB, 1)} GiB`;
  if (a >= MIB) return `${sign}${fixed(a / MIB, 0)} MiB`;
  return `${sign}${fixed(a / KIB, 0)} KiB`;
}

/**
 * A change: "+340 MiB", "-1.2 GiB" (units.rs `format_growth`), but "0"
 * where it did not change (the table's Δ column, where `format_growth` would
 * write "0 KiB").
 * @param {number | null | undefined} b
 */
export function delta(b) {
  if (!b) return '0';
  return b > 0 ? `+${bytes(b)}` : bytes(b);
}

/** The chart's axis labels, short: "12G", "512M" (the page's own; no Rust twin). */
export function bytesAxis(b) {
  const a = Math.abs(b);
  if (a >= GIB) return `${+(b / GIB).toFixed(a >= 10 * GIB ? 0 : 1)}G`;
  if (a >= MIB) return `${Math.round(b / MIB)}M`;
  if (a === 0) return '0';
  return `${Math.round(b / KIB)}K`;
}

/**
 * A limit as people set it: `256 MiB`, `16 GiB` when it is a whole number of
 * them (a cgroup limit usually is), else as `bytes` (units.rs `format_limit`).
 * @param {number} b
 */
export function limit(b) {
  if (b >= GIB && b % GIB === 0) return `${b / GIB} GiB`;
  if (b >= MIB && b % MIB === 0) return `${b / MIB} MiB`;
  return bytes(b);
}

/**
 * A percentage, whole: "43 %" (as the Rust side writes one, `{:.0} %`).
 * @param {number | null | undefined} p
 */
export function pct(p) {
  return p == null ? '–' : `${fixed(p, 0)} %`;
}

/**
 * Page-ins (or swap-ins) per second in the table: "12", "2.3", "2.5k" (the
 * page's own; no Rust twin).
 * @param {number | null | undefined} r
 */
export function rate(r) {
  if (!r) return '0';
  if (r >= 1000) return `${(r / 1000).toFixed(1)}k`;
  return r >= 10 ? r.toFixed(0) : r.toFixed(1);
}

/**
 * 192400 ms → "3m12s", 12500 → "12.5s" (units.rs `format_duration`).
 * @param {number} ms
 */
export function duration(ms) {
  const s = ms / 1000;
  if (s < 60) return `${fixed(s, 1)}s`;
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
  if (secs < 90) return `~${fixed(secs, 0)} s`;
  if (secs < 5400) return `~${fixed(secs / 60, 0)} min`;
  return `~${fixed(secs / 3600, 0)} h`;
}
