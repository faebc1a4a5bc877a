// The limiter a `RedisStore` returns with `syncRate` != 0: gateway-style sync
// of mergeable window counters. Each process decides locally, in the wasm core's
// `SyncedLimiter`, from the merged counts plus its own hits not yet merged; every `syncRate`
// ms it pushes its per-window diffs to Redis (HINCRBY, atomic) and reads back the merged
// counts of the keys it holds (HGETALL), in one pipelined round trip. `syncRate` < 0 never
// touches Redis. Between syncs every process may admit the whole remaining quota, so the
// cluster can over-admit; docs/redis.md measures by how much.
//
// In Redis, one hash per key: field `<limit index>:<window start, ns>` -> count, expiring
// with its newest window; fields of windows no decision reads any more are deleted.
import { validateKeys } from "../../wasm.js";
import { extras } from "../../extras.js";
import { keysOf, callOptions, optionError, POLICY_FIELDS } from "../../contract/options.js";
import { readDecision } from "../../limiter/decision.js";
import { SYNC_DIFF_LEN } from "../../contract/contract.generated.js";
import { extrasOutView } from "../../limiter/extras-view.js";
import { withTimeout } from "./redis-errors.js";
import { StoreLimiter } from "../store-limiter.js";

export class SyncedRedisLimiter extends StoreLimiter {
  #store;
  #policy;
  #wasm;
  #names;
  #timer = null;
  #syncing = null;
  #closed = false;
  /** Keys whose merged counts this process has read at least once (bounded, oldest out). */
  #seen = new Map();
  /** The limiter's namespace and its Redis keys (redis-store.js `keySpace`). */
  #space;

  /** @internal Use `new RateLimiter({ ..., store })` or `store.limiter(options)`. */
  constructor(store, policy, space) {
    super(store, null);
    this.#space = space;
    this.#store = store;
    this.#policy = policy;
    if (policy._wasm.blockDurationMs > 0) {
      // A penalty is one key's state, decided where the key's state is: not in synced counters.
      const m = `blockDuration needs every hit decided in Redis (syncRate 0), got syncRate ${store._syncRate}`;
      throw optionError("conflicting_fields", "blockDuration", m);
    }
    try {
      const { Synced } = extras();
      this.#wasm = new Synced(policy._options, POLICY_FIELDS, space.namespace, store._syncRate);
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      // The code and field wrangler.toml's policy parser gives the same policy (worker/src/config.rs).
      const m = `syncRate ${store._syncRate} syncs window counters only ("fixed-window" on the clock, "sliding-window", "sliding-buckets"); use syncRate 0 for this policy: ${e.message}`;
      throw optionError("conflicting_fields", "syncRate", m);
    }
    this.#names = policy.names;
  }

  get policy() {
    return this.#policy;
  }

  /** The namespace of this limiter's Redis keys (`<prefix><namespace>:<key>:counts`; `""`: none). */
  get namespace() {
    return this.#space.namespace;
  }

  /** Decides a hit from what this process knows (no round trip) and counts it if allowed. */
  limit(key, options) {
    return this.#decide(key, options, false);
  }

  peek(key, options) {
    return this.#decide(key, options, true);
  }

  async #decide(key, options, peek) {
    const keys = keysOf(key);
    const { cost } = callOptions(options);
    validateKeys(keys); // before any read for a key that could never be decided
    const now = options?.now ?? (await this.#time());
    await this.#firstSight(keys, now);
    this.#wasm.decide(keys, now, cost, peek);
    if (!peek) this.#schedule();
    return readDecision(this.#wasm.outPtr, this.#names, keys, extrasOutView());
  }

  /** Counters synced across processes only ever grow: a refund cannot be merged. */
  async refund() {
    throw unsupported("refund");
  }

  /** A reservation is a ledger in the key's state; synced window counters hold none. */
  async reserve() {
    throw unsupported("reserve", "hold no reservations");
  }

  async settle() {
    throw unsupported("settle");
  }

  async reset() {
    throw unsupported("reset");
  }

  /**
   * Pushes this process's diffs and reads back the merged counts now (the timer does it every
   * `syncRate` ms). Resolves once done; a failure keeps the diffs for the next sync and is
   * reported to the store's `onError`, never thrown.
   */
  sync(now) {
    if (this.#store._syncRate < 0) return Promise.resolve();
    this.#syncing ??= this.#sync(now).finally(() => {
      this.#syncing = null;
    });
    return this.#syncing;
  }

  /** Stops the timer and pushes what is left. */
  async close() {
    this.#closed = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.sync();
  }

  #schedule() {
    if (this.#timer !== null || this.#closed || this.#store._syncRate < 0) return;
    this.#timer = setInterval(() => this.sync(), this.#store._syncRate);
    this.#timer.unref?.();
  }

  async #time() {
    try {
      const t = this.#store._now(); // a number from the local clock; a promise for Redis's
      return typeof t === "number" ? t : await withTimeout(t, this.#store._timeoutMs);
    } catch (e) {
      this.#store._onError?.(e);
      return this.#store._local();
    }
  }

