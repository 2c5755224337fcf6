// @ts-check
// From a command of the live session to an HTTP request of `swapsight
// serve`, by the route table the Rust side writes (contract.js). Pure: no
// window, no fetch, so `node --test` covers it.

import { API, EXPORT_FORMATS, ROUTES } from './contract.js';

const enc = encodeURIComponent;

/**
 * Command name + args → [method, path, JSON body or undefined].
 * @param {string} cmd
 * @param {Record<string, any>} [args]
 * @returns {[string, string, Record<string, any> | undefined]}
 */
export function route(cmd, args = {}) {
  const r = Object.prototype.hasOwnProperty.call(ROUTES, cmd) ? ROUTES[/** @type {keyof typeof ROUTES} */ (cmd)] : null;
  if (!r || cmd === 'events' || cmd === 'export') throw new Error(`${cmd} is not available in a browser`);
  const path = r.path.replace(/\{(\w+)\}/g, (_, key) => {
    if (args[key] == null) throw new Error(`${cmd} needs ${key}`);
    return enc(String(args[key]));
  });
  const query = r.query
    .filter((key) => args[key] != null)
    .map((key) => `${enc(key)}=${enc(String(args[key]))}`)
    .join('&');
  /** @type {Record<string, any> | undefined} */
  let body;
  if (r.body.length) {
    body = {};
    for (const key of r.body) body[key] = args[key] ?? null;
  }
  return [r.method, `${API}${path}${query ? `?${query}` : ''}`, body];
}

/**
 * URL-safe path of a recording's export.
 * @param {string} name
 * @param {string} format
 */
export function exportPath(name, format) {
  return `${API}${ROUTES.export.path.replace('{name}', enc(name))}?format=${enc(format)}`;
}

/**
 * The file name a download is saved as: the server's (`Content-Disposition:
 * attachment; filename="run.csv"`, RFC 6266, `filename*=UTF-8''…` first),
 * else the recording's stem with the format's extension. Never a path: a
 * name with a slash keeps only its last part.
 * @param {string | null} disposition
 * @param {string} name the recording
 * @param {string} format
 */
export function downloadName(disposition, name, format) {
  let file = '';
  if (disposition) {
    const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/.exec(disposition);
    if (star) {
      try {
        file = decodeURIComponent(star[1].trim());
      } catch (_) {
        file = '';
      }
    }
    if (!file && plain) file = (plain[1] ?? plain[2] ?? '').replace(/\\(.)/g, '$1');
  }
  file = file.split(/[\\/]/).pop() || '';
  if (file && file !== '.' && file !== '..') return file;
  const f = EXPORT_FORMATS.find((x) => x.name === format);
  return `${name.replace(/\.jsonl$/, '')}.${f ? f.extension : format}`;
}
