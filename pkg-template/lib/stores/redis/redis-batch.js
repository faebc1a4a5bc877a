// One-key compare-and-swaps of different keys, issued in the same tick, sent to Redis as one
// script call. Each key is swapped or not on its own (this is not a transaction over the
// keys: a multi-key hit still goes through the all-or-nothing CAS script, redis-script.js).
//
// Why: with many keys, one EVALSHA per decision costs more around the script (the client's
// command object, promise and timer, one socket write, the server's read, parse and Lua call
// set-up) than the compare-and-swap itself: 64 decisions in flight would make 64 commands.
// So the decisions whose compare-and-swap is ready in
// the same tick share one command. A decision still waits for exactly one reply; nothing is
// delayed by more than the rest of the current tick.
import { LoadedScript } from "./redis-script.js";
import { GUARD_LUA } from "./redis-guard.js";
import { toValue, fromValue, HELD_LUA } from "./redis-value.js";
import { RedisStateError } from "./redis-errors.js";

/**
 * KEYS: n keys. ARGV: for key i, at 4i-3..4i: the expected value (`~<hex>`: those bytes or none,
 * redis-value.js `expected`), the new value, the TTL in
 * ms ('' = absent or delete), and the write's guard ('' = none; redis-guard.js). Per key, in
 * order: if it holds the expected value, writes the new one when it differs (SET PX, or DEL for
 * '') and answers 1; else, if the guard applies to what it holds, writes the guarded bytes and
 * answers {current, written}; otherwise writes nothing and answers its current value ('' =
 * absent). A key that cannot be read (WRONGTYPE) answers {error} (an array of one: no value a
 * key holds can be taken for it), and the other keys are unaffected. Entries for one key in one
 * call (two limiters sharing keys) are compared in order, each against what the one before left.
 */
export const BATCH_SCRIPT = `${GUARD_LUA}${HELD_LUA}
local out = {}
for i = 1, #KEYS do
  local k = KEYS[i]
  local cur = redis.pcall('GET', k)
  if type(cur) == 'table' and cur.err then
    out[i] = {cur.err}
  else
    cur = held(cur or '')
    local e, gone = expected(ARGV[4 * i - 3])
    local v = ARGV[4 * i - 2]
    if cur ~= e and not (gone and cur == '') then
      local w, s = guarded(cur, e, v, ARGV[4 * i])
      if w then
        redis.call('SET', k, w, 'PX', shifted_ttl(ARGV[4 * i - 1], s))
        out[i] = {cur, w}
      else
        out[i] = cur
      end
    else
      if v ~= e then
        if v == '' then redis.call('DEL', k)
        else redis.call('SET', k, v, 'PX', ARGV[4 * i - 1]) end
      end
      out[i] = 1
    end
  end
end
return out
`;

/** Most keys in one script call; more in one tick make several calls. */
export const MAX_BATCH = 128;

/** Runs `flush` after everything the current tick queued (promise jobs included). */
const later =
  typeof process === "object" && typeof process?.nextTick === "function"
    ? (flush) => process.nextTick(flush)
    : (flush) => setTimeout(flush, 0);

/**
 * Collects one-key swaps and sends those of one tick together. `swap` has the contract of
 * `CasScript.swap` for one key: resolves to `null` when it swapped, to `{ guarded: [current],
 * written: [bytes] }` when Redis applied the guard, else to `[current]`.
 */
export class SwapBatcher {
  #script;
  #pending = [];
  #scheduled = false;

  constructor(client) {
    this.#script = new LoadedScript(client, BATCH_SCRIPT);
  }

  /**
   * Swaps `key` from `expected` to `next` (`Uint8Array | null`) with `ttl` ms, under `guard` (or
   * none); `orAbsent`: an absent key counts as `expected` (bytes that decide like a fresh key).
   */
  swap(key, expected, next, ttl, guard, orAbsent = false) {
    return new Promise((resolve, reject) => {
      this.#pending.push({ key, expected: toValue(expected, orAbsent), next: toValue(next), ttl: String(ttl), guard: guard ?? "", resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        later(() => this.#flush());
      }
    });
  }

  #flush() {
    this.#scheduled = false;
    const all = this.#pending;
    this.#pending = [];
    for (let at = 0; at < all.length; at += MAX_BATCH) this.#send(all.slice(at, at + MAX_BATCH));
  }

  async #send(batch) {
    const n = batch.length;
    const args = new Array(1 + 5 * n);
    args[0] = String(n);
    for (let i = 0; i < n; i++) {
      const s = batch[i];
      args[1 + i] = s.key;
      args[1 + n + 4 * i] = s.expected;
      args[2 + n + 4 * i] = s.next;
      args[3 + n + 4 * i] = s.ttl;
      args[4 + n + 4 * i] = s.guard;
    }
    let reply;
    try {
      reply = await this.#script.run(args);
    } catch (e) {
      for (const s of batch) s.reject(e);
      return;
    }
    for (let i = 0; i < n; i++) {
      const s = batch[i];
      const r = reply[i];
      // A value that is not a state (fromValue throws) rejects its own hit only.
      try {
        if (typeof r === "number" || typeof r === "bigint") s.resolve(null);
        else if (Array.isArray(r) && r.length === 2) {
          s.resolve({ guarded: [fromValue(s.key, String(r[0]))], written: [fromValue(s.key, String(r[1]))] });
        } else if (Array.isArray(r)) {
          const error = String(r[0]);
          // Another type of value at the key (a hash, a list): not an outage, and not ours.
          s.reject(/WRONGTYPE/.test(error) ? new RedisStateError("the key holds another type of value (WRONGTYPE)") : new Error(error));
        } else s.resolve([fromValue(s.key, String(r))]);
      } catch (e) {
        s.reject(e);
      }
    }
  }
}
