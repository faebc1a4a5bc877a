// A browser app bundled by Vite or webpack: the decisions of the equivalence fixture's
// limiters on a replayed trace (the test hands both in), one "allowed,remaining,resetAt,
// retryAfter" line per hit.
import { RateLimiter } from "tollgate";

globalThis.replay = (options, csv) => {
  const limiters = options.map((o) => new RateLimiter(o));
  const out = [];
  for (const line of csv.split("\n")) {
    if (!line) continue;
    const [l, key, now, cost] = line.split(",");
    const d = limiters[+l].limit(key.includes("+") ? key.split("+") : key, { now: +now, cost: +cost });
    out.push(`${+d.allowed},${d.remaining},${d.resetAt},${d.retryAfter}`);
  }
  return out.join("\n");
};
globalThis.ready = true;
