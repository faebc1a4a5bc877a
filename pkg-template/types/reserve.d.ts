// Reserve and settle (docs/reserve.md): types of `limiter.reserve` and `limiter.settle`.
import type { Decision } from "./index.js";
export type { SettleErrorCode } from "./contract.generated.js";

/** A reservation's decision: `limit`'s with the estimate as the cost, and its reservation. */
export interface Reserved extends Decision {
  /**
   * The reservation, opaque: a string that crosses a process, for `settle`. `null` when the
   * hit was denied (nothing is reserved).
   */
  reservation: string | null;
}

/**
 * A settlement's answer: the key's figures after it, counting nothing (`allowed`: whether one
 * more unit would be admitted now; `remaining`: how many would), and what it did.
 */
export interface Settled extends Decision {
  /** Units given back (at most the estimate less the actual cost). */
  refunded: number;
  /** Units of the excess (the actual cost above the estimate) charged, into debt past a limit without room. */
  charged: number;
  /** Units of the excess past a limit's debt cap (one limit of debt), not charged. */
  forgiven: number;
}

/** Options of `settle`. */
export interface SettleOptions {
  /** Epoch ms (fractions allowed); default `Date.now()`. */
  now?: number;
}
