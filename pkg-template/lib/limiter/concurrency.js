// Concurrency leases (docs/concurrency.md): acquire a slot of a policy's concurrency limits
// with the rate limits beside them, release it, renew it. The core decides all three
// (src/concurrency.rs), through the limiter's wasm module or the Redis store's
// compare-and-swap run; this module reads their options and answers, once for every limiter
// (memory-limiter.js, redis-limiter.js delegate here).
import { callOptions, fail, nowOf } from "../contract/options.js";
import { LEASE_FIELDS } from "../contract/contract.generated.js";
import { reservationId } from "./reserve.js";
import { queued, queueOptions } from "./acquire-queue.js";
import { optionError } from "../contract/options.js";

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
export function acquireInStore(w, key, options, run, swap, read, line) {
  if (queued(options)) return acquireInLine(w, key, options, run, swap, read, line);
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

/**
 * A store's waiters in line wake early when this process frees a slot (`ring`); a slot freed
 * by another process is found at the next poll, which the core schedules (`pollAfter`, at most
 * `tollgate::concurrency::queue::POLL_EVERY`).
 */
export class Bell {
  #sleepers = new Set();

  /** Resolves after `ms`, at a `ring`, or at once when `signal` aborts. */
  sleep(ms, signal) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.#sleepers.add(done);
    });
  }

  ring() {
    for (const wake of [...this.#sleepers]) wake();
  }
}

/**
 * The store's `acquire` waiting in line (docs/concurrency.md, "Waiting in line"): the core
 * keeps the line in the key's state (`tollgate::concurrency::queue`) and answers each attempt
 * admitted, waiting (with when to ask again) or refused; this loop only asks again. `line`:
 * `{ bell, ofText, release(token) }` of the limiter. A `signal` that aborts takes the ticket
 * out of the line (a release of its id) and rejects with its reason.
 */
async function acquireInLine(w, key, options, run, swap, read, line) {
  const { maxQueue: _q, maxWait: _w, signal, now: given, ...rest } = options;
  if (given !== undefined) throw optionError("conflicting_fields", "now", "now cannot be given with maxQueue or maxWait: a waiter in line polls on the real clock");
  const { maxQueue, maxWait } = queueOptions(options, line.ofText);
  if (!w.hasConcurrency()) throw new TypeError("acquire: maxQueue and maxWait wait for a concurrency limit's slot; this policy has none (use waitFor)");
  if (signal?.aborted) throw signal.reason;
  const [hi, lo] = leaseId();
  let deadline;
  let answer;
  for (;;) {
    answer = undefined;
    const decision = await run(key, rest, async (keys, rkeys, now, cost) => {
      deadline ??= now + maxWait;
      let d;
      await swap(
        rkeys,
        (states) => {
          const write = w.acquireQueuedStep(states, keys, now, cost, hi, lo, maxQueue, deadline);
          d = read(keys);
          answer = w.lastLease();
          return write;
        },
        now,
      );
      return d;
    });
    // The store's failure mode answered (degraded): no lease, no line.
    if (answer === undefined) return acquired(decision, undefined);
    const [token, expiresAt, status, , pollAfter] = answer;
    if (status !== "waiting") return acquired(decision, status === "admitted" ? [token, expiresAt] : undefined);
    await line.bell.sleep(pollAfter, signal);
    if (signal?.aborted) {
      // Out of the line now rather than at the end of its claim window: a release of the
      // waiter's id takes its ticket out (and frees a slot a poll in flight took).
      await line.release(token).catch(() => undefined);
      throw signal.reason;
    }
  }
}
