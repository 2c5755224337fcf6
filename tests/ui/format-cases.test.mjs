// The page's number formats against the Rust functions they copy, on one
// table of cases that the Rust side writes with its own answers
// (format-cases.json, from crates/cli/src/serve/contract.rs; its test fails
// when the file is stale).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import * as format from '../../ui/js/format.js';

const table = JSON.parse(readFileSync(new URL('./format-cases.json', import.meta.url), 'utf8'));

test('the table holds every format the page shares with the Rust side', () => {
  assert.deepEqual(
    table.groups.map((/** @type {{js: string}} */ g) => g.js),
    ['bytes', 'delta', 'limit', 'duration', 'eta', 'pct'],
  );
  for (const g of table.groups) assert.ok(g.cases.length >= 5, `${g.js}: ${g.cases.length} cases`);
});

for (const g of table.groups) {
  test(`${g.js} writes what ${g.rust} writes`, () => {
    const fn = format[g.js];
    assert.equal(typeof fn, 'function', `format.js exports no ${g.js}`);
    // Infinity and NaN come as their names (JSON has no number for them).
    const wrong = g.cases
      .map(([input, want]) => ({ input, want, have: fn(Number(input)) }))
      .filter((c) => c.have !== c.want);
    assert.deepEqual(wrong, [], `${g.js} (${g.input}) differs from ${g.rust}`);
  });
}

test('an unchanged figure is a bare 0 in the table, an unknown one a dash', () => {
  assert.equal(format.delta(0), '0');
  assert.equal(format.bytes(null), '–');
  assert.equal(format.pct(null), '–');
});
