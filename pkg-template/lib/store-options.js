// The options a shared store's limiters read the same way at every npm store (`RedisStore`,
// `WorkerStore`), with the names and meanings of the Worker's wrangler.toml where it has them
// (docs/vocabulary.md): what to do when the store fails, how long to wait for it, the blocked-key
// cache. The core parses them (`tollgate::spec::parse_around`, the Worker's parser, with an npm
// store's domains), so each mistake gets the core's code, field and message, as
// tests/same-error/mistakes.json (section `store`) holds at every edge.
import { fnOf } from "./options.js";
import { servingOptions } from "./wasm.js";
import { STORE_FIELDS } from "./contract.generated.js";

/** The options `applyStoreOptions` reads, beside each store's own: the core's, and this layer's functions. */
export const STORE_OPTIONS = [...STORE_FIELDS, "now", "onError"];

/**
 * Reads the options the Redis and Worker stores share and sets them on `store` under the names
 * both stores' limiters read (`_failure`, `_timeoutMs`, ...); returns `now`, the local clock,
 * which each store keeps its own way.
 */
export function applyStoreOptions(store, options, defaultTimeoutMs) {
  const o = servingOptions(Object.fromEntries(STORE_FIELDS.map((f) => [f, options[f]])), "store");
  /** The share of each limit a process admits in memory while the store is unavailable. */
  store._insuranceShare = o.insurance ?? 0;
  store._failure = o.failure;
  store._timeoutMs = o.timeoutMs ?? defaultTimeoutMs;
  // How long a denial over cached bytes stands without asking the store (ms since it last
  // confirmed them): 0 confirms every such denial.
  store._blockedCacheMs = o.blockedCacheMs;
  store._maxCachedKeys = o.maxCachedKeys;
  store._closedRetryMs = o.closedRetryMs;
  store._onError = fnOf("onError", options.onError, "a function", true);
  return fnOf("now", options.now ?? Date.now, "a function returning epoch ms");
}
