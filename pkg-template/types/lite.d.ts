// `tollgate/lite`: the in-memory RateLimiter over the lite wasm module (sizes in the README):
// one limit per limiter, one key per decision. No `limits` list or penalty, no several keys at
// once for `limit`/`peek`, no key handles, `limitBatch` or `import` (they throw a TypeError at
// run time; these types leave them out). Decisions, headers and exported states are the full
// module's (`tollgate`'s `import` takes the lite module's exports).
import type { AsyncRateLimiter, CallOptions, Decision, Keys, LimitOptions, RateLimiter as FullRateLimiter, SingleLimitOptions } from "./index.js";

export type {
  Algorithm, AsyncRateLimiter, CallOptions, Decision, Duration, Keys, LimitOptions, LimitResult, Limits, RateLimitHeaders, Store,
} from "./index.js";

/** Options of a lite limiter: one limit inline. */
export interface LiteLimiterOptions extends LimitOptions, Pick<SingleLimitOptions, "maxKeys"> {}

export interface LiteRateLimiterConstructor {
  /** With a store: returns `store.limiter(options)`, as `tollgate`'s RateLimiter does. */
  new <L extends AsyncRateLimiter>(options: LiteLimiterOptions & { store: { limiter(options: LiteLimiterOptions): L } }): L;
  /** In memory: decisions are synchronous. */
  new (options: LiteLimiterOptions & { store?: undefined }): RateLimiter;
  readonly prototype: RateLimiter;
}

export declare const RateLimiter: LiteRateLimiterConstructor;

/**
 * `tollgate`'s RateLimiter less what the lite module lacks (key handles, batches) and with
 * one key per `limit`/`peek` (a string, or an array of exactly one).
 */
export interface RateLimiter extends Omit<FullRateLimiter, "limit" | "peek" | "refund" | "reset" | "key" | "release" | "limitBatch" | "import"> {
  limit(key: string | readonly [string], options?: CallOptions): Decision;
  peek(key: string | readonly [string], options?: CallOptions): Decision;
  /** Gives back `cost` units to each key, never beyond fresh. */
  refund(key: Keys, options?: CallOptions): void;
  reset(key: Keys): void;
}
