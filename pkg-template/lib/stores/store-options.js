// The options a shared store's limiters read the same way at every npm store (`RedisStore`,
// `WorkerStore`), with the names and meanings of the Worker's wrangler.toml where it has them
// (docs/vocabulary.md): what to do when the store fails, how long to wait for it, the blocked-key
// cache. Each mistake is refused with the core's code and the option's name, as
// tests/same-error/mistakes.json (section `store`) holds at every edge.
import { MAX, durationMs, fail, fnOf, oneOf, optionError, show, wholeIn } from "../contract/options.js";
import { insuranceShare } from "./insurance.js";
import { durationMs as durationOfText } from "../wasm.js";
import { BLOCKED_CACHE_MS, SERVING_DOMAINS, STORE_FIELDS } from "../contract/contract.generated.js";

/** The options `applyStoreOptions` reads, beside each store's own: the core's, and this layer's functions. */
export const STORE_OPTIONS = [...STORE_FIELDS, "now", "onError"];
/**
 * An npm store's `failure` names and longest `timeoutMs` (a Node timer's): the core's domains
 * (`tollgate::spec::Edge::Store`; wrangler.toml's Durable Object has no outage to throw or insure).
 */
const { failures: FAILURES, maxTimeoutMs: MAX_TIMER_MS } = SERVING_DOMAINS.store;
/**
 * The options the Redis and Worker stores share, read the same way (docs/vocabulary.md):
 * `failure` and `insurance`, `timeoutMs`, `blockedCache`, `maxCachedKeys`, `closedRetryMs`,
 * `now`, `onError`. Each mistake is refused with the core's code and the option's name. Sets
 * them on `store` under the names both stores' limiters read (`_failure`, `_timeoutMs`, ...)
 * and returns `now`, the local clock, which each store keeps its own way.
 */
export function applyStoreOptions(store, options, defaultTimeoutMs) {
  const {
    failure = "open",
    insurance,
    timeoutMs = defaultTimeoutMs,
    blockedCache = true,
    maxCachedKeys = 10_000,
    closedRetryMs = 1000,
    now = Date.now,
    onError,
  } = options;
  oneOf("failure", failure, FAILURES);
  if (failure === "insurance" && insurance === undefined) {
    throw optionError("missing_field", "insurance", 'insurance is required with failure "insurance": the share of each limit one process admits during an outage (e.g. 1 / processes)');
  }
  if (failure !== "insurance" && insurance !== undefined) {
    throw optionError("conflicting_fields", "insurance", `insurance applies with failure "insurance" only, not ${show(failure)}`);
  }
  /** The share of each limit a process admits in memory while the store is unavailable. */
  store._insuranceShare = insurance === undefined ? 0 : insuranceShare(insurance);
  store._failure = failure;
  store._timeoutMs = wholeIn("timeoutMs", timeoutMs, 1, MAX_TIMER_MS, " of milliseconds");
  // How long a denial over cached bytes stands without asking the store (ms since it last
  // confirmed them): true is the default bound, false confirms every such denial.
  store._blockedCacheMs = blockedCache === true ? BLOCKED_CACHE_MS : blockedCache === false ? 0 : blockedCacheOf(blockedCache);
  store._maxCachedKeys = wholeIn("maxCachedKeys", maxCachedKeys, 0, MAX);
  store._closedRetryMs = wholeIn("closedRetryMs", closedRetryMs, 1, MAX, " of milliseconds");
  store._onError = fnOf("onError", onError, "a function", true);
  return fnOf("now", now, "a function returning epoch ms");
}

function blockedCacheOf(v) {
  if (typeof v !== "number" && typeof v !== "string") {
    throw fail("blockedCache", v, 'true, false, a number of milliseconds or a duration such as "1s"');
  }
  return durationMs("blockedCache", v, 0, MAX, durationOfText);
}

