// @ts-check
// One way to talk to the live session, whoever serves the page.
//
// In the menu-bar app (Tauri) a call is an IPC command and updates are the
// `update` event. Served by `swapsight serve` over HTTP, a call maps to a
// REST route and updates come from Server-Sent Events. The JSON is the same
// either way (both shells wrap swapsight's `Live`), so nothing above this
// module knows which transport it runs on — except where a browser cannot do
// what the app does (native file dialogs): those branches test `inTauri`.

import { route } from './routes.js';

export { exportPath } from './routes.js';

/** The app's IPC (Tauri's `withGlobalTauri`); a browser has none. */
const tauri = /** @type {any} */ (window).__TAURI__;

export const inTauri = !!tauri;

// ------------------------------------------------------------------ token
// `swapsight serve` may require a bearer token: given in the page URL as
// `#token=...` (kept for the session, then removed from the address bar) or
// already in sessionStorage.
function readToken() {
  const m = /(?:^#|&)token=([^&]+)/.exec(window.location.hash || '');
  if (m) {
    const t = decodeURIComponent(m[1]);
    try {
      sessionStorage.setItem('swapsight_token', t);
      history.replaceState(null, '', window.location.pathname + window.location.search);
    } catch (_) {
      // storage or history unavailable: keep the token in memory only
    }
    return t;
  }
  try {
    return sessionStorage.getItem('swapsight_token') || '';
  } catch (_) {
    return '';
  }
}

const token = inTauri ? '' : readToken();

/** Headers for an HTTP request (the bearer token when there is one). */
export function authHeaders(extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : { ...extra };
}

// ------------------------------------------------------------------- HTTP
const enc = encodeURIComponent;

async function httpError(res) {
  let msg = `${res.status} ${res.statusText}`.trim();
  try {
    const body = await res.json();
    if (body && body.error) msg = body.error;
  } catch (_) {
    // not JSON: keep the status line
  }
  return new Error(msg);
}

/** Fetches `path` (with the token) and throws the server's error on non-2xx. */
export async function fetchOk(path, init = {}) {
  const res = await fetch(path, { ...init, headers: authHeaders(init.headers || {}) });
  if (!res.ok) throw await httpError(res);
  return res;
}

// ------------------------------------------------------------------- API
/**
 * Calls a command of the live session: `snapshot`, `history {seconds}`,
 * `process {pid}`, `pin {pid}`, `reset_baseline`, `start_recording {pid}`,
 * `stop_recording`, `recordings`, `replay {name}`, `report {name}`; in the
 * app also `open_trace` and `export_recording {format, name}`.
 * Rejects with an Error whose message is the session's own words.
 */
export async function call(cmd, args = {}) {
  if (inTauri) {
    try {
      return await tauri.core.invoke(cmd, args);
    } catch (e) {
      throw e instanceof Error ? e : new Error(typeof e === 'string' ? e : JSON.stringify(e));
    }
  }
  const [method, path, body] = route(cmd, args);
  const init = { method };
  if (body !== undefined) {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const res = await fetchOk(path, init);
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/**
 * Calls `handler(update)` for every update ({snapshot, point, notices});
 * returns a function that stops listening.
 */
export function onUpdate(handler) {
  if (inTauri) {
    let stop = null;
    let stopped = false;
    tauri.event.listen('update', (e) => handler(e.payload)).then((unlisten) => {
      if (stopped) unlisten();
      else stop = unlisten;
    });
    return () => {
      stopped = true;
      if (stop) stop();
    };
  }
  const url = token ? `/api/events?token=${enc(token)}` : '/api/events';
  const source = new EventSource(url);
  source.addEventListener('update', (e) => {
    try {
      handler(JSON.parse(e.data));
    } catch (err) {
      console.error('swapsight: bad update', err);
    }
  });
  return () => source.close();
}
