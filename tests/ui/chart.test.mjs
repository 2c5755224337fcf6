// The chart's pure parts, run by node: a replay's counter value under the
// crosshair is its last point at or before that instant.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { counterAt } from '../../ui/js/chart.js';

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
