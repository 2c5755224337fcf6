// A command of the live session → the HTTP request `swapsight serve`
// answers, by the route table the Rust side writes (ui/js/contract.js); and
// the name a download is saved as.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { downloadName, exportPath, route } from '../../ui/js/routes.js';
import { ROUTES } from '../../ui/js/contract.js';

test('each command maps to its method, path, query and body', () => {
  assert.deepEqual(route('snapshot'), ['GET', '/api/snapshot', undefined]);
  assert.deepEqual(route('history'), ['GET', '/api/history', undefined]);
  assert.deepEqual(route('history', { seconds: 300 }), ['GET', '/api/history?seconds=300', undefined]);
  assert.deepEqual(route('process', { pid: 42 }), ['GET', '/api/process/42', undefined]);
  assert.deepEqual(route('pin', { pid: 7 }), ['POST', '/api/pin', { pid: 7 }]);
  assert.deepEqual(route('pin', {}), ['POST', '/api/pin', { pid: null }]);
  assert.deepEqual(route('start_recording', {}), ['POST', '/api/recording/start', { pid: null }]);
  assert.deepEqual(route('stop_recording'), ['POST', '/api/recording/stop', undefined]);
  assert.deepEqual(route('reset_baseline'), ['POST', '/api/reset-baseline', undefined]);
  assert.deepEqual(route('replay', { name: 'run 1.jsonl' }), ['GET', '/api/recordings/run%201.jsonl/replay', undefined]);
});

test('path parameters are escaped, never left open', () => {
  const [, path] = route('report', { name: '../etc/passwd?x=1#y' });
  assert.equal(path, '/api/recordings/..%2Fetc%2Fpasswd%3Fx%3D1%23y/report');
  assert.throws(() => route('process', {}), /process needs pid/);
});

test('commands only the app has, and unknown ones, are refused by name', () => {
  for (const cmd of ['open_trace', 'export_recording', 'events', 'export', 'toString', '__proto__', 'nope']) {
    assert.throws(() => route(cmd), new RegExp(`${cmd} is not available in a browser`));
  }
});

test('every route of the contract but the stream and the download is callable', () => {
  for (const [cmd, r] of Object.entries(ROUTES)) {
    if (cmd === 'events' || cmd === 'export') continue;
    const [method, path] = route(cmd, { pid: 1, name: 'a.jsonl' });
    assert.equal(method, r.method, cmd);
    assert.ok(path.startsWith('/api/'), path);
    assert.ok(!/[{}]/.test(path), path);
  }
});

test('an export path names the recording and the format', () => {
  assert.equal(exportPath('run.jsonl', 'csv'), '/api/recordings/run.jsonl/export?format=csv');
  assert.equal(exportPath('a&b.jsonl', 'png'), '/api/recordings/a%26b.jsonl/export?format=png');
});

test("a download takes the server's file name, else the stem and the format's extension", () => {
  assert.equal(downloadName('attachment; filename="run.csv"', 'run.jsonl', 'csv'), 'run.csv');
  assert.equal(downloadName('attachment; filename=run.json', 'run.jsonl', 'perfetto'), 'run.json');
  assert.equal(downloadName("attachment; filename*=UTF-8''r%C3%BCn.csv; filename=\"run.csv\"", 'x.jsonl', 'csv'), 'rün.csv');
  assert.equal(downloadName('attachment; filename="a\\"b.csv"', 'x.jsonl', 'csv'), 'a"b.csv');
  // Never a path; nothing usable: the fallback.
  assert.equal(downloadName('attachment; filename="../../.bashrc"', 'x.jsonl', 'csv'), '.bashrc');
  assert.equal(downloadName('attachment; filename=".."', 'run.jsonl', 'csv'), 'run.csv');
  assert.equal(downloadName("attachment; filename*=UTF-8''%E0%A4%A", 'run.jsonl', 'png'), 'run.png');
  assert.equal(downloadName(null, 'run.jsonl', 'perfetto'), 'run.json');
  assert.equal(downloadName('attachment', 'run.jsonl', 'jsonl'), 'run.jsonl');
});
