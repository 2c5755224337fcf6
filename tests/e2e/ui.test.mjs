// The web UI of a running `swapsight serve`, in headless Chromium (Debian's,
// driven by playwright-core; no browser download).
//
//   SWAPSIGHT_URL=http://127.0.0.1:7878/ node --test tests/e2e/
//
// Environment:
//   SWAPSIGHT_URL            the URL `swapsight serve` printed, with its
//                            token if it has one (required)
//   SWAPSIGHT_FALSE_FIT_PID  a process in a real false fit: its row must show
//                            the flag within 20 s (optional)
//   SWAPSIGHT_FALSE_FIT_NAME how that row's name must start (optional)
//   SWAPSIGHT_FALSE_FIT_CMDLINE what that row's name must show on hover (optional)
//   SWAPSIGHT_SCREENSHOT     where to save a PNG of the page (optional)
//   CHROMIUM                 the browser [default: /usr/bin/chromium; the Rust
//                            harness passes what swapsight_testkit::browser()
//                            found, Google Chrome on Ubuntu's runners]
//
// crates/cli/tests/cli/serve.rs starts the server and a real false fit (a
// memory cgroup over a swap file) and runs this.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.env.SWAPSIGHT_URL;
const falseFitPid = process.env.SWAPSIGHT_FALSE_FIT_PID;
const falseFitName = process.env.SWAPSIGHT_FALSE_FIT_NAME;
const falseFitCmdline = process.env.SWAPSIGHT_FALSE_FIT_CMDLINE;
const screenshot = process.env.SWAPSIGHT_SCREENSHOT;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The app's popover at its default size (src-tauri/tauri.conf.json). */
function popoverSize() {
  const conf = JSON.parse(readFileSync(new URL('../../src-tauri/tauri.conf.json', import.meta.url), 'utf8'));
  const main = conf.app.windows.find((/** @type {{label: string}} */ w) => w.label === 'main');
  return { width: main.width, height: main.height };
}

/** The header with every figure at its longest (a Mac's six cards). */
const LONGEST_HEADER = {
  state: 'false-fit',
  stateTitle: '',
  free: { text: '100 %', sub: 'inside a 1536 MiB cgroup limit', flag: true },
  swap: { text: '1023.9 GiB', sub: '⇡1023.9 GiB since baseline', flag: true },
  compressed: '1023.9 GiB',
  gap: {
    text: '-1023.9 GiB',
    sub: 'footprints: 100 % of used · GPU holds 1023.9 GiB · ⇡1023.9 GiB in window · 1234 unreadable · MLX, PyTorch cache growing',
    flag: true,
  },
  count: { text: '12345', sub: 'footprints 100 % of RAM' },
  phase: 'phase: a-long-phase-name',
  pressure: { level: 'critical', text: 'critical', sub: 'PSI some 100.0 %, full 100.0 % (10 s)', flag: true },
  trouble: 'free memory floor in ~59 min',
};

/**
 * The header cards' texts that do not fit their card (scrollWidth over
 * clientWidth): what an ellipsis or a clip would hide; visible cards only.
 * With `figures`, the header is first written with them, in the same task
 * as the measure (the next live update writes the real ones back).
 * @param {import('playwright-core').Page} page
 * @param {object | null} [figures]
 */
function headerOverflows(page, figures = null) {
  return page.evaluate(async (f) => {
    if (f) (await import('/js/header.js')).renderHeader(f);
    return [...document.querySelectorAll('.figures .fig:not([hidden]) :is(dt, dd)')]
      .filter((e) => e.scrollWidth > e.clientWidth)
      .map((e) => `${e.closest('.fig')?.id}: "${e.textContent}" is ${e.scrollWidth} px in ${e.clientWidth}`);
  }, figures);
}

/** Bytes back from the table's text ("1.2 GiB", "340 MiB", "12 KiB"). */
function parseBytes(text) {
  const m = /^(-?[\d.]+) (GiB|MiB|KiB)$/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1]) * { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[m[2]];
}

const title = falseFitPid
  ? 'the live table lists real processes and flags a real false fit'
  : 'the live table lists real processes';

