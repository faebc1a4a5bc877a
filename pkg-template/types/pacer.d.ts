// Types of `Pacer`, the client side of rate limiting (see pkg-template/lib/client/pacer.js).

/** A rate: `"100/s"`, `"500/5s"`, or a limit per window (`window` a duration or whole ms). */
export type PacerRate = string | { limit: number; window: string | number };

export interface PacerOptions {
  /** The service's rate, e.g. `"100/s"`. */
  rate: PacerRate;
  /** Release work every grain (`"200ms"` or whole ms; default 200 ms, at most the window). */
  grain?: string | number;
  /** Most waiters queued; beyond it `acquire` rejects with `PacerQueueFullError` (default 1000). */
  maxQueue?: number;
  /** The clock, epoch ms (default `Date.now`); inject with `sleep` for simulated time. */
  now?: () => number;
  /** Sleeps `ms`; rejects (or resolves early) when `signal` aborts. Default: `setTimeout`. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Most calls in flight at once (a concurrency limit the core decides): `pace` holds a slot
   * until the call settles; `acquire` rejects, use `acquireSlot`. Default: unbounded.
   */
  maxInFlight?: number;
  /** How long an unreleased slot lasts (`"30s"` or whole ms; default 30 s); only with `maxInFlight`. */
  leaseTtl?: string | number;
}

/** What `Pacer.acquireSlot` resolves with: the start, the slot's lease, and its release. */
export interface PacerSlot {
  readonly start: number;
  readonly lease: string;
  /** Gives the slot back (once; later calls do nothing). */
  release(): void;
  /**
   * Extends the slot's lease to now + `leaseTtl`: the new expiry (epoch ms). Throws (code
   * `unknown_lease`) once it was released or lapsed. `pace(fn)` renews on its own.
   */
  renew(): number;
}

/** Response headers as `Headers`, a record, or `[name, value]` pairs. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined> | Iterable<readonly [string, string]>;

/** What `Pacer` and `LeasedPacer` share: waiting for a start, wrapping calls, reading answers. */
export interface PacedWork {
  /**
   * Resolves when work of `cost` (default 1) may start, with the reserved start (epoch ms);
   * FIFO; aborting gives the reservation back.
   */
  acquire(cost?: number, options?: { signal?: AbortSignal }): Promise<number>;
  /** Wraps `fn`: acquire, call, and observe the headers of a `Response`-like result. */
  pace<A extends unknown[], R>(
    fn: (...args: A) => R | Promise<R>,
    options?: { cost?: number | ((...args: A) => number); signal?: AbortSignal },
  ): (...args: A) => Promise<R>;
  /** Reads a service's answer; returns the epoch ms nothing starts before, or null. */
  observe(headers: HeadersLike): number | null;
  /** Waiters not yet released. */
  readonly queued: number;
}

export interface Pacer extends PacedWork {}
export declare class Pacer {
  constructor(options: PacerOptions);
  /** Nothing starts before `until` (epoch ms). */
  pauseUntil(until: number): void;
  /** Follows a new rate (e.g. the sum of leased partitions). */
  setRate(rate: PacerRate): void;
  /** When work of `cost` could start if asked now (epoch ms), reserving nothing. */
  peek(cost?: number): number;
  /** The rate paced to, as `"<limit>/<window>ns"`. */
  readonly rate: string;
  /** The largest cost one piece of work may have (units released per grain). */
  readonly maxCost: number;
  /** With `maxInFlight`: resolves once a slot is free and the rate lets the work start. */
  acquireSlot(cost?: number, options?: { signal?: AbortSignal }): Promise<PacerSlot>;
  /** `maxInFlight`, or null when unbounded. */
  readonly maxInFlight: number | null;
  /** Slots held now (0 when unbounded). */
  readonly inFlight: number;
}

/** `acquire` rejected: `maxQueue` waiters are already queued. `code` is `"pacer_queue_full"`. */
export declare class PacerQueueFullError extends Error {
  readonly code: "pacer_queue_full";
  readonly maxQueue: number;
}

/** The cost is above what one grain releases: waiting never helps. */
export declare class PacerCostError extends RangeError {
  readonly code: "pacer_cost_exceeds_capacity";
  readonly cost: number;
  readonly maxCost: number;
}
