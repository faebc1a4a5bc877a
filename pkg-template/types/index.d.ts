// Types of the npm package `tollgate` (hand-written; see docs/js-layer.md).
import type { WorkerStore, WorkerRateLimiter } from "./worker-store.js";
import type { Reserved, Settled, SettleOptions } from "./reserve.js";
export type { Reserved, Settled, SettleOptions, SettleErrorCode } from "./reserve.js";
import type { Acquired, ConcurrencyCalls, ConcurrencyLimitOptions, LeaseOptions, Released } from "./concurrency.js";
export type { Acquired, ConcurrencyCalls, ConcurrencyLimitOptions, LeaseErrorCode, LeaseOptions, Released, Renewed } from "./concurrency.js";
/** The algorithms, by name; the codes of configuration mistakes: generated from the core. */
export type { Algorithm, ConfigErrorCode, HeaderDraft } from "./contract.generated.js";

import type { ControlFields, Duration, HeaderFields, LimitOptions, PenaltyOptions, StoreFields } from "./options.generated.js";
/** The options' types, generated from the core's spec (`tollgate::spec::typed`). */
export type { ControlFields, Duration, HeaderFields, LimitOptions, PenaltyOptions, QueueFields, StoreFailure, StoreFields } from "./options.generated.js";
import type { Decision } from "./decision.generated.js";
/** A decision's fields, generated from the core's (`tollgate::spec::typed::DECISION`). */
export type { Decision, LimitResult } from "./decision.generated.js";

/** Operator controls of a limiter (docs/vocabulary.md); none is on by default. */
export interface ControlOptions extends PenaltyOptions, ControlFields {
  /** The decision hook: called once per decided hit, each entry of a `limitBatch` too (not for `peek`); its errors are ignored. */
  onDecision?: OnDecision;
}

/** What `onDecision` receives for each decided hit. */
export interface DecisionReport {
  /** The Worker policy of a `WorkerStore`'s limiter; null otherwise. */
  policy: string | null;
  /** The limit that denied the hit, or the one with the least left; null when a list answered (or a store error let it through). */
  limit: string | null;
  /** `near-limit`: allowed with 80% of the limit used; `failed-open`: the store failed and the hit was admitted. */
  outcome: "allowed" | "near-limit" | "denied" | "shadow-denied" | "failed-open";
  cost: number;
  /** The decision; null when no decision was made (the middleware's `passOnStoreError`). */
  decision: Decision | null;
}

/** The `onDecision` option: Envoy-style metrics, logs, ... (see the npm README, "Decision metrics"). */
export type OnDecision = (report: DecisionReport) => void;

/** One limit inline: `algorithm` is required (a limiter has no default algorithm; `rateLimit`'s is express-rate-limit's). */
export interface SingleLimitOptions extends LimitOptions, ControlOptions {
  limits?: undefined;
  /** Most keys held in memory; beyond it, idle keys then the oldest are evicted. */
  maxKeys?: number;
}

/** Several limits, all of which must admit a hit; each has its own `algorithm`. */
export interface MultiLimitOptions
  extends ControlOptions, Pick<SingleLimitOptions, "maxKeys">, Partial<Record<"algorithm" | "limit" | "window" | "quota", undefined>> {
  limits: (LimitOptions | ConcurrencyLimitOptions)[];
}

/** One concurrency limit inline (docs/concurrency.md): `limit` acquires, and its decision's `lease` is for `release`. */
export interface SingleConcurrencyOptions extends ConcurrencyLimitOptions, ControlOptions, Pick<SingleLimitOptions, "maxKeys"> {
  limits?: undefined;
}

/** Options of a limiter: one limit inline, or several in `limits` (all must admit a hit). */
export type LimiterOptions = SingleLimitOptions | MultiLimitOptions | SingleConcurrencyOptions;

/** Options of `waitFor`: `cost` as `limit`'s. */
export interface WaitOptions extends Pick<CallOptions, "cost"> {
  /** The longest to wait, in ms or as a duration such as `"5s"`, before rejecting with `WaitTimeoutError` (required). */
  maxWait: Duration;
  /** Stops the wait: rejects with the signal's reason, nothing counted. */
  signal?: AbortSignal;
}

/** `waitFor` ran out of `maxWait` before the hit was admitted (code `wait_timeout`). */
export class WaitTimeoutError extends Error {
  readonly code: "wait_timeout";
  /** The last denial. */
  readonly decision: Decision;
}

