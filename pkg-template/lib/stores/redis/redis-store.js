// `RedisStore`: one limit shared by every process of a Node service, its state in Redis.
//
//   const limiter = new RateLimiter({ algorithm: "sliding-window", limit: 100, window: "1m",
//                                     store: new RedisStore(client, { prefix: "rl:" }) });
//   const d = await limiter.limit("user:42");
//
// Redis holds each key's state as the core's opaque bytes; the only script is a
// compare-and-swap (redis-script.js), and every decision is the wasm core's (redis-limiter.js).
// With `syncRate` > 0 or < 0, mergeable window counters are kept locally and synced
// gateway-style instead (redis-synced.js). See docs/redis.md.
import { Policy } from "../../limiter/policy.js";
import { durationMs as durationOfText } from "../../wasm.js";
import { adaptClient } from "./redis-client.js";
import { CasScript } from "./redis-script.js";
import { SwapBatcher } from "./redis-batch.js";
import { RedisClock } from "./redis-clock.js";
import { MAX, durationMs, fail, flagOf, known, objectOf, oneOf, optionError, show, wholeIn } from "../../contract/options.js";
import { STORE_OPTIONS, applyStoreOptions } from "../store-options.js";
import { RedisLimiter } from "./redis-limiter.js";
import { SyncedRedisLimiter } from "./redis-synced.js";
import { MAX_SYNC_MS, REDIS_STORE_FIELDS, RENAMED as CORE_RENAMED } from "../../contract/contract.generated.js";

const CLOCKS = ["local", "redis"];
/** Names spelt differently before (the core's `spec::RENAMED`): refused with what to write (code `renamed`). */
const RENAMED = { sync: CORE_RENAMED.sync };

export class RedisStore {
  /**
   * @param client a connected node-redis (v4+) or ioredis client; the store never closes it
   * @param options see types/redis.d.ts
   */
  constructor(client, options = {}) {
    objectOf(options);
    known(options, [...REDIS_STORE_FIELDS, ...STORE_OPTIONS], "", RENAMED);
    const {
      prefix = "tollgate:",
      namespace,
      clock = "local",
      syncRate = 0,
      maxAttempts,
      batchKeys,
      clockRefreshMs = 1000,
    } = options;
    if (typeof prefix !== "string") throw fail("prefix", prefix, "a string");
    if (namespace !== undefined && typeof namespace !== "string") throw fail("namespace", namespace, "a string");
    if (namespace?.includes("\n")) throw optionError("invalid_value", "namespace", `namespace must not hold a line break, got ${show(namespace)}`);
    const now = applyStoreOptions(this, options, 500);
    oneOf("clock", clock, CLOCKS);
    // 0: every hit decided in Redis; > 0: synced every that many ms; < 0: local only. A
    // duration string is an interval, so longer than zero (as in wrangler.toml).
    this._syncRate = durationMs("syncRate", syncRate, -MAX_SYNC_MS, MAX_SYNC_MS, durationOfText);
    if (batchKeys !== undefined) flagOf("batchKeys", batchKeys);
    // Absent: the core's default (`tollgate::store_protocol::DEFAULT_MAX_ATTEMPTS`).
    this._maxAttempts = maxAttempts === undefined ? undefined : wholeIn("maxAttempts", maxAttempts, 1, MAX);
    const refreshMs = wholeIn("clockRefreshMs", clockRefreshMs, 1, MAX, " of milliseconds");
    this._client = adaptClient(client, this._timeoutMs);
    /** A Redis Cluster client: each command's keys must share a slot (redis-client.js). */
    this._cluster = this._client.cluster;
    if (this._cluster && batchKeys === true) {
      throw optionError("conflicting_fields", "batchKeys", "batchKeys cannot be true with a Redis Cluster client: one script call cannot span hash slots");
    }
    this._prefix = prefix;
    /** The namespace the user named (`""`: none, keys are `<prefix><key>`); `undefined`: each limiter's own. */
    this._namespace = namespace;
    /** This process's clock; `_now` below is the deciding one (Redis's with `clock: "redis"`). */
    this._local = now;
    this._script = new CasScript(this._client);
    // One-key swaps of one tick share a script call (redis-batch.js); without, each is its own.
    // Off on a cluster: the keys in flight almost never share a slot, and the client pipelines
    // per node itself.
    const batcher = (batchKeys ?? !this._cluster) ? new SwapBatcher(this._client) : null;
    this._swapOne = batcher
      ? (key, expected, next, ttl, guard, orAbsent) => batcher.swap(key, expected, next, ttl, guard, orAbsent)
      : (key, expected, next, ttl, guard, orAbsent) => this._script.swap([key], [expected], [next], [ttl], guard, [orAbsent]);
    /**
     * Writes Redis made under a guard (a race lost without a round trip), and those whose
     * bytes the core, deciding again over what Redis held, did not produce (a broken guard:
     * always 0, which the tests assert). For tests and benchmarks. @internal
     */
    this._guarded = { writes: 0, mismatches: 0 };
    const redisClock = clock === "redis" ? new RedisClock(this._client, now, refreshMs) : null;
    this._now = redisClock ? () => redisClock.now() : () => now();
    this.clock = clock;
  }

  /**
   * A limiter over this store (what `new RateLimiter({ ..., store })` returns): exact over
   * Redis, or synced (`syncRate` != 0, window counters only). Its keys are
   * `<prefix><namespace>:<key>`, the namespace the store's `namespace` option or, by default,
   * the limiter's own (`policyNamespace`): limiters of different policies never share a key.
   */
  limiter(options) {
    const policy = new Policy(options);
    const space = keySpace(this._prefix, this._namespace ?? policyNamespace(policy));
    if (this._syncRate !== 0) return new SyncedRedisLimiter(this, policy, space);
    return new RedisLimiter(this, policy, options, space);
  }
}

/**
 * The default namespace of a limiter: 12 hex digits of the 64-bit FNV-1a hash of its policy's
 * configuration bytes (the core's `policy_codec::encode_policy`: equal for configurations that
 * decide alike, and for nothing else). Deterministic, so every process of a service with the
 * same options shares one namespace, and limiters of other options (another limit, window,
 * algorithm, limit name or penalty) have another.
 */
export function policyNamespace(policy) {
  let h = 0xcbf29ce484222325n;
  for (const b of policy._wasm.configBytes()) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, "0").slice(0, 12);
}

/** The namespace of a limiter's keys and its Redis key of a key (`""`: no namespace). @internal */
function keySpace(prefix, namespace) {
  const full = prefix + (namespace === "" ? "" : `${namespace}:`);
  return { namespace, key: (key) => full + key };
}