  /**
   * A key this process has not seen yet starts from its merged counts in Redis (one round
   * trip, once), not from zero: otherwise every process could admit a whole limit of every
   * new key before its first sync.
   */
  async #firstSight(keys, now) {
    if (this.#store._syncRate < 0) return;
    const fresh = keys.filter((k) => !this.#seen.has(k));
    if (fresh.length === 0) return;
    try {
      const client = this.#store._client;
      const replies = await withTimeout(Promise.all(fresh.map((k) => client.send(["HGETALL", this.#rkey(k)]))), this.#store._timeoutMs);
      this.#apply(fresh, replies, 0, now);
    } catch (e) {
      this.#store._onError?.(e); // decide from what this process knows; the next sync catches up
      return;
    }
    for (const k of fresh) {
      this.#seen.set(k, true);
      if (this.#seen.size > this.#store._maxCachedKeys) this.#seen.delete(this.#seen.keys().next().value);
    }
  }

  #rkey(key) {
    return this.#space.key(key) + ":counts";
  }

  async #sync(at) {
    const now = at ?? (await this.#time());
    const w = this.#wasm;
    const client = this.#store._client;
    const diffs = w.takeDiffs(now); // the core's layout::SYNC_DIFF per diff
    const batch = [];
    if (diffs.length > 0) {
      const keys = w.diffKeys();
      const ttl = new Map();
      for (let i = 0; i < diffs.length; i += SYNC_DIFF_LEN) {
        const rkey = this.#rkey(keys[diffs[i]]);
        const start = (BigInt(diffs[i + 2]) << 32n) | BigInt(diffs[i + 3]);
        batch.push(["HINCRBY", rkey, `${diffs[i + 1]}:${start}`, String(diffs[i + 4])]);
        ttl.set(rkey, Math.max(ttl.get(rkey) ?? 0, diffs[i + 5]));
      }
      for (const [rkey, exp] of ttl) batch.push(["PEXPIRE", rkey, String(Math.max(1, Math.ceil(exp - now)))]);
    }
    const held = w.keys();
    const pushed = batch.length;
    for (const k of held) batch.push(["HGETALL", this.#rkey(k)]);
    if (batch.length === 0) return;
    let replies;
    try {
      // One pipelined round trip: both clients write commands issued together back to back.
      replies = await withTimeout(Promise.all(batch.map((c) => client.send(c))), this.#store._timeoutMs);
    } catch (e) {
      w.restore(); // counted again at the next sync (at worst twice: the safe side)
      this.#store._onError?.(e);
      return;
    }
    this.#apply(held, replies, pushed, now);
  }

  /**
   * Replaces the merged counts of `held` with HGETALL replies (`replies[offset + i]` for
   * `held[i]`), and deletes the fields of windows no decision reads any more.
   */
  #apply(held, replies, offset, now) {
    const packed = []; // 5 numbers per entry, see wasm/src/synced.rs
    const fields = [];
    for (let k = 0; k < held.length; k++) {
      for (const [field, value] of entries(replies[offset + k])) {
        const colon = field.indexOf(":");
        const limit = Number(field.slice(0, colon));
        const count = Number(value);
        const digits = field.slice(colon + 1);
        if (colon < 1 || !Number.isInteger(limit) || !Number.isSafeInteger(count) || count < 0 || !/^[0-9]{1,20}$/.test(digits)) continue;
        const start = BigInt(digits);
        packed.push(k, limit, Number(start >> 32n), Number(start & 0xffffffffn), count);
        fields.push(field);
      }
    }
    const stale = this.#wasm.applyMerged(held, Float64Array.from(packed), now);
    const keyIndex = (i) => packed[5 * i];
    const drop = new Map();
    for (let i = 0; i < stale.length; i++) {
      if (stale[i] !== 1) continue;
      const rkey = this.#rkey(held[keyIndex(i)]);
      if (!drop.has(rkey)) drop.set(rkey, ["HDEL", rkey]);
      drop.get(rkey).push(fields[i]);
    }
    const client = this.#store._client;
    for (const cmd of drop.values()) client.send(cmd).catch((e) => this.#store._onError?.(e));
  }
}

/** What the synced counters cannot do: `method` refused (`unsupported_in_sync_mode`), and why. */
function unsupported(method, why = "only grow") {
  return optionError("unsupported_in_sync_mode", "syncRate", `${method} is not supported with syncRate != 0 (merged counters ${why}); use syncRate 0`, TypeError);
}

/** HGETALL's reply as [field, value] pairs: a flat array (RESP2) or an object/Map (RESP3). */
function entries(reply) {
  if (reply === null || reply === undefined) return [];
  if (Array.isArray(reply)) {
    const out = [];
    for (let i = 0; i + 1 < reply.length; i += 2) out.push([String(reply[i]), reply[i + 1]]);
    return out;
  }
  if (reply instanceof Map) return [...reply].map(([f, v]) => [String(f), v]);
  return Object.entries(reply);
}