export interface CallOptions {
  /** Units this hit weighs (whole number, default 1). */
  cost?: number;
  /** Epoch ms (fractions allowed); default `Date.now()`. */
  now?: number;
}

/** One key or several (all or nothing, at most 16). */
export type Keys = string | readonly string[];

/**
 * A decision's response headers by name, as `headers()` writes them: which names depends on the
 * header options (`RateLimit` and `RateLimit-Policy`, or draft 6's `RateLimit-Limit`,
 * `-Remaining` and `-Reset`; `X-RateLimit-*` when legacy; `Retry-After` on a denial). A record of
 * strings, so it is a `HeadersInit`: `new Response(body, { headers: limiter.headers(d) })`.
 */
export type RateLimitHeaders = Record<string, string>;

/** `T`, or a promise of it for a limiter over a store. */
type Answer<T, Async extends boolean> = Async extends true ? Promise<T> : T;

/** The methods every limiter has: in memory (`Async` false), or over a store (their promises). */
interface LimiterCalls<K, Async extends boolean> {
  limit(key: K, options?: CallOptions): Answer<Decision, Async>;
  peek(key: K, options?: CallOptions): Answer<Decision, Async>;
  refund(key: K, options?: CallOptions): Answer<void, Async>;
  /** A hit of the estimate `cost`, decided as `limit`; when admitted, the decision's `reservation` settles it (docs/reserve.md). Not in `tollgate/lite`. */
  reserve(key: K, options?: CallOptions): Answer<Reserved, Async>;
  /** Settles a reservation with the actual cost; refuses `unknown_reservation` or `invalid_reservation` (throws, or rejects), changing nothing. */
  settle(reservation: string, actual: number, options?: SettleOptions): Answer<Settled, Async>;
  reset(key: K): Answer<void, Async>;
  headers(decision: Decision, options?: number | HeaderOptions): RateLimitHeaders;
  /** Resolves with the decision that admitted the hit, sleeping each denial's `retryAfter`; rejects with `WaitTimeoutError` past `maxWait`. */
  waitFor(key: K, options: WaitOptions): Promise<Decision>;
  /** upstash/ratelimit's name: `waitFor` resolving with the last denial when `timeoutMs` runs out. */
  blockUntilReady(key: K, timeoutMs: number): Promise<Decision>;
}

/**
 * A limiter over a store (`new AsyncRateLimiter({ ..., store })`, or `store.limiter(options)`):
 * the in-memory limiter's methods, asynchronous.
 */
export interface AsyncRateLimiter extends LimiterCalls<Keys, true> {}

/** The options `RedisStore` and `WorkerStore` share, read the same way (docs/vocabulary.md). */
export interface StoreOptions extends StoreFields {
  /** This process's clock, epoch ms (default `Date.now`). */
  now?: () => number;
  /** Told about errors the failure mode absorbed (degraded decisions, failed syncs). */
  onError?: (error: unknown) => void;
}

/** A backend holding state elsewhere (e.g. `RedisStore`). */
export interface Store {
  limiter(options: LimiterOptions): AsyncRateLimiter;
}

/**
 * A key interned by one limiter (`limiter.key("user:42")`): calls with it pass a number into
 * wasm instead of the string. Valid only on the limiter that made it, until `release`.
 */
export class KeyHandle {
  private constructor();
  /** The key string. */
  readonly key: string;
}

/** Inputs of `limitBatch`: one value for every entry, or one per entry. */
export interface BatchOptions {
  /** Epoch ms for all entries, or one per entry (a `Float64Array` is used without a copy); default `Date.now()`. */
  now?: number | Float64Array | readonly number[];
  /** Units every entry weighs (default 1). Give `cost` or `costs`, not both. */
  cost?: number;
  /** Units per entry. */
  costs?: Float64Array | readonly number[];
}

/**
 * The keys of a batch: one per entry (all key handles or all strings), or one key for every
 * entry (then `now` or `costs` gives the number of entries, else there is one).
 */
export type BatchKeys = readonly KeyHandle[] | readonly string[] | KeyHandle | string;

/**
 * Where `limitBatch` writes, reused between batches (each array at least as long as the
 * batch): `allowed` always; each number column only when present. Leaving all three out
 * skips computing them (the fastest batch: W1 in docs/benchmarks.md).
 */
export interface BatchOutput {
  /** How many entries were admitted. */
  admitted?: number;
  /** 1 admitted, 0 denied. */
  allowed: Uint8Array;
  remaining?: Float64Array;
  /** Epoch ms. */
  resetAt?: Float64Array;
  /** Ms; 0 when allowed. */
  retryAfter?: Float64Array;
}

