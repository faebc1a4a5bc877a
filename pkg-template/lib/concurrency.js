// Concurrency leases (docs/concurrency.md): acquire a slot of a policy's concurrency limits
// with the rate limits beside them, release it, renew it. The core decides all three
// (src/concurrency.rs), through the limiter's wasm module or the Redis store's
// compare-and-swap run; this module reads their options and answers, once for every limiter
// (memory-limiter.js, redis-limiter.js delegate here).
import { callOptions, fail, nowOf } from "./options.js";
import { LEASE_FIELDS } from "./contract.generated.js";
import { reservationId } from "./reserve.js";
import { queued } from "./acquire-queue.js";

const [LEASE, EXPIRES_AT, RELEASED] = LEASE_FIELDS;

/**
 * A lease's id: 64 random bits as two unsigned 32-bit halves, drawn as a reservation's is
 * (the core takes randomness as an argument, as it takes time).
 */
export const leaseId = reservationId;

/** `release`/`renew`'s arguments, checked before anything is decided: the token and `now`. */
export function leaseArgs(lease, options) {
  if (typeof lease !== "string") throw fail("lease", lease, "a string (a decision's lease)");
  return nowOf(options);
}

/** `decision` (an acquisition's) with its `lease` and `expiresAt`: `[token, ms]`, or none. */
export function acquired(decision, taken) {
  decision[LEASE] = taken ? taken[0] : null;
  decision[EXPIRES_AT] = taken ? taken[1] : null;
  return decision;
}

/** The in-memory limiter's `acquire`: `wasm` its wasm limiter, `read(keys)` the decision it wrote. */
export function acquireInMemory(wasm, keys, options, read) {
  const { cost, now } = callOptions(options);
  const [hi, lo] = leaseId();
  const taken = wasm.acquireKeys(keys, now, cost, hi, lo);
  return acquired(read(keys), taken);
}

/** The in-memory limiter's `release`: the keys' figures after it, with `released`. */
export function releaseInMemory(wasm, lease, options, read) {
  const now = leaseArgs(lease, options);
  const [released, keys] = wasm.releaseLease(lease, now);
  const decision = read(keys);
  decision[RELEASED] = released;
  return decision;
}

/** The in-memory limiter's `renew`: the keys' figures after it, with the new `expiresAt`. */
export function renewInMemory(wasm, lease, options, read) {
  const now = leaseArgs(lease, options);
  const [expiresAt, keys] = wasm.renewLease(lease, now);
  const decision = read(keys);
  decision[EXPIRES_AT] = expiresAt;
  return decision;
}

/** Throws where a call would take slots no one could release (a batch, a reservation). */
export function noAnonymousSlots(what) {
  throw new TypeError(`${what} cannot hold a concurrency limit's slots: use acquire (or limit), whose decision's lease release() frees`);
}

/** Per `StorePolicy`, the tail of each key set's line of lease swaps in this process. */
const LINES = new WeakMap();

/**
 * Runs `swap()` after this process's earlier lease swaps on the same `rkeys` have ended: the
 * acquisitions and releases of one process on one key would otherwise race one another's
 * compare-and-swap (all but one conflict each round, and a loser could run out of attempts),
 * so only other processes' writes conflict.
 */
function inLine(w, rkeys, swap) {
  let lines = LINES.get(w);
  if (lines === undefined) LINES.set(w, (lines = new Map()));
  const id = rkeys.join("\0");
  const turn = (lines.get(id) ?? Promise.resolve()).then(swap);
  const tail = turn.catch(() => {});
  lines.set(id, tail);
  tail.then(() => lines.get(id) === tail && lines.delete(id));
  return turn;
}

/**
 * The Redis limiter's `acquire`: `run(key, options, decide)` its hit path (input, time,
 * failure mode), `swap(keys, rkeys, step)` its compare-and-swap loop, `w` its `StorePolicy`,
 * `read(keys)` the decision `w` wrote. A decision the failure mode made (degraded) holds no
 * lease: its `lease` is `null`.
 */
export function acquireInStore(w, key, options, run, swap, read) {
  if (queued(options)) {
    return Promise.reject(new TypeError("acquire: waiting in line (maxQueue, maxWait) is built in memory only, not over a store (no cross-process ticket order): use waitFor, or acquire without them"));
  }
  const [hi, lo] = leaseId();
  return run(key, options, async (keys, rkeys, now, cost) => {
    let decision, taken;
    await inLine(w, rkeys, () =>
      swap(
        rkeys,
        (states) => {
          const write = w.acquireStep(states, keys, now, cost, hi, lo);
          // Read at once: while the swap awaits Redis, the same StorePolicy decides other
          // calls of this process, each leaving its own last lease.
          decision = read(keys);
          taken = w.lastLease();
          return write;
        },
        now,
      ),
    );
    return acquired(decision, taken);
  }).then((d) => (d[LEASE] === undefined ? acquired(d, undefined) : d));
}

/**
 * The Redis limiter's `release` and `renew` (`op` "release" or "renew"): `guarded(keys, op)`
 * runs `op(rkeys, now)` for the keys under the store's timeout, `swap` and `read` as for
 * `acquireInStore`.
 */
export async function leaseInStore(w, op, lease, options, guarded, swap, read) {
  leaseArgs(lease, options);
  const keys = w.leaseKeys(lease);
  return guarded(keys, options, async (rkeys, now) => {
    let answer;
    await inLine(w, rkeys, () =>
      swap(
        rkeys,
        (states) => {
          const write = op === "release" ? w.releaseStep(states, now, lease) : w.renewStep(states, now, lease);
          answer = w.lastLease();
          return write;
        },
        now,
      ),
    );
    const decision = read(answer[1]);
    decision[op === "release" ? RELEASED : EXPIRES_AT] = answer[0];
    return decision;
  });
}
