// Traffic generators: deterministic traces (a seed, a pattern, a size) of hit times and keys.
// They only make traffic; every decision about it is the core's. Rates are scaled to the
// limit and window so each pattern shows the same story at any setting.

/** mulberry32: a small, fast, seeded PRNG, so a URL reproduces the same trace. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const exp = (rand, mean) => -Math.log(1 - rand()) * mean;

/** Hits at a Poisson rate (hits per ms) from `from` on, until `n` are made. */
function poisson(rand, ratePerMs, n, from = 0) {
  const out = [];
  let t = from;
  for (let i = 0; i < n; i++) {
    t += exp(rand, 1 / ratePerMs);
    out.push(t);
  }
  return out;
}

/** One lane of `n` evenly spaced hits in [from, to). */
function even(from, to, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(from + ((to - from) * (i + 0.5)) / n);
  return out;
}

/**
 * A trace: `times` (ms after the start, ascending), `keyIdx` (index into `keys` per hit),
 * `keys`, and `focus` (the key whose level and headers the page shows first).
 *
 * @param pattern "steady" | "bursty" | "boundary" | "chat"
 * @param n number of hits
 * @param limit, windowMs the limit the traffic is scaled to
 * @param phase ms from the start to the first clock-aligned window boundary (boundary attack)
 */
export function makeTrace({ pattern, n, seed, limit, windowMs, phase = 0 }) {
  const rand = rng(seed);
  const rate = limit / windowMs; // the limit's own rate, hits per ms
  let lanes; // [key, times[]]
  switch (pattern) {
    case "steady": {
      const step = 1 / (1.5 * rate);
      const t = [];
      for (let i = 0; i < n; i++) t.push(step * (i + 0.5) + (rand() - 0.5) * 0.4 * step);
      lanes = [["client", t]];
      break;
    }
    case "bursty": {
      // Bursts of 1 to 2.5 x the limit packed into 5% of a window, about 1.5 windows apart,
      // over a thin background of single hits.
      const t = [];
      let at = windowMs * 0.2;
      while (t.length < n) {
        const size = Math.max(1, Math.round(limit * (1 + 1.5 * rand())));
        for (const x of even(at, at + windowMs * 0.05, size)) t.push(x);
        const gap = windowMs * 0.5 + exp(rand, windowMs);
        for (const x of poisson(rand, rate * 0.2, Math.round(gap * rate * 0.2), at)) if (x < at + gap) t.push(x);
        at += gap;
      }
      lanes = [["client", t]];
      break;
    }
    case "boundary": {
      // The attack on clock-aligned windows: the whole limit in the last 10% of a window and
      // again in the first 10% of the next, every other boundary; light background otherwise.
      const t = [];
      for (let k = 1; t.length < n; k += 2) {
        const b = phase + k * windowMs;
        for (const x of even(b - windowMs * 0.1, b, limit)) t.push(x);
        for (const x of even(b, b + windowMs * 0.1, limit)) t.push(x);
        const bg = poisson(rand, rate * 0.3, Math.max(1, Math.round(1.2 * limit * 0.3)), b + windowMs * 0.1);
        for (const x of bg) if (x < b + windowMs * 1.9) t.push(x);
      }
      lanes = [["client", t]];
      break;
    }
    case "chat": {
      // Four people chatting well under the limit and one spammer posting in floods of three
      // times the limit over half a window, then pausing for a window and a half.
      const users = ["ana", "ben", "chi", "dev"].map((k) => [k, poisson(rand, rate * 0.25, n)]);
      const spam = [];
      for (let at = windowMs * 0.3; spam.length < n; at += 2 * windowMs) {
        for (const x of poisson(rand, (3 * rate) / 0.5, Math.round(3 * limit), at)) if (x < at + windowMs * 0.5) spam.push(x);
      }
      lanes = [["spammer", spam], ...users];
      break;
    }
    default:
      throw new RangeError(`traffic must be one of steady, bursty, boundary, chat; got ${pattern}`);
  }
  const keys = lanes.map(([k]) => k);
  const all = [];
  lanes.forEach(([, ts], i) => {
    for (const x of ts) if (x >= 0) all.push([x, i]);
  });
  all.sort((a, b) => a[0] - b[0]);
  all.length = Math.min(all.length, n);
  const times = new Float64Array(all.length);
  const keyIdx = new Uint8Array(all.length);
  all.forEach(([x, i], j) => {
    // Whole microseconds: stable in the URL and exact through the core's ms -> ns conversion.
    times[j] = Math.round(x * 1000) / 1000;
    keyIdx[j] = i;
  });
  return { times, keyIdx, keys, focus: 0 };
}