/** Per entry of a batch, at the same index: the summary fields of its `Decision`. */
export interface BatchResult extends Required<BatchOutput> {}

/** `new AsyncRateLimiter({ ..., store })`: the store's limiter (`store.limiter(options)`), whose methods return promises. */
export interface AsyncRateLimiterConstructor {
  /** With a `WorkerStore` and no limits: the Worker policy's limits. */
  new (options: { store: WorkerStore }): WorkerRateLimiter;
  /** With a store: returns `store.limiter(options)` (e.g. a `RedisRateLimiter`). */
  new <L extends AsyncRateLimiter>(options: LimiterOptions & { store: { limiter(options: LimiterOptions): L } }): L;
}

export declare const AsyncRateLimiter: AsyncRateLimiterConstructor;

/**
 * `new RateLimiter(options)` decides in memory, synchronously. With a `store` it returns the
 * store's limiter, whose methods return promises; its type says so (`AsyncRateLimiterConstructor`'s
 * signatures, first), but `new AsyncRateLimiter({ ..., store })` says it where it is written.
 */
export interface RateLimiterConstructor extends AsyncRateLimiterConstructor {
  /** In memory: decisions are synchronous. */
  new (options: LimiterOptions & { store?: undefined }): RateLimiter;
  readonly prototype: RateLimiter;
}

export declare const RateLimiter: RateLimiterConstructor;

export interface RateLimiter extends LimiterCalls<Keys | KeyHandle, false>, Omit<ConcurrencyCalls<Keys | KeyHandle, false>, "release"> {
  /** The limits it decides by; for decisions over encoded states, `new Policy(options)`. */
  readonly policy: Limits;
  /** Interns `key` once; pass the handle wherever a key goes. */
  key(key: string): KeyHandle;
  /** Forgets a handle (the key's state stays); using it afterwards throws. */
  release(handle: KeyHandle): void;
  /** Frees a lease's slots on every key (docs/concurrency.md); a lease no longer live is a no-op (`released: false`). */
  release(lease: string, options?: LeaseOptions): Released;
  /**
   * `limit()` for each entry, in order, in one call into wasm (all handles or all strings,
   * or one key for all entries). Validates everything first: bad input throws and counts
   * nothing. Returns new arrays, or fills `out` (only the columns it holds) and returns it.
   */
  limitBatch(keys: BatchKeys, options?: BatchOptions): BatchResult;
  limitBatch<O extends BatchOutput>(keys: BatchKeys, options: BatchOptions | undefined, out: O): O & { admitted: number };
  export(key: string): Uint8Array | null;
  import(key: string, state: Uint8Array | null): void;
  keys(): string[];
  readonly size: number;
  readonly evictions: number;
  prune(now?: number): number;
  free(): void;
}

export interface PolicyResult extends Decision {
  /** New state per key; `null` = fresh (delete). */
  states: (Uint8Array | null)[];
  /** Epoch ms per key: when its state is fresh again. */
  expiresAt: number[];
}

/** The validated limits a limiter decides by. */
export interface Limits {
  readonly names: string[];
  /** Per limit name: the quota and window (ms) advertised in `RateLimit-Policy`. */
  advertised(): Map<string, [quota: number, windowMs: number]>;
  readonly longestWindowMs: number;
  readonly mergeable: boolean;
}

/** Limits plus the pure decisions over encoded states that stores keeping state elsewhere need. */
export interface Policy extends Limits {}
export declare class Policy {
  constructor(options: LimiterOptions);
  check(states: (Uint8Array | null)[], now: number, cost?: number): PolicyResult;
  peek(states: (Uint8Array | null)[], now: number, cost?: number): Decision;
  refund(states: (Uint8Array | null)[], now: number, cost?: number): (Uint8Array | null)[];
  validateState(state: Uint8Array): void;
}
export * from "./pacer.js";
export * from "./lease.js";
export * from "./redis.js";
export * from "./worker-store.js";
export * from "./middleware.js";
/** `import rateLimit from "tollgate"`, as from express-rate-limit. */
export { rateLimit as default } from "./middleware.js";

/** Which rate-limit headers `headers()` writes (docs/headers.md). */
export interface HeaderOptions extends Omit<HeaderFields, "partitionKey"> {
  /** Epoch ms the decision was made at (default: now). */
  now?: number;
  /** The limited key, sent hashed as `pk` (draft-8, draft-10). */
  partitionKey?: string;
}
