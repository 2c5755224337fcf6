// @ts-check
// The popover: wires the header, chart and table of the live view
// (live.js) and the replay view (replay.js) to the page's buttons, and
// exports a recording. Talks to the session only through transport.js, so
// the same page works inside the menu-bar app and served by `swapsight serve`.

import { call, onUpdate, inTauri, fetchOk, exportPath } from './transport.js';
import { EXPORT_FORMATS } from './contract.js';
import { downloadName } from './routes.js';
import { catchUp, loadLive, onLiveUpdate, toggleRecording } from './live.js';
import { backToLive, openReplay, routeFromHash } from './replay.js';
import { $, closeMenus, exportTarget, fail, say, setLastRecording, table, toggleMenu } from './page.js';

// Every module loaded and run: the app's benchmark splits an open's time by it.
performance.mark('scripts-run');

/**
 * `body[data-shown]`: when (epoch ms) a kept page was on screen again, its
 * figures current (updates reach a hidden page too, drawn when it shows:
 * live.js's `catchUp`). The app keeps a hidden
 * popover built for a while, so a second look shows this page again rather
 * than a new one (live.js's `markPainted` times a new one).
 */
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState !== 'visible') return;
  catchUp();
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      document.body.dataset.shown = String(Math.round(performance.timeOrigin + performance.now()));
    }),
  );
});

document.addEventListener('click', (e) => {
  if (!(e.target instanceof Element) || !e.target.closest('.menu-wrap')) closeMenus();
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') closeMenus();
});

// --------------------------------------------------------------- export
/** @param {string} format */
async function doExport(format) {
  closeMenus();
  const name = exportTarget();
  try {
    if (inTauri) {
      const path = await call('export_recording', { format, name });
      if (path) say(`Exported to ${path}.`);
      return;
    }
    if (!name) throw new Error('no recording yet: record one first');
    const res = await fetchOk(exportPath(name, format));
    const blob = await res.blob();
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = downloadName(res.headers.get('Content-Disposition'), name, format);
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    say(`Downloaded ${a.download}.`);
  } catch (e) {
    fail(e);
  }
}

/** The export menu: the formats the Rust side offers the UI, in its order. */
function buildExportMenu() {
  $('#export-menu').replaceChildren(
    ...EXPORT_FORMATS.map((f) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.setAttribute('role', 'menuitem');
      b.dataset.format = f.name;
      b.textContent = f.label;
      b.addEventListener('click', () => doExport(f.name));
      return b;
    }),
  );
}

// --------------------------------------------------------------- wiring
buildExportMenu();
$('#record').addEventListener('click', toggleRecording);
$('#export').addEventListener('click', () => toggleMenu($('#export-menu')));
$('#replay').addEventListener('click', openReplay);
$('#live').addEventListener('click', backToLive);
$('#reset').addEventListener('click', () =>
  call('reset_baseline')
    .then(() => say('Baseline reset: swap growth counts from now.'))
    .catch(fail),
);
$('#filter').addEventListener('input', (e) => table.setFilter(/** @type {HTMLInputElement} */ (e.target).value));

document.body.dataset.transport = inTauri ? 'tauri' : 'http';
window.addEventListener('hashchange', routeFromHash);
onUpdate(onLiveUpdate);
loadLive()
  .catch(fail)
  .then(routeFromHash);
call('recordings')
  .then((list) => setLastRecording(list && list.length ? list[0].name : null))
  .catch(() => setLastRecording(null));