test(title, { timeout: 90_000 }, async () => {
  assert.ok(url, 'set SWAPSIGHT_URL to the URL `swapsight serve` printed');
  const profile = mkdtempSync(join(tmpdir(), 'swapsight-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ARGS,
    viewport: { width: 1100, height: 900 },
  });
  const problems = [];
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      // A failed load is also a response, judged below with its URL.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
        problems.push(`console: ${m.text()}`);
      }
    });
    page.on('response', (r) => {
      // The browser's own favicon probe is not the page's.
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
    });
    // The page's requests not answered yet, and since when: a wait below
    // that times out says which were still out (a request the server sat
    // on, or one the browser queued behind its six connections).
    const inFlight = new Map();
    page.on('request', (r) => inFlight.set(r, Date.now()));
    page.on('requestfinished', (r) => inFlight.delete(r));
    page.on('requestfailed', (r) => inFlight.delete(r));
    const outstanding = () =>
      [...inFlight].map(([r, at]) => `${r.method()} ${new URL(r.url()).pathname} for ${Date.now() - at} ms`).join('; ') || 'none';

    await page.goto(url, { waitUntil: 'load' });
    // A token in the printed URL is traded for a cookie (the query) and
    // kept by the page's scripts (the fragment); neither stays in sight.
    await page.waitForFunction(() => !window.location.href.includes('token='), null, { timeout: 5_000 });

    // Real processes with real footprints, as the live session sees them.
    await page.waitForSelector('#processes tr[data-pid]', { timeout: 15_000 });
    const rows = await page.$$eval('#processes tr[data-pid]', (trs) =>
      trs.map((tr) => ({
        pid: Number(tr.dataset.pid),
        name: tr.querySelector('td.col-name')?.textContent ?? '',
        footprint: tr.querySelector('td.col-footprint')?.textContent ?? '',
        state: tr.dataset.state,
      })),
    );
    assert.ok(rows.length >= 3, `only ${rows.length} rows: ${JSON.stringify(rows)}`);
    const sized = rows.filter((r) => parseBytes(r.footprint) > 0);
    assert.ok(sized.length >= 3, `rows without footprints: ${JSON.stringify(rows)}`);
    assert.ok(
      sized.some((r) => parseBytes(r.footprint) >= 1024 ** 2),
      `no process of 1 MiB or more: ${JSON.stringify(rows)}`,
    );
    assert.ok(rows.every((r) => r.pid > 0 && r.name), JSON.stringify(rows));
    // The header figures are filled in.
    const free = await page.textContent('#free');
    assert.match(free ?? '', /\d/, `free memory shows ${free}`);

    if (falseFitPid) {
      // The filler's row shows the flag, in the page, within 20 s.
      const flagged = `#processes tr[data-pid="${falseFitPid}"][data-state="false-fit"]`;
      await page.waitForSelector(flagged, { timeout: 20_000 });
      const badge = await page.textContent(`${flagged} .badge`);
      assert.match(badge ?? '', /false fit/i, `badge says ${badge}`);
      const evidence = await page.getAttribute(`${flagged} .badge`, 'title');
      assert.ok(evidence && evidence.length > 10, `no evidence in the tooltip: ${evidence}`);
      await page.waitForSelector('#state[data-state="false-fit"]', { timeout: 5_000 });
      // Named the way its user knows it, with the command line on hover.
      const name = (await page.textContent(`${flagged} td.col-name`)) ?? '';
      if (falseFitName) assert.ok(name.startsWith(falseFitName), `the row is named ${name}`);
      const hover = (await page.getAttribute(`${flagged} td.col-name`, 'title')) ?? '';
      if (falseFitCmdline) assert.ok(hover.includes(falseFitCmdline), `the name's hover says ${hover}`);
    }

    // At the app's default popover size every header card reads whole:
    // the figures as they are now (a false fit under way, when there is
    // one), and each at its longest.
    await page.setViewportSize(popoverSize());
    await page.waitForTimeout(1200);
    assert.deepEqual(await headerOverflows(page), [], `header cut at ${JSON.stringify(popoverSize())}`);
    assert.deepEqual(await headerOverflows(page, LONGEST_HEADER), [], 'the longest header cut');
    await page.setViewportSize({ width: 1100, height: 900 });

    // Record a few seconds, stop, export the recording as CSV: the menu
    // offers the formats the Rust side names, and the file is saved under
    // the name the server gives it.
    // The button is on from the start's answer, not from the next update:
    // on a machine busy swapping, an update can be seconds away.
    await page.click('#record');
    await page
      .waitForFunction(
        () => {
          const status = document.querySelector('#status');
          return status?.dataset.kind === 'error' || /^Recording to/.test(status?.textContent ?? '');
        },
        null,
        { timeout: 15_000 },
      )
      .catch((e) => {
        throw new Error(`no answer to the start in 15 s; requests out: ${outstanding()}; ${e.message}`);
      });
    const answer = (await page.textContent('#status')) ?? '';
    assert.match(answer, /^Recording to \S+\.jsonl…$/, `the start was answered with: ${answer}`);
    assert.ok(await page.$eval('#record', (b) => b.classList.contains('on')), 'the button is off once the start is answered');
    await page.waitForTimeout(1500);
    await page.click('#record');
    // Wait for the stop's answer, not for the export button alone: with a
    // recording left from an earlier run the button is already enabled
    // while the status line still says "Recording to …".
    await page.waitForFunction(
      () =>
        !document.querySelector('#export').disabled &&
        /to \S+\.jsonl\.$/.test(document.querySelector('#status')?.textContent ?? ''),
      null,
      { timeout: 10_000 },
    );
    const saved = (await page.textContent('#status')) ?? '';
    const recording = /to (\S+\.jsonl)\.$/.exec(saved)?.[1];
    assert.ok(recording, `the status line says ${saved}`);
    await page.click('#export');
    const offered = await page.$$eval('#export-menu [data-format]', (bs) => bs.map((b) => b.dataset.format));
    assert.deepEqual(offered, ['jsonl', 'csv', 'perfetto', 'png']);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-menu [data-format="csv"]')]);
    assert.equal(download.suggestedFilename(), recording.replace(/\.jsonl$/, '.csv'));
    const csv = readFileSync(await download.path(), 'utf8');
    assert.match(csv.split('\n')[0], /^time_s,unix_time_ms,/, `the CSV starts ${csv.slice(0, 80)}`);

    // Let the chart draw a few more points, then take the picture.
    await page.waitForTimeout(1500);
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
    assert.deepEqual(problems, [], 'the page had errors');
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
