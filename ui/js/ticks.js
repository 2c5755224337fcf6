// @ts-check
// Axis ticks for the chart: pure arithmetic, covered by `node --test`.

/**
 * "Nice" tick step for a range: 1, 2, 2.5 or 5 × a power of ten.
 * @param {number} range
 * @param {number} count ticks wanted, about
 */
export function niceStep(range, count) {
  const raw = range / Math.max(1, count);
  const pow = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * pow) return m * pow;
  return 10 * pow;
}

/**
 * Byte ticks on binary-friendly steps (…, 256M, 512M, 1G, 2G, 4G, …).
 * @param {number} lo
 * @param {number} hi
 * @param {number} count ticks wanted, at most
 */
export function byteTicks(lo, hi, count) {
  const MIB = 1024 * 1024;
  let step = MIB;
  while ((hi - lo) / step > count) step *= 2;
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1; v += step) ticks.push(v);
  return ticks;
}
