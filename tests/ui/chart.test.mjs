// The chart's pure parts (chart-model.js), run by node: a replay's counter
// value under the crosshair is its last point at or before that instant;
// which processes get a line; the scales; the point the legend reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { counterAt, inView, legendItems, plotArea, pointAt, scales, seriesOf } from '../../ui/js/chart-model.js';

const MIB = 1024 * 1024;

const points = [
  { t_ms: 1000, value: 10 },
  { t_ms: 2000, value: 30 },
  { t_ms: 4000, value: 20 },
];

test('a counter under the crosshair is its last value so far', () => {
  assert.equal(counterAt(points, 999), null);
  assert.equal(counterAt(points, 1000), 10);
  assert.equal(counterAt(points, 3999), 30);
  assert.equal(counterAt(points, 4000), 20);
  assert.equal(counterAt(points, 1e12), 20);
  assert.equal(counterAt([], 5000), null);
});

/** A point every second from `t0`: swap growing 1 MiB a second, two processes. */
const run = Array.from({ length: 120 }, (_, i) => ({
  t_ms: 1000 * i,
  swap_growth_bytes: i * MIB,
  free_pct: 50 - i / 10,
  footprints: [[10, 200 * MIB], [20, (100 + i) * MIB]],
}));

test('the processes drawn: those still there first, then by peak', () => {
  assert.deepEqual(seriesOf(run), [20, 10]);
  const gone = [...run, { ...run[119], t_ms: 120000, footprints: [[10, 200 * MIB]] }];
  assert.deepEqual(seriesOf(gone), [10, 20]);
  assert.deepEqual(seriesOf(run, 1), [20]);
  assert.deepEqual(seriesOf([]), []);
});

test('a young live chart fills a minute; a replay shows all; bytes hold what is drawn', () => {
  const plot = plotArea(600, 300);
  assert.deepEqual(plot, { x: 46, y: 10, w: 514, h: 270 });
  const young = scales(run.slice(0, 10), { pids: [10, 20], counters: [], live: true, spanMs: 300000 }, plot);
  assert.equal(young.t1 - young.t0, 60000);
  assert.equal(young.X(young.t1), plot.x + plot.w);
  const live = scales(run, { pids: [10, 20], counters: [], live: true, spanMs: 30000 }, plot);
  assert.equal(live.t0, 119000 - 30000);
  const replay = scales(run, { pids: [10], counters: [], live: false, spanMs: 30000 }, plot);
  assert.equal(replay.t0, 0);
  assert.equal(replay.X(0), plot.x);
  // Process 20 (219 MiB) is not drawn: 200 MiB of process 10 is the top, +8 %.
  assert.ok(replay.hi >= 200 * MIB * 1.08 && replay.hi < 219 * MIB, `${replay.hi / MIB}`);
  assert.equal(replay.lo, 0);
  assert.equal(replay.Y(replay.lo), plot.y + plot.h);
  assert.equal(replay.YR(100), plot.y);
  const counter = { name: 'mlx.cache', points: [{ t_ms: 5000, value: -50 * MIB }, { t_ms: 6000, value: 900 * MIB }] };
  const withCounter = scales(run, { pids: [10], counters: [counter], live: false, spanMs: 30000 }, plot);
  assert.equal(withCounter.lo, -50 * MIB);
  assert.ok(withCounter.hi >= 900 * MIB * 1.08);
});

test('in view: from t0 on, and the point before it', () => {
  assert.deepEqual(inView(run, 117500).map((p) => p.t_ms), [117000, 118000, 119000]);
  assert.deepEqual(inView(run, 0).length, 120);
});

test('the legend reads the hovered point, else the latest', () => {
  const plot = plotArea(600, 300);
  const s = scales(run, { pids: [10, 20], counters: [], live: false, spanMs: 0 }, plot);
  assert.deepEqual(pointAt(run, null, plot, s), { at: run[119], hovered: false });
  assert.deepEqual(pointAt(run, plot.x - 1, plot, s), { at: run[119], hovered: false });
  assert.deepEqual(pointAt(run, plot.x, plot, s), { at: run[0], hovered: true });
  assert.equal(pointAt(run, s.X(41400), plot, s).at.t_ms, 41000);
  const counters = [{ name: 'queue', points: [{ t_ms: 0, value: 3 * MIB }] }];
  const items = legendItems(run[4], [{ pid: 20, color: 'red' }, { pid: 30, color: 'blue' }], {
    counters,
    counterColors: ['green'],
    names: new Map([[20, 'python3']]),
    swap: 's',
    free: 'f',
  });
  assert.deepEqual(
    items.map((i) => [i.cls, i.label, i.value, i.color]),
    [
      ['swap', 'swap growth', '4 MiB', 's'],
      ['free', 'free', '50 %', 'f'],
      ['proc', 'python3', '104 MiB', 'red'],
      ['proc', 'pid 30', '–', 'blue'],
      ['counter', 'queue (counter)', '3 MiB', 'green'],
    ],
  );
});
