// The expected answers: the same hits the page played, decided again by the Node build of
// the package (pkg/dist/lib), so the test compares the page with the core, not with itself.
import path from "node:path";
import { ROOT } from "./browser.mjs";

const { RateLimiter } = await import(path.join(ROOT, "pkg/dist/lib/index.js"));

/** The tape the page played (times ms after `start`, key per hit); returns counts and decisions. */
export function replay(options, tape, start) {
  const rl = new RateLimiter(options);
  const decisions = tape.times.map((t, i) => rl.limit(tape.keys[tape.keyIdx[i]], { now: start + t }));
  const allowed = decisions.filter((d) => d.allowed).length;
  return { rl, decisions, allowed, blocked: decisions.length - allowed };
}

/** What the page calls "most admitted in any window": per key, then the largest. */
export function maxAdmitted(tape, decisions, windowMs) {
  let best = 0;
  tape.keys.forEach((_, k) => {
    const ts = tape.times.filter((_, i) => tape.keyIdx[i] === k && decisions[i].allowed);
    for (let hi = 0, lo = 0; hi < ts.length; hi++) {
      while (ts[hi] - ts[lo] >= windowMs) lo++;
      best = Math.max(best, hi - lo + 1);
    }
  });
  return best;
}
