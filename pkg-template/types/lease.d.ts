// Types of `LeasedPacer`, a pacer that follows capacity leases (see pkg-template/lib/client/lease.js).
import type { PacedWork, PacerOptions } from "./pacer.js";

/** `maxQueue`, `now` and `sleep` as `Pacer`'s. */
export interface LeasedPacerOptions extends Pick<PacerOptions, "maxQueue" | "now" | "sleep"> {
  /** The tollgate Worker's base URL, e.g. `"https://limits.example.com"`. */
  url: string | URL;
  /** The pool's name (`[vars.POOLS.<name>]` in the Worker's configuration). */
  pool: string;
  /** This holder's name (1 to 128 bytes of UTF-8), unique among the pool's holders. */
  holder: string;
  /** How many partitions to ask for; the pool may grant fewer (even none, for a while). */
  partitions: number;
  /** Each lease's length (ms, at least 3, at most the pool's `maxTtl`); renewed every third. */
  ttlMs: number;
  /** The Worker's API token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** The inner pacer's grain (`"200ms"` or whole ms; default 200 ms, at most the pool's window). */
  grain?: string | number;
  /** Nothing starts from this many ms before a lease's end on (default min(1000, ttlMs / 5)). */
  renewMargin?: number;
  /** The fetch to call the Worker with (default `globalThis.fetch`). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

export interface LeasedPacerStatus {
  state: "idle" | "running" | "failed" | "closed";
  /** The partitions held (indices). */
  partitions: number[];
  /** The rate work starts at now: the counted partitions (0 while none is usable). */
  rate: number;
  /** Every held partition's rate, counted yet or not (new ones count one window after the grant). */
  heldRate: number;
  /** The pool's window (ms) the rates are per. */
  window: number;
  /** Epoch ms from which nothing starts unless renewed (0 when nothing is held). */
  usableUntil: number;
  queued: number;
  /** The last failed lease request, while it is the latest news. */
  lastError: LeaseError | null;
}

/** `acquire`, `pace` and `observe` as `Pacer`'s, paced to the partitions held. */
export interface LeasedPacer extends PacedWork {}
export declare class LeasedPacer {
  constructor(options: LeasedPacerOptions);
  /** Starts following the pool (acquire does it); resolves after the first answer. */
  start(): Promise<LeasedPacerStatus>;
  /** Rejects waiters, then releases the leases; resolves with how many partitions came back. */
  close(): Promise<{ released: number }>;
  readonly status: LeasedPacerStatus;
  /** The rate work starts at now (units per `status.window` ms). */
  readonly rate: number;
}

/** A lease request failed; `code` is the Worker's error code or `network`, `bad_answer`, `closed`. */
export declare class LeaseError extends Error {
  readonly code: string;
  /** The HTTP status, 0 when there was none. */
  readonly status: number;
  /** Whether asking again may help (no answer, 5xx, 408, 429). */
  readonly transient: boolean;
}
