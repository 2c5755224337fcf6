// The header's figures: one model for the live view and the replay.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { readFileSync } from 'node:fs';

import { LOW_FREE_PCT } from '../../ui/js/contract.js';
import { liveFigures, replayFigures } from '../../ui/js/header.js';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

const snapshot = {
  state: 'false-fit',
  title: '⚠ false fit · swap +10 GiB',
  phase: 'denoise',
  process_count: 412,
  system: { free_pct: 6.4, phys_bytes: 48 * GIB, swap_used_bytes: 12 * GIB, compressed_bytes: 3 * GIB },
  view: {
    swap_growth_bytes: 10 * GIB,
    swap_growth_window_bytes: 2 * GIB,
    swap_tolerance_bytes: 256 * MIB,
    swap_climbing: true,
    footprints_share: 0.385,
    unexplained_growth_window_bytes: 1 * GIB,
    gap: { unexplained_bytes: 20 * GIB, coverage: 0.48, unreadable: 3, used_bytes: 40 * GIB, footprints_bytes: 20 * GIB, wired_bytes: 4 * GIB },
  },
};

test('a false fit live: low free memory, swap climbing, the gap growing', () => {
  const f = liveFigures(snapshot);
  assert.equal(f.state, 'false-fit');
  assert.equal(f.stateTitle, 'Menu bar: ⚠ false fit · swap +10 GiB');
  assert.deepEqual(f.free, { text: '6 %', sub: 'of 48.0 GiB', flag: true });
  assert.equal(f.swap.text, '12.0 GiB');
  assert.equal(f.swap.sub, '⇡10.0 GiB since baseline');
  assert.match(f.swap.title, /Swap grew 2.0 GiB in the detector's window \(tolerance 256 MiB\)/);
  assert.equal(f.swap.flag, true);
  assert.equal(f.compressed, '3.0 GiB');
  assert.equal(f.gap.text, '20.0 GiB');
  assert.equal(f.gap.sub, 'footprints: 48 % of used · ⇡1.0 GiB in window · 3 unreadable');
  assert.match(f.gap.title, /^used 40.0 GiB − readable footprints 20.0 GiB\nwired 4.0 GiB\n/);
  assert.equal(f.gap.flag, true);
  assert.deepEqual(f.count, { text: '412', sub: 'footprints 39 % of RAM' });
  // Linux: the share counts each footprint's own VmSwap, and says so.
  const linux = { ...snapshot, view: { ...snapshot.view, gap: { ...snapshot.view.gap, held_bytes: 22 * GIB } } };
  assert.deepEqual(liveFigures(linux).count, { text: '412', sub: 'footprints 39 % of RAM with their swap' });
  assert.equal(f.phase, 'phase: denoise');
});

test('a quiet machine: nothing flagged, no gap, no compressor, no phase', () => {
  const quiet = {
    ...snapshot,
    state: 'fits',
    title: '',
    phase: null,
    system: { ...snapshot.system, free_pct: 60, compressed_bytes: 0 },
    view: { ...snapshot.view, swap_growth_bytes: -MIB * 5, swap_climbing: false, gap: null, footprints_share: 0 },
  };
  const f = liveFigures(quiet);
  assert.equal(f.stateTitle, 'Nothing flagged');
  assert.equal(f.free.flag, false);
  assert.equal(f.swap.sub, '⇣5 MiB since baseline');
  assert.equal(f.swap.flag, false);
  assert.equal(f.compressed, null);
  assert.equal(f.gap, null);
  assert.equal(f.count.sub, '');
  assert.equal(f.phase, null);
});

test("a replay shows the run's own figures and its phases", () => {
  const r = {
    report: {
      verdict: 'overflow',
      min_free_pct: 3,
      phys_bytes: 16 * GIB,
      swap_growth_bytes: 4 * GIB,
      swap_tolerance_bytes: 256 * MIB,
      duration_ms: 192400,
      processes: [{}, {}, {}],
      footprints: { unexplained_growth_bytes: 0, unexplained_peak_bytes: 2 * GIB, min_coverage: 0.9 },
    },
    phases: ['load', 'encode', 'denoise', 'decode', 'save'].map((name) => ({ name })),
  };
  const f = replayFigures(r);
  assert.equal(f.state, 'overflow');
  assert.equal(f.stateTitle, 'Verdict of the run: overflow');
  assert.deepEqual(f.free, { text: '3 %', sub: 'lowest, of 16.0 GiB', flag: true });
  assert.equal(f.swap.text, '⇡4.0 GiB');
  assert.equal(f.swap.sub, 'grew during the run (3m12s)');
  assert.equal(f.swap.flag, true);
  assert.equal(f.compressed, null);
  assert.equal(f.gap.text, '0 KiB');
  assert.equal(f.gap.sub, 'grew to 2.0 GiB; footprints ≥ 90 % of used');
  assert.deepEqual(f.count, { text: '3', sub: 'in the trace' });
  assert.equal(f.phase, 'phases: load, encode, denoise, decode, …');
  assert.equal(replayFigures({ ...r, phases: [] }).phase, null);
  assert.equal(replayFigures({ ...r, report: { ...r.report, footprints: null } }).gap, null);
});

test('pressure and time to trouble in the live header; absent when the OS gives none', () => {
  const pressed = {
    ...snapshot,
    system: {
      ...snapshot.system,
      pressure: { level: 'warning', some: { avg10: 12.5, avg60: 3, total_us: 1 }, full: { avg10: 2, avg60: 1, total_us: 1 } },
    },
    forecast: { swap_budget_s: 40.2, swap_full_s: 600 },
  };
  const f = liveFigures(pressed);
  assert.equal(f.pressure.text, 'warning');
  assert.equal(f.pressure.level, 'warning');
  assert.equal(f.pressure.sub, 'PSI some 12.5 %, full 2.0 % (10 s)');
  assert.equal(f.pressure.flag, true);
  assert.equal(f.trouble, 'swap budget in ~40 s');
  const mac = liveFigures({ ...snapshot, system: { ...snapshot.system, pressure: { kernel_level: 'critical', level: 'critical' } }, forecast: { free_floor_s: 185 } });
  assert.equal(mac.pressure.sub, "the kernel's level");
  assert.equal(mac.trouble, 'free memory floor in ~3 min');
  const none = liveFigures({ ...snapshot, forecast: {} });
  assert.equal(none.pressure, null);
  assert.equal(none.trouble, null);
});

test('inside a memory cgroup: free memory and swap are the scope\'s', () => {
  const scoped = {
    ...snapshot,
    scope: { path: '/kubepods/pod1', version: 2, limit_bytes: 256 * MIB, usage_bytes: 240 * MIB, swap_bytes: 500 * MIB },
  };
  const f = liveFigures(scoped);
  assert.equal(f.free.text, '6 %');
  assert.equal(f.free.sub, 'inside a 256 MiB cgroup limit');
  assert.equal(f.free.title, 'cgroup v2 /kubepods/pod1: 240 MiB used of 256 MiB; its swap 500 MiB');
  assert.equal(f.free.flag, true);
  assert.equal(f.swap.text, '500 MiB');
  // Without a scope, the host's.
  assert.equal(liveFigures(snapshot).free.sub, 'of 48.0 GiB');
});

test("on a Mac whose GPU holds memory: the GPU beside the footprints, swap written beside swap", () => {
  const mac = {
    ...snapshot,
    view: {
      ...snapshot.view,
      swap_written_bytes: 31 * GIB,
      gap: { ...snapshot.view.gap, gpu_in_use_bytes: 18 * GIB, gpu_bytes: 2 * GIB },
    },
  };
  const f = liveFigures(mac);
  // 18 GB in use, 2 GB of it in footprints: 16 GB of the 20 GB gap.
  assert.equal(f.gap.sub, 'footprints: 48 % of used · GPU holds 16.0 GiB · ⇡1.0 GiB in window · 3 unreadable');
  assert.match(f.gap.title, /\nGPU in use 18.0 GiB · footprints 20.0 GiB · not explained 20.0 GiB\n/);
  assert.match(f.swap.title, /\n31.0 GiB written to swap since baseline/);
  // Without the figures (Linux, older traces) nothing is said of them.
  const f0 = liveFigures(snapshot);
  assert.doesNotMatch(f0.gap.sub, /GPU/);
  assert.doesNotMatch(f0.swap.title, /written/);

  const replay = {
    report: {
      verdict: 'false-fit', min_free_pct: 4, phys_bytes: 48 * GIB, swap_growth_bytes: 9 * GIB,
      swap_tolerance_bytes: 256 * MIB, duration_ms: 60_000, processes: [],
      swap_written: { bytes: 12 * GIB, span_ms: 60_000, host_wide: true },
      footprints: {
        unexplained_growth_bytes: GIB, unexplained_peak_bytes: 13 * GIB, min_coverage: 0.5,
        gpu_at_peak: { t_ms: 1, in_use_bytes: 31 * GIB, footprints_bytes: 18 * GIB, unexplained_bytes: 13 * GIB, held_by_gpu_bytes: 12 * GIB },
      },
    },
    phases: [],
  };
  const r = replayFigures(replay);
  assert.match(r.swap.title, /\n12.0 GiB written to swap over the run \(the whole machine\)$/);
  assert.equal(r.gap.title, 'At the peak: GPU in use 31.0 GiB · footprints 18.0 GiB · not explained 13.0 GiB; the GPU holds 12.0 GiB of it outside footprints');
});

test('an allocator cache the recording names is said under the gap, and flags it', () => {
  const words = 'MLX cache grew 9.1 GiB while active stayed 4.2 GiB — mx.set_cache_limit(…)';
  const f = liveFigures({ ...snapshot, caches: [{ allocator: 'MLX', words }] });
  assert.match(f.gap.sub, / · MLX cache growing$/);
  assert.ok(f.gap.title.endsWith(`\n${words}`), f.gap.title);
  assert.equal(f.gap.flag, true);
  assert.equal(liveFigures(snapshot).gap.sub.includes('cache'), false);
});

test("free memory reads as low below the Rust side's share, live, in a cgroup and in a replay", () => {
  assert.equal(typeof LOW_FREE_PCT, 'number');
  const live = (/** @type {number} */ free_pct) =>
    liveFigures({ ...snapshot, system: { ...snapshot.system, free_pct } }).free.flag;
  assert.equal(live(LOW_FREE_PCT - 0.1), true);
  assert.equal(live(LOW_FREE_PCT), false);
  const limit_bytes = 1000 * MIB;
  const scoped = (/** @type {number} */ freePct) =>
    liveFigures({
      ...snapshot,
      scope: { path: '/x', version: 2, limit_bytes, usage_bytes: limit_bytes * (1 - freePct / 100) },
    }).free.flag;
  assert.equal(scoped(LOW_FREE_PCT - 1), true);
  assert.equal(scoped(LOW_FREE_PCT + 1), false);
  const replay = (/** @type {number} */ min_free_pct) =>
    replayFigures({
      report: { verdict: 'fits', min_free_pct, phys_bytes: GIB, swap_growth_bytes: 0, swap_tolerance_bytes: 0, duration_ms: 1, processes: [] },
    }).free.flag;
  assert.equal(replay(LOW_FREE_PCT - 0.1), true);
  assert.equal(replay(LOW_FREE_PCT), false);
  // One threshold, the contract's: no number of its own in the header.
  const source = readFileSync(new URL('../../ui/js/header.js', import.meta.url), 'utf8');
  assert.deepEqual(source.match(/free\w*\s*<\s*\d/gi), null);
});
