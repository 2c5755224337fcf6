// The pure modules of the web view, run by node: numbers as the page writes
// them, the state order, chart ticks.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { bytes, bytesAxis, delta, duration, eta, pct, rate, stateLabel, stateRank } from '../../ui/js/format.js';
import { STATES } from '../../ui/js/contract.js';
import { byteTicks, niceStep } from '../../ui/js/ticks.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

test('bytes are written in binary multiples, one decimal for GiB', () => {
  assert.equal(bytes(1288490188), '1.2 GiB');
  assert.equal(bytes(356515840), '340 MiB');
  assert.equal(bytes(-5 * MIB), '-5 MiB');
  assert.equal(bytes(2048), '2 KiB');
  assert.equal(bytes(null), '–');
  assert.equal(bytes(NaN), '–');
  assert.equal(delta(340 * MIB), '+340 MiB');
  assert.equal(delta(-1.2 * GIB), '-1.2 GiB');
  assert.equal(delta(0), '0');
  assert.equal(bytesAxis(12 * GIB), '12G');
  assert.equal(bytesAxis(1.5 * GIB), '1.5G');
  assert.equal(bytesAxis(512 * MIB), '512M');
  assert.equal(bytesAxis(0), '0');
});

test('durations, percentages and rates read as the CLI writes them', () => {
  assert.equal(duration(12500), '12.5s');
  assert.equal(duration(192400), '3m12s');
  assert.equal(duration(3 * 3600e3 + 5 * 60e3), '3h05m');
  assert.equal(pct(42.6), '43 %');
  assert.equal(pct(null), '–');
  assert.equal(rate(0), '0');
  assert.equal(rate(2.345), '2.3');
  assert.equal(rate(12.4), '12');
  assert.equal(rate(2500), '2.5k');
});

test("states rank in the Rust side's order and read in its words", () => {
  const names = STATES.map((s) => s.name);
  assert.deepEqual(names, ['fits', 'hidden-memory', 'overflow', 'false-fit']);
  for (let i = 1; i < names.length; i++) assert.ok(stateRank(names[i]) > stateRank(names[i - 1]), names[i]);
  assert.equal(stateRank('no-such-state'), 0);
  assert.equal(stateRank(undefined), 0);
  assert.equal(stateLabel('false-fit'), 'false fit');
  assert.equal(stateLabel('hidden-memory'), 'hidden memory');
  assert.equal(stateLabel('something-new'), 'something-new');
  assert.equal(stateLabel(null), '–');
});

test('time ticks step by 1, 2, 2.5 or 5 times a power of ten', () => {
  assert.equal(niceStep(300, 5), 100);
  assert.equal(niceStep(300, 4), 100);
  assert.equal(niceStep(60, 5), 20);
  assert.equal(niceStep(10, 4), 2.5);
  assert.equal(niceStep(1, 2), 0.5);
  for (const [range, count] of [[7, 3], [3600, 6], [0.4, 2], [86400, 9]]) {
    const step = niceStep(range, count);
    assert.ok(range / step <= count, `${range}/${count}: ${step}`);
    const mant = step / 10 ** Math.floor(Math.log10(step));
    assert.ok([1, 2, 2.5, 5].some((m) => Math.abs(m - mant) < 1e-9), `${step}`);
  }
});

test('byte ticks double from 1 MiB and cover the range', () => {
  // At most `count` steps: 3 GiB in 6 steps of 512 MiB, not 3 of 1 GiB.
  const t = byteTicks(0, 3 * GIB, 6);
  assert.deepEqual(t, [0, 1, 2, 3, 4, 5, 6].map((h) => (h * GIB) / 2));
  assert.deepEqual(byteTicks(0, 3 * GIB, 5), [0, 1, 2, 3].map((g) => g * GIB));
  const small = byteTicks(0, 10 * MIB, 4);
  assert.deepEqual(small, [0, 4 * MIB, 8 * MIB]);
  const u = byteTicks(100 * MIB, 900 * MIB, 4);
  assert.ok(u.length <= 5 && u[0] >= 100 * MIB && u[u.length - 1] <= 900 * MIB + 1, `${u}`);
  for (let i = 1; i < u.length; i++) assert.equal(u[i] - u[i - 1], u[1] - u[0]);
});

test('time left reads short, as the core says it', () => {
  assert.equal(eta(40.2), '~40 s');
  assert.equal(eta(185), '~3 min');
  assert.equal(eta(0.3), 'now');
  assert.equal(eta(Infinity), 'a long while');
});
