// What the Node benchmarks share: the key space and the key sequence of the workloads over
// many keys (W2 in bench.mjs, the resident keys in resident.mjs), so both draw the same keys,
// and the plain-JS GCRA both measure tollgate against.

/** Distinct keys of the many-keys workloads. */
export const KEYS = 1_000_000;

/** `n` keys `user:<i>`: xorshift32 with a fixed seed, reduced to `KEYS` keys. */
export function keysByPrng(n) {
  const keys = new Array(n);
  let s = 0x2545f491;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    keys[i] = `user:${(s >>> 0) % KEYS}`;
  }
  return keys;
}

/**
 * GCRA in plain JS: one theoretical arrival time (ms) per key in a Map; `limit` per `windowMs`,
 * `burst` at once (default: `limit`). Answers only whether a hit is allowed.
 */
export class PlainGcra {
  constructor(limit, windowMs, burst = limit) {
    this.t = windowMs / limit;
    this.tau = this.t * burst;
    this.tats = new Map();
  }
  limit(key, now) {
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const next = tat + this.t;
    if (next - now > this.tau) return false;
    this.tats.set(key, next);
    return true;
  }
  /** Keys held. */
  get size() {
    return this.tats.size;
  }
}

/**
 * The same GCRA answering what tollgate's `limit` answers: a fresh decision object with its
 * one-entry `limits` array (allowed, limit, remaining, resetAt, retryAfter, blockedBy; the
 * entry also nextUnitAfter), all in ms. What plain code costs when it says as much.
 */
export class PlainGcraDecision {
  constructor(limit, windowMs, burst = limit) {
    this.t = windowMs / limit;
    this.tau = this.t * burst;
    this.burst = burst;
    this.tats = new Map();
  }
  limit(key, now) {
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const next = tat + this.t;
    const allowed = next - now <= this.tau;
    if (allowed) this.tats.set(key, next);
    const meter = allowed ? next : tat;
    const remaining = Math.max(0, Math.floor((this.tau - (meter - now)) / this.t));
    const resetAt = Math.ceil(meter);
    const retryAfter = allowed ? 0 : Math.ceil(next - this.tau - now);
    const nextUnitAfter = Math.max(0, Math.ceil(meter + this.t - this.tau - now));
    return {
      allowed, limit: this.burst, remaining, resetAt, retryAfter, blockedBy: allowed ? null : "default",
      limits: [{ name: "default", allowed, limit: this.burst, remaining, resetAt, retryAfter, nextUnitAfter }],
    };
  }
}
