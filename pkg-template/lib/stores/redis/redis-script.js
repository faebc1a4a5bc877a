// The one script the Redis store runs: an atomic compare-and-swap of opaque bytes over a few
// keys. It knows nothing of any algorithm (the decision is the wasm core's, re-run on a
// conflict); it only checks that every key still holds what the decision was made over, or,
// for one key, that what it holds is covered by the write's guard (redis-guard.js).
import { toValue, fromValue, HELD_LUA } from "./redis-value.js";
import { GUARD_LUA } from "./redis-guard.js";
import { RedisStateError } from "./redis-errors.js";

/**
 * KEYS: the n keys. ARGV: n expected values (`~<hex>`: those bytes or none, redis-value.js
 * `expected`), n new values, n TTLs in ms ('' = absent or
 * delete), and for one key optionally the write's guard. If every key holds its expected
 * value, writes each changed new value (SET PX) or deletes it, and returns {1}; else, for one
 * key whose guard applies to what it holds, writes the guarded bytes and returns {2, current,
 * written}; otherwise writes nothing and returns {0, current values...}, so that a conflict
 * costs one more round trip, not two.
 */
export const CAS_SCRIPT = `${GUARD_LUA}${HELD_LUA}
local n = #KEYS
local e, gone = {}, {}
for i = 1, n do e[i], gone[i] = expected(ARGV[i]) end
for i = 1, n do
  local cur = held(redis.call('GET', KEYS[i]) or '')
  if cur ~= e[i] and not (gone[i] and cur == '') then
    if n == 1 then
      local w, s = guarded(cur, e[1], ARGV[2], ARGV[4])
      if w then
        redis.call('SET', KEYS[1], w, 'PX', shifted_ttl(ARGV[3], s))
        return {2, cur, w}
      end
    end
    local out = {0}
    for j = 1, n do out[j + 1] = held(redis.call('GET', KEYS[j]) or '') end
    return out
  end
end
for i = 1, n do
  local v = ARGV[n + i]
  if v ~= e[i] then
    if v == '' then redis.call('DEL', KEYS[i])
    else redis.call('SET', KEYS[i], v, 'PX', ARGV[2 * n + i]) end
  end
end
return {1}
`;

/**
 * A script run by its SHA1 through `client` (see redis-client.js): SCRIPT LOAD once, EVALSHA,
 * and EVAL of the source (which caches it on the server that ran it) when that server answers
 * NOSCRIPT: a restarted or flushed Redis, or on a cluster any node but the one SCRIPT LOAD
 * reached.
 */
export class LoadedScript {
  #client;
  #source;
  #sha = null;
  #loading = null;

  constructor(client, source) {
    this.#client = client;
    this.#source = source;
  }

  #load() {
    this.#loading ??= this.#client.send(["SCRIPT", "LOAD", this.#source]).then(
      (sha) => {
        this.#sha = String(sha);
        this.#loading = null;
      },
      (e) => {
        this.#loading = null;
        throw e;
      },
    );
    return this.#loading;
  }

  /** The adapted client the script runs through. */
  get client() {
    return this.#client;
  }

  /** `EVALSHA <sha> <numkeys> ...rest`; `args` is `[numkeys, ...keys, ...argv]`, all strings. */
  async run(args) {
    // Each command carries its deadline (redis-client.js).
    if (this.#sha === null) await this.#load();
    try {
      return await this.#client.send(["EVALSHA", this.#sha, ...args]);
    } catch (e) {
      // Nothing ran: the script is unknown to this server (restarted or flushed).
      if (!/NOSCRIPT/.test(String(e?.message))) throw e;
      return this.#client.send(["EVAL", this.#source, ...args]);
    }
  }

}

/** Runs the CAS script through `client`, all or nothing over its keys. */
export class CasScript {
  #script;

  constructor(client) {
    this.#script = new LoadedScript(client, CAS_SCRIPT);
  }

  /**
   * Swaps `keys` from `expected` to `next` (arrays of `Uint8Array | null`), each written
   * with its TTL in `ttls` (ms); for one key, under `guard` (or none). Resolves to `null` when
   * it swapped, to `{ guarded: [current], written: [bytes] }` when Redis applied the guard,
   * else to the current values (`Uint8Array | null` per key). Values are hex text in Redis
   * (redis-value.js); one that is not is a `RedisStateError`. `orAbsent[i]`: an absent key i
   * counts as `expected[i]` (bytes that decide like a fresh key).
   */
  async swap(keys, expected, next, ttls, guard, orAbsent) {
    const n = keys.length;
    const args = [String(n), ...keys];
    for (let i = 0; i < n; i++) args.push(toValue(expected[i], orAbsent?.[i] === true));
    for (const v of next) args.push(toValue(v));
    for (const t of ttls) args.push(String(t));
    if (n === 1 && guard) args.push(guard);
    let reply;
    try {
      reply = await this.#script.run(args);
    } catch (e) {
      if (!/WRONGTYPE/.test(String(e?.message))) throw e;
      // Another type of value at one of the keys: not an outage, and not ours.
      throw new RedisStateError("a key holds another type of value (WRONGTYPE)");
    }
    if (Number(reply[0]) === 1) return null;
    if (Number(reply[0]) === 2) {
      return { guarded: [fromValue(keys[0], reply[1])], written: [fromValue(keys[0], reply[2])] };
    }
    const current = new Array(n);
    for (let i = 0; i < n; i++) current[i] = fromValue(keys[i], reply[i + 1]);
    return current;
  }
}
