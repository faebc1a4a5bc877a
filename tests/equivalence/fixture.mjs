// The equivalence fixture as the HTTP tests replay it: its trace (tests/js/fixture.mjs, decided
// by the native crate), the npm package's decisions of the same hits, and the fixture's limiters
// as Worker policies.
import { RateLimiter } from "tollgate";
import { LIMITERS, nativeFixture } from "../js/fixture.mjs";

export { LIMITERS };

/** The fixture's hits: { i, l (limiter index), key, now, cost, native: "allowed,remaining,resetAt,retryAfter" }. */
export function trace() {
  const hits = [];
  for (const line of nativeFixture().split("\n")) {
    if (!line) continue;
    const [l, key, now, cost, ...native] = line.split(",");
    hits.push({ i: hits.length, l: +l, key, now: +now, cost: +cost, native: native.join(",") });
  }
  return hits;
}

/**
 * The Worker's policy for one of the fixture's limiter options: the same schema (the core's
 * spec parses both), so the limits go over as they are.
 */
export function policyOf(options, syncRate = 0) {
  const limits = options.limits ?? [{ ...options, name: "default" }];
  return { limits, syncRate };
}

/**
 * The largest cost no hit of a limiter can ever have: the npm package refuses it (and the Worker
 * must too). Found by asking the package, so that the table cannot drift from the core.
 */
export function neverFits(limiter) {
  for (let cost = 1; cost < 1_000_000; cost++) {
    try {
      limiter.peek("probe", { now: 0, cost });
    } catch {
      return cost;
    }
  }
  throw new Error("every cost fits");
}

/**
 * The npm package's decision of every hit (in trace order), with a hit that can never fit
 * before every `everyNth` hit of the trace (`refused[i]`: its error, thrown by the package).
 */
export function npmDecisions(hits, everyNth) {
  const limiters = LIMITERS.map((o) => new RateLimiter(o));
  const tooLarge = limiters.map(neverFits);
  const decisions = new Array(hits.length);
  const refused = new Map();
  for (const h of hits) {
    if (h.i % everyNth === 0) {
      let error = null;
      try {
        limiters[h.l].limit(h.key, { now: h.now, cost: tooLarge[h.l] });
      } catch (e) {
        error = e;
      }
      if (error === null) throw new Error(`the package decided cost ${tooLarge[h.l]} on limiter ${h.l}`);
      refused.set(h.i, error);
    }
    decisions[h.i] = limiters[h.l].limit(h.key, { now: h.now, cost: h.cost });
  }
  return { decisions, refused, tooLarge };
}
