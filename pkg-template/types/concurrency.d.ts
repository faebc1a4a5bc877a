// Concurrency limits (docs/concurrency.md): the limit's options and the types of
// `limiter.acquire`, `limiter.release(lease)` and `limiter.renew`.
import type { CallOptions, Decision } from "./index.js";
import type { QueueFields } from "./options.generated.js";
export type { LeaseErrorCode } from "./contract.generated.js";
/** A concurrency limit's options, generated from the core's (`tollgate::spec::typed::CONCURRENCY_LIMIT`). */
export type { ConcurrencyLimitOptions } from "./options.generated.js";

/** An acquisition's decision: `limit`'s, with its lease. */
export interface Acquired extends Decision {
  /** The lease, opaque: a string that crosses a process, for `release` and `renew`. `null` when denied, or when the policy has no concurrency limit. */
  lease: string | null;
  /** When the lease expires unless renewed (epoch ms); `null` with no lease. */
  expiresAt: number | null;
}

/** A release's answer: the keys' figures after it, counting nothing. */
export interface Released extends Decision {
  /** Whether the lease was live and its slots are now free (`false`: released already or expired; nothing changed). */
  released: boolean;
}

/** A renewal's answer: the keys' figures after it, counting nothing. */
export interface Renewed extends Decision {
  /** The lease's new expiry (epoch ms). */
  expiresAt: number;
}

/** Options of `release` and `renew`. */
export interface LeaseOptions {
  /** Epoch ms (fractions allowed); default `Date.now()`. */
  now?: number;
}

/** `acquire` waiting in a bounded FIFO line for a slot (in memory, and across processes over Redis; docs/concurrency.md, "Waiting in line"). */
export interface QueuedAcquireOptions extends QueueFields {
  /** A whole number of units (default 1). */
  cost?: number;
  /** Takes the waiter out of line; the promise rejects with its reason. */
  signal?: AbortSignal;
}

/** `T`, or a promise of it for a limiter over a store. */
type Answer<T, Async extends boolean> = Async extends true ? Promise<T> : T;

/** The lease calls of a limiter (in memory, or over Redis). Not in `tollgate/lite`. */
export interface ConcurrencyCalls<K, Async extends boolean> {
  /** A hit decided as `limit`; when admitted, its slots of every concurrency limit are held under the decision's `lease`. */
  acquire(key: K, options: QueuedAcquireOptions & ({ maxQueue: number } | { maxWait: number | string })): Promise<Acquired>;
  acquire(key: K, options?: CallOptions): Answer<Acquired, Async>;
  /** Frees a lease's slots on every key; a lease no longer live is a no-op (`released: false`). Throws `invalid_lease` for a token that does not decode. */
  release(lease: string, options?: LeaseOptions): Answer<Released, Async>;
  /** Extends a live lease to `now + leaseTtl`; refuses `unknown_lease` or `invalid_lease` (throws, or rejects), changing nothing. */
  renew(lease: string, options?: LeaseOptions): Answer<Renewed, Async>;
}
