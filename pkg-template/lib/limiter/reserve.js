// Reserve and settle (docs/reserve.md): admit a hit on an estimate, settle it on the actual
// cost. The core decides both (src/reserve.rs), through the limiter's wasm module or the
// Redis store's compare-and-swap run; this module reads their options and answers, once for
// every limiter (memory-limiter.js, redis-limiter.js delegate here).
import { callOptions, fail } from "../contract/options.js";
import { SETTLED_FIELDS } from "../contract/contract.generated.js";

/**
 * A reservation's id: 64 random bits as two unsigned 32-bit halves (the core takes
 * randomness as an argument, as it takes time). Random, so a settlement after the key was
 * reset never finds a new reservation of the same id.
 */
export function reservationId() {
  // Drawn 256 ids at a time: a call of getRandomValues costs microseconds (Node's webcrypto),
  // more than the decision it names. Each id is still used once.
  if (drawn >= pool.length) {
    globalThis.crypto.getRandomValues(pool);
    drawn = 0;
  }
  const id = [pool[drawn], pool[drawn + 1]];
  drawn += 2;
  return id;
}

const pool = new Uint32Array(512);
let drawn = pool.length;

/** `settle`'s arguments, checked before anything is decided: its token and `now`. */
export function settleArgs(reservation, actual, options) {
  if (typeof reservation !== "string") throw fail("reservation", reservation, "a string (a decision's reservation)");
  if (typeof actual !== "number") throw fail("actual", actual, "a number");
  return callOptions(options).now;
}

/** `decision` (a reserve's) with its `reservation`: the token, or `null` when denied. */
export function reserved(decision, token) {
  decision.reservation = token ?? null;
  return decision;
}

/** `decision` (the key's figures after a settlement) with the settlement's own fields. */
export function settled(decision, figures) {
  for (let i = 0; i < SETTLED_FIELDS.length; i++) decision[SETTLED_FIELDS[i]] = figures[i];
  return decision;
}

/**
 * The in-memory limiter's `reserve`: `wasm` its wasm limiter (the full module's), `read(keys)`
 * the decision it wrote.
 */
export function reserveInMemory(wasm, keys, options, read) {
  const { cost, now } = callOptions(options);
  const [hi, lo] = reservationId();
  const token = wasm.reserveKeys(keys, now, cost, hi, lo);
  return reserved(read(keys), token);
}

/** The in-memory limiter's `settle`, as `reserveInMemory`. */
export function settleInMemory(wasm, reservation, actual, options, read) {
  const now = settleArgs(reservation, actual, options);
  const figures = wasm.settleReservation(reservation, now, actual);
  return settled(read(figures[3]), figures);
}

/**
 * The Redis limiter's `reserve`: `run(key, options, decide)` its hit path (input, time,
 * failure mode), `swap(keys, rkeys, step)` its compare-and-swap loop, `w` its `StorePolicy`,
 * `read(keys)` the decision `w` wrote. A decision the failure mode made (degraded) reserves
 * nothing: its `reservation` is `null`.
 */
export function reserveInStore(w, key, options, run, swap, read) {
  const [hi, lo] = reservationId();
  return run(key, options, async (keys, rkeys, now, cost) => {
    let decision;
    await swap(
      rkeys,
      (states) => {
        const write = w.reserveStep(states, now, cost, hi, lo);
        decision = read(keys);
        return write;
      },
      now,
    );
    return reserved(decision, decision.allowed ? w.reservationOf(keys, cost, hi, lo) : null);
  }).then((d) => (d.reservation === undefined ? reserved(d, null) : d));
}

/**
 * The Redis limiter's `settle`: `guarded(keys, op)` runs `op(rkeys, now)` for the keys under
 * the store's timeout (after reading them, so a settlement never fails over stale bytes),
 * `swap` and `read` as for `reserveInStore`.
 */
export async function settleInStore(w, reservation, actual, options, guarded, swap, read) {
  settleArgs(reservation, actual, options);
  const keys = w.reservationKeys(reservation);
  return guarded(keys, options, async (rkeys, now) => {
    let figures;
    await swap(
      rkeys,
      (states) => {
        const write = w.settleStep(states, now, reservation, actual);
        figures = w.lastSettled();
        return write;
      },
      now,
    );
    return settled(read(figures[3]), figures);
  });
}
