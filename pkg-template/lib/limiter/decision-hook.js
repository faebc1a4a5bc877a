// `onDecision`: a function every limiter (in memory, over a store, in the middleware) calls
// once per decided hit with what a metrics exporter counts (Envoy's rate limit service counts
// total_hits, over_limit, near_limit and shadow_mode per rule). Read once here; controls.js
// calls it where every limiter's `limit` passes.
import { fail } from "../contract/options.js";

/** A hit allowed with at least this share of its limit used is `near-limit` (Envoy's default ratio). */
export const NEAR_LIMIT_RATIO = 0.8;

/** The `onDecision` option, checked: a function or absent. */
export function decisionHookOf(options) {
  const f = options.onDecision;
  if (f === undefined || typeof f === "function") return f;
  throw fail("onDecision", f, "a function of each decision's report ({ policy, limit, outcome, cost, decision })");
}

/**
 * What a decision was, one of `allowed`, `denied`, `near-limit` (allowed, with
 * NEAR_LIMIT_RATIO of the limit used), `shadow-denied` (shadow mode admitted a hit enforcement
 * would have denied), `failed-open` (the store failed and the hit was admitted without it:
 * `failure` "open", or "insurance" admitting it).
 */
export function outcomeOf(d) {
  if (d.degraded === "unavailable" && d.allowed) return "failed-open";
  if (d.shadow === true && d.wouldAllow === false) return "shadow-denied";
  if (!d.allowed) return "denied";
  return d.limit > 0 && d.limit - d.remaining >= NEAR_LIMIT_RATIO * d.limit ? "near-limit" : "allowed";
}

/**
 * Calls `hook` with the report of decision `d` of a hit of `cost`: `policy` (the Worker policy
 * of a `WorkerStore`'s limiter, else null), `limit` (the name of the limit that denied it, or
 * the one with the least left; null for a hit a list answered), `outcome`, `cost` and the
 * decision. A hook that throws changes nothing: the decision stands.
 */
export function report(hook, policy, d, cost) {
  const limit = d.blockedBy ?? leastLeft(d.limits);
  try {
    hook({ policy, limit, outcome: outcomeOf(d), cost, decision: d });
  } catch {}
}

function leastLeft(limits) {
  if (!Array.isArray(limits) || limits.length === 0) return null;
  return limits.reduce((a, b) => (b.remaining < a.remaining ? b : a)).name;
}

/**
 * Reports to `hook` (if it is one) a hit a middleware let through because its store failed
 * (`passOnStoreError`): no decision was made, so no limit is named.
 */
export function reportFailedOpen(hook, cost) {
  if (typeof hook !== "function") return;
  try {
    hook({ policy: null, limit: null, outcome: "failed-open", cost, decision: null });
  } catch {}
}
