// Types of `WorkerStore` (see pkg-template/lib/stores/worker/worker-store.js and docs/worker-store.md).
import type { AsyncRateLimiter, Keys, LimiterOptions, Policy, StoreOptions } from "./index.js";
import type { ConcurrencyCalls } from "./concurrency.js";

/**
 * What to answer when the Worker is unavailable (refused the connection, did not answer within
 * `timeoutMs`, answered 5xx). A Worker that refused the request (4xx) is never an outage: its
 * error is thrown.
 */
export type WorkerFailureMode = NonNullable<StoreOptions["failure"]>;

/** A service binding to the tollgate Worker (`env.TOLLGATE`): anything with `fetch`. */
export interface WorkerBinding {
  fetch(input: string | Request, init?: RequestInit): Promise<Response>;
}

interface WorkerStoreCommon extends StoreOptions {
  /** The Worker's policy (a name in its `POLICIES`) every decision of this store is made by. */
  policy: string;
  /** The Worker's `API_TOKEN`, sent as a bearer token (none for a Worker with `PUBLIC` on). */
  token?: string;
}

export interface WorkerStoreUrlOptions extends WorkerStoreCommon {
  /** The Worker's origin, e.g. `"https://tollgate.example.workers.dev"`. */
  url: string;
  /** The fetch to use (default the global `fetch`). */
  fetch?: typeof fetch;
  binding?: undefined;
}

export interface WorkerStoreBindingOptions extends WorkerStoreCommon {
  /** A service binding to the Worker (no public hop). */
  binding: WorkerBinding;
  url?: undefined;
  fetch?: undefined;
}

export type WorkerStoreOptions = WorkerStoreUrlOptions | WorkerStoreBindingOptions;

/** A limiter whose decisions the Worker makes: the in-memory limiter's methods, asynchronous (leases over `POST /v1/acquire`, `/v1/release`, `/v1/renew`). */
export interface WorkerRateLimiter extends AsyncRateLimiter, ConcurrencyCalls<Keys, true> {
  /** The limits decided by, once the Worker's policy is known (after the first call), else `null`. */
  readonly policy: Policy | null;
  /** The key's state as the core's bytes (`null`: fresh), as `RateLimiter.export` gives them. */
  export(key: string): Promise<Uint8Array | null>;
  /** Replaces the key's state (bytes from any store's `export`; `null`: fresh); other bytes: `invalid_state`. */
  import(key: string, state: Uint8Array | null): Promise<void>;
  /** Waits for the blocked-key cache's reads in flight. */
  close(): Promise<void>;
}

/** The tollgate Worker as the store: one limit for every runtime that asks it. */
export class WorkerStore {
  constructor(options: WorkerStoreOptions);
  /** The Worker policy decisions are made by. */
  readonly policy: string;
  /**
   * A limiter over the Worker's policy. No limits: the Worker's. Limits given must be that
   * policy (else the first call rejects with `code: "policy_mismatch"`).
   */
  limiter(options?: LimiterOptions | Record<string, never>): WorkerRateLimiter;
}

/** The Worker was unavailable and `failure` is `"throw"` (`code: "worker_unavailable"`). */
export class WorkerUnavailableError extends Error {
  readonly code: "worker_unavailable";
}

/**
 * The Worker refused the request and the in-memory limiter has no error for it (`unknown_policy`,
 * `unauthorized`, `policy_mismatch`, ...): `code`, HTTP `status`, and `field` when known.
 */
export class WorkerRequestError extends Error {
  readonly code: string;
  readonly status: number;
  readonly field?: string;
}

