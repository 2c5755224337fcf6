// The process table's filter and order.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { visibleRows } from '../../ui/js/rows.js';

const GB = 1024 ** 3;
const rows = [
  { pid: 10, name: 'python3', cmdline: 'python3 generate.py --steps 30', footprint_bytes: 18 * GB, state: 'false-fit', worst: 'false-fit' },
  { pid: 200, name: 'WindowServer', footprint_bytes: 1 * GB, state: 'fits', worst: 'fits' },
  { pid: 31, name: 'Safari', footprint_bytes: 2 * GB, state: 'fits', worst: 'overflow', pinned: true },
  { pid: 1000, name: 'kernel_task', footprint_bytes: 3 * GB, readable: false, state: 'fits', worst: 'fits' },
  { pid: 102, name: 'node', footprint_bytes: 2 * GB, state: 'hidden-memory', worst: 'hidden-memory' },
];
const pids = (rs) => rs.map((r) => r.pid);

test('the pinned process comes first, then the largest footprint', () => {
  assert.deepEqual(pids(visibleRows(rows, '', { key: 'footprint', dir: -1 })), [31, 10, 102, 200, 1000]);
  // Ascending; an unreadable footprint sorts as the smallest.
  assert.deepEqual(pids(visibleRows(rows, '', { key: 'footprint', dir: 1 })), [31, 1000, 200, 102, 10]);
});

test('names sort by letters whatever their case; ties fall back to footprint then pid', () => {
  assert.deepEqual(pids(visibleRows(rows, '', { key: 'name', dir: 1 })), [31, 1000, 102, 10, 200]);
  const twins = [
    { pid: 5, name: 'a', footprint_bytes: 1 },
    { pid: 3, name: 'a', footprint_bytes: 1 },
    { pid: 9, name: 'a', footprint_bytes: 2 },
  ];
  assert.deepEqual(pids(visibleRows(twins, '', { key: 'name', dir: 1 })), [9, 3, 5]);
});

test('state sorts by severity, then the worst state it reached', () => {
  // Two fits tie: the larger footprint first.
  assert.deepEqual(pids(visibleRows(rows, '', { key: 'state', dir: -1 })), [31, 10, 102, 1000, 200]);
  const worst = [
    { pid: 1, name: 'a', footprint_bytes: 9, state: 'fits', worst: 'fits' },
    { pid: 2, name: 'b', footprint_bytes: 1, state: 'fits', worst: 'false-fit' },
  ];
  assert.deepEqual(pids(visibleRows(worst, '', { key: 'state', dir: -1 })), [2, 1]);
});

test('the filter matches name, pid prefix or command line, any case', () => {
  assert.deepEqual(pids(visibleRows(rows, 'generate', { key: 'footprint', dir: -1 })), [10]);
  assert.deepEqual(pids(visibleRows(rows, 'window', { key: 'footprint', dir: -1 })), [200]);
  assert.deepEqual(pids(visibleRows(rows, '10', { key: 'pid', dir: 1 })), [10, 102, 1000]);
  assert.deepEqual(pids(visibleRows(rows, 'nothing', { key: 'pid', dir: 1 })), []);
});

test('an unknown column sorts by footprint; the input is left as it was', () => {
  const before = pids(rows);
  assert.deepEqual(pids(visibleRows(rows, '', { key: 'no-such', dir: -1 })), [31, 10, 102, 200, 1000]);
  assert.deepEqual(pids(rows), before);
});
