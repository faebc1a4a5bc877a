// The limiter a `WorkerStore` returns: every decision is the Worker's (its Durable Object per
// key runs the core), asked over HTTP or a service binding. This file translates: a call into
// a request (`POST /v1/limit` with `key` or `keys`, `/v1/peek`, `/v1/refund`, `/v1/reserve`,
// `/v1/settle`, `/v1/acquire`, `/v1/release`, `/v1/renew`, `DELETE /v1/keys/...`, `GET`/`PUT /v1/keys/.../state`), an answer into the npm decision, an
// outage into the failure mode (as the Redis store: worker-errors.js says what is one), and
// a denied key's state into the core's blocked-key cache (`tollgate::blocked`), so that hits
// on a key known to be blocked are denied here, by the core over that state, marked
// `estimate: true` as the Worker marks its own cache's answers.
import { validateKeys } from "../../wasm.js";
import { keysOf, callOptions, stringKey, stateBytes } from "../../contract/options.js";
import { readDecision, bindingKey } from "../../limiter/decision.js";
import { extras } from "../../extras.js";
import { extrasOutView } from "../../limiter/extras-view.js";
import { Policy } from "../../limiter/policy.js";
import { WorkerUnavailableError, WorkerRequestError, requestError, isOutage } from "./worker-errors.js";
import { resolvePolicy } from "./worker-policy.js";
import { toBase64, fromBase64 } from "./base64.js";
import { reserved, settled, settleArgs } from "../../limiter/reserve.js";
import { SETTLED_FIELDS, LEASE_FIELDS } from "../../contract/contract.generated.js";
import { acquired, leaseArgs, noAnonymousSlots } from "../../limiter/concurrency.js";
import { StoreLimiter } from "../store-limiter.js";

export class WorkerLimiter extends StoreLimiter {
  #store;
  /** The limiter's own options (`null`: the Worker's limits). */
  #own;
  /** `#own` as a policy (`null`: none given), made once: what answers before the Worker's is known. */
  #ownPolicy;
  /** `{ policy, options }` once the Worker's policy is known (and, with own options, matched). */
  #resolved = null;
  #resolving = null;
  /** The core's blocked-key cache over states the Worker answered (null: off). */
  #cache = null;
  /**
   * State reads for the cache still in flight, by key (`close` waits for them). Anything that
   * changes a key here (an admitted hit, refund, reset, import) takes its read away, so that a
   * read answered before the change is never remembered after it.
   */
  #reads = new Map();
  /**
   * The keys of reservations made here, by token, while the blocked-key cache is on (at most
   * MAX_REMEMBERED_RESERVATIONS, the oldest dropped first): settling one drops the keys'
   * cached states, which a settlement changes. A reservation made elsewhere changes states
   * this process never cached from it, as any other process's hits do.
   */
  #reservations = new Map();

  /** @internal Use `new RateLimiter({ ..., store })` or `store.limiter(options)`. */
  constructor(store, own) {
    super(store, own);
    this.#store = store;
    // Own limits are checked now, as every limiter checks its options: the same errors.
    this.#own = own;
    this.#ownPolicy = own === null ? null : new Policy(own);
    if (store._blockedCacheMs > 0 && store._maxCachedKeys > 0) {
      this.#cache = new (extras().BlockedCache)(Math.min(store._maxCachedKeys, 0xffff_ffff), store._blockedCacheMs);
    }
  }

  /** The policy decisions are made by, once known (after the first call that reached the Worker). */
  get policy() {
    return this.#resolved?.policy ?? null;
  }

  /**
   * Decides a hit for `key` (or every key of an array, all or nothing) and counts it if
   * allowed; on a policy with a concurrency limit, `acquire` (docs/concurrency.md).
   */
  limit(key, options) {
    return this.#hit("/v1/limit", key, options, false, (d, body, keys) => {
      if (keys.length === 1) this.#learn(keys[0], d);
      else if (d.allowed) for (const k of keys) this.#forget(k);
      return d;
    });
  }

  /** The decision `limit` would make, counting nothing. */
  peek(key, options) {
    return this.#hit("/v1/peek", key, options, true, (d) => d);
  }

  /** Gives back `cost` units, never beyond fresh. An outage rejects with `WorkerUnavailableError`. */
  async refund(key, options) {
    const keys = keysOf(key);
    validateKeys(keys);
    const { cost } = callOptions(options);
    await this.#forgetting(keys, () => this.#call("POST", "/v1/refund", this.#hitBody(keys, cost, options)));
  }

  /**
   * Decides a hit of the estimate `cost` as `limit` does (`POST /v1/reserve`); when admitted,
   * the decision's `reservation` is the token to `settle` with (`null` when nothing was
   * reserved: a denial, or an outage's failure mode). docs/reserve.md.
   */
  async reserve(key, options) {
    // The policy, once known, is not a promise; an unreachable Worker is the hit's to answer.
    try {
      await this.#policy();
    } catch {}
    if (this.#concurrent()) noAnonymousSlots("reserve");
    const d = await this.#hit("/v1/reserve", key, options, false, (d, body, keys) => {
      reserved(d, typeof body.reservation === "string" ? body.reservation : null);
      if (d.allowed) for (const k of keys) this.#forget(k);
      if (d.reservation !== null) this.#rememberReservation(d.reservation, keys);
      return d;
    });
    // A decision of the failure mode: nothing was reserved at the Worker.
    return "reservation" in d ? d : reserved(d, null);
  }

  /**
   * Closes `reservation` with the `actual` cost (`POST /v1/settle`): the keys' figures after
   * it, with `refunded`, `charged` and `forgiven`. The Worker's refusal (`unknown_reservation`,
   * `invalid_reservation`, `invalid_cost`) is thrown; so is an outage (`WorkerUnavailableError`:
   * nothing was settled, the reservation stays open).
   */
  async settle(reservation, actual, options) {
    const now = settleArgs(reservation, actual, options);
    await this.#policy();
    const body = { reservation, actual };
    if (options?.now !== undefined) body.now = now;
    const b = await this.#forgetting(this.#reservations.get(reservation) ?? [], () => this.#call("POST", "/v1/settle", body));
    this.#reservations.delete(reservation);
    // The keys answered (several keys' answers name theirs in `limits`): one key's answer has no `limits`.
    const d = this.#decision(b, Array.isArray(b.limits) ? [...new Set(b.limits.map((l) => l.key))] : [""]);
    return settled(d, SETTLED_FIELDS.map((f) => b[f]));
  }

  /**
   * Decides a hit as `limit` does (`POST /v1/acquire`); when admitted, every concurrency
   * limit's slot is held by the decision's `lease` (the token to `release` or `renew`), which
   * expires at `expiresAt` (ms); `lease` is `null` when no slot was taken (a denial, a policy
   * without a concurrency limit, an outage's failure mode). docs/concurrency.md.
   */
  async acquire(key, options) {
    const d = await this.#hit("/v1/acquire", key, options, false, (d, body, keys) => {
      for (const k of keys) this.#forget(k);
      const lease = body[LEASE_FIELDS[0]];
      return acquired(d, typeof lease === "string" ? [lease, body[LEASE_FIELDS[1]]] : undefined);
    });
    // A decision of the failure mode: no slot was taken at the Worker.
    return LEASE_FIELDS[0] in d ? d : acquired(d, undefined);
  }

  /**
   * Frees `lease` on every key (`POST /v1/release`): the keys' figures after it, with
   * `released` (`false`: released already, expired, or its key reset; nothing changed). A bad
   * token is thrown (`invalid_lease`); so is an outage (`WorkerUnavailableError`: the slot is
   * held until it is released or expires).
   */
  release(lease, options) {
    return this.#lease("/v1/release", LEASE_FIELDS[2], lease, options);
  }

  /**
   * Extends `lease` to now + `leaseTtl` on every key (`POST /v1/renew`): the keys' figures
   * with the new `expiresAt`. Throws `unknown_lease` (not live: changing nothing),
   * `invalid_lease`, or an outage (`WorkerUnavailableError`).
   */
  renew(lease, options) {
    return this.#lease("/v1/renew", LEASE_FIELDS[1], lease, options);
  }

  /** A release or renewal at the Worker: the keys' figures with the answer's `field`. */
  async #lease(route, field, lease, options) {
    const now = leaseArgs(lease, options);
    await this.#policy();
    const body = { lease };
    if (options?.now !== undefined) body.now = now;
    const b = await this.#call("POST", route, body);
    const keys = Array.isArray(b.limits) ? [...new Set(b.limits.map((l) => l.key))] : [""];
    for (const k of keys) this.#forget(k);
    const d = this.#decision(b, keys);
    d[field] = b[field];
    return d;
  }

  /** Whether the Worker's policy (once known) has a concurrency limit: then `limit` acquires. */
  #concurrent() {
    return this.#resolved !== null && this.#resolved.policy._store.hasConcurrency();
  }

  /** Remembers the keys of a reservation made here, so that settling it drops their cached states. */
  #rememberReservation(token, keys) {
    if (this.#cache === null) return;
    if (this.#reservations.size >= MAX_REMEMBERED_RESERVATIONS) this.#reservations.delete(this.#reservations.keys().next().value);
    this.#reservations.set(token, keys);
  }

  /** Forgets the key(s) at the Worker. An outage rejects with `WorkerUnavailableError`. */
  async reset(key) {
    const keys = keysOf(key);
    validateKeys(keys);
    await this.#forgetting(keys, () => Promise.all(keys.map((k) => this.#call("DELETE", this.#keyPath(k)))));
  }

  /** The key's state as the core's bytes (`null`: fresh), as the in-memory limiter's `export`. */
  async export(key) {
    validateKeys([stringKey(key)]);
    const body = await this.#call("GET", `${this.#keyPath(key)}/state`);
    return body.state === null ? null : fromBase64(body.state);
  }

  /** Replaces the key's state with `state` (bytes from `export`, here or any store; `null`: fresh). */
  async import(key, state) {
    stringKey(key);
    stateBytes(state);
    validateKeys([key]);
    await this.#forgetting([key], () => this.#call("PUT", `${this.#keyPath(key)}/state`, { state: state === null ? null : toBase64(state) }));
  }

  /** Waits for the blocked-key cache's reads in flight (the Worker and the transport are not this limiter's to close). */
  async close() {
    await Promise.allSettled([...this.#reads.values()]);
  }

  // --- a decision ----------------------------------------------------------------------------

  /**
   * A hit (`route`: `/v1/limit`, `/v1/peek` or `/v1/reserve`): the Worker's decision, given
   * to `after(d, body, keys)`; a denial from the blocked-key cache (not for a reservation,
   * which the Worker must open); or, for an outage, the failure mode's decision (`#degrade`).
   */
  async #hit(route, key, options, peek, after) {
    const keys = keysOf(key);
    validateKeys(keys);
    const { cost, now } = callOptions(options);
    let r;
    try {
      await this.#policy();
      if (route === "/v1/limit" && this.#concurrent()) return await this.acquire(key, options);
      // A reservation or a lease is the Worker's to take; a concurrency policy's denial is
      // never cached (releases anywhere free slots at any time).
      const cached = route === "/v1/reserve" || route === "/v1/acquire" || this.#concurrent() ? null : this.#fromCache(keys, now, cost);
      if (cached !== null) return cached;
      r = await this.#store._send("POST", route, this.#hitBody(keys, cost, options));
    } catch (e) {
      return this.#degrade(keys, now, cost, peek, e);
    }
    // Not a decision: an outage goes to the failure mode, a refusal to the caller (#degrade).
    if (typeof r.body?.allowed !== "boolean") return this.#degrade(keys, now, cost, peek, this.#refused(r));
    return after(this.#decision(r.body, keys), r.body, keys);
  }

  /** The body of a hit: the key (or keys), the policy, the cost, and `now` only when the caller gave one (the Worker takes it in TEST_MODE only). */
  #hitBody(keys, cost, options) {
    const body = keys.length === 1 ? { key: keys[0] } : { keys };
    body.policy = this.#store.policy;
    body.cost = cost;
    if (options?.now !== undefined) body.now = options.now;
    return body;
  }

  /** The npm decision of a Worker's decision body (the same names, docs/vocabulary.md). */
  #decision(b, keys) {
    const names = this.#resolved.policy._names;
    const d = {
      allowed: b.allowed,
      limit: b.limit,
      remaining: b.remaining,
      resetAt: b.resetAt,
      retryAfter: b.retryAfter,
      blockedBy: b.blockedBy ?? null,
      limits: Array.isArray(b.limits) ? b.limits : this.#bindingOnly(b, names),
    };
    if (b.estimate === true) d.estimate = true;
    if (typeof b.degraded === "string") d.degraded = b.degraded;
    if (keys.length > 1 && !b.allowed && Array.isArray(b.limits)) {
      // The pair the figures (and headers) are about: the entry that blocked, as in memory.
      const blocked = b.limits.find((l) => !l.allowed && l.name === b.blockedBy);
      if (blocked !== undefined) bindingKey.set(d, blocked.key);
    }
    return d;
  }

  /**
   * `limits` when the Worker sends only the figures of the limit they are about: that limit's
   * entry, named as the Worker names it (`limitName`; the one that blocked, or the policy's only
   * limit, from a Worker without it). None when no limit decided them (a listed answer).
   */
  #bindingOnly(b, names) {
    const name = b.limitName ?? b.blockedBy ?? (names.length === 1 ? names[0] : null);
    if (name === null) return [];
    return [{ name, allowed: b.allowed, limit: b.limit, remaining: b.remaining, resetAt: b.resetAt, retryAfter: b.retryAfter }];
  }

  /** The Worker's policy, fetched once (`GET /v1/policies`) and matched with the limiter's own limits. */
  #policy() {
    if (this.#resolved !== null) return this.#resolved;
    this.#resolving ??= this.#fetchPolicy().finally(() => {
      this.#resolving = null;
    });
    return this.#resolving;
  }

  async #fetchPolicy() {
    const body = await this.#call("GET", "/v1/policies");
    const name = this.#store.policy;
    const described = body.policies?.[name];
    if (described === undefined) {
      throw new WorkerRequestError(400, "unknown_policy", `the Worker has no policy ${JSON.stringify(name)}`, "policy");
    }
    this.#resolved = resolvePolicy(name, described, this.#own);
    return this.#resolved;
  }

  /** One request whose answer must be a success: its JSON body; an error answer or an outage is thrown. */
  async #call(method, path, body) {
    const r = await this.#store._send(method, path, body);
    if (r.status >= 200 && r.status < 300) return r.body;
    throw this.#refused(r);
  }

  /** The error of an answer that is not the one asked for: an outage (`WorkerUnavailableError`), or the Worker's refusal. */
  #refused(r) {
    if (!isOutage(r.status, r.body?.error?.code)) return requestError(r.status, r.body);
    const e = r.body?.error ?? {};
    return new WorkerUnavailableError(`the Worker answered ${r.status} ${e.code ?? ""}: ${e.message ?? ""}`.trim());
  }

  #keyPath(key) {
    return `/v1/keys/${encodeURIComponent(this.#store.policy)}/${encodeURIComponent(key)}`;
  }

  // --- the blocked-key cache -----------------------------------------------------------------

  /**
   * The denial of a one-key hit decided by the core over the key's state the Worker last
   * answered, while that is trusted (`blockedCache` ms); `null`: ask the Worker.
   */
  #fromCache(keys, now, cost) {
    if (this.#cache === null || keys.length !== 1 || !this.#cache.trusted(keys[0], this.#store._now())) return null;
    const w = this.#resolved.policy._store;
    w.peek([this.#cache.state(keys[0]) ?? null], now, cost);
    const d = readDecision(w.outPtr, this.#resolved.policy._names, keys, extrasOutView());
    if (d.allowed) return null;
    d.estimate = true;
    return d;
  }

  /**
   * After the Worker decided a hit: an admission makes the cached state stale (forgotten); a
   * denial (not degraded) reads the key's state in the background and remembers it as
   * confirmed when the read was sent, so the next hits on the key can be denied here.
   */
  #learn(key, d) {
    if (this.#cache === null) return;
    if (d.allowed || d.degraded !== undefined) {
      this.#forget(key);
      return;
    }
    if (this.#reads.has(key)) return;
    const at = this.#store._now();
    const read = this.#store
      ._send("GET", `${this.#keyPath(key)}/state`)
      .then((r) => {
        if (this.#reads.get(key) !== read) return; // the key changed here since: stale
        if (r.status === 200 && (r.body?.state === null || typeof r.body?.state === "string")) {
          this.#cache?.remember(key, r.body.state === null ? null : fromBase64(r.body.state), at);
        } else if (r.status === 404 || r.status === 405) {
          this.#cache = null; // a Worker without the state route: no cache
        }
      })
      .catch(() => {})
      .finally(() => {
        if (this.#reads.get(key) === read) this.#reads.delete(key);
      });
    this.#reads.set(key, read);
  }

  /** Drops what this process knows of `key`'s state, and the read of it in flight. */
  #forget(key) {
    this.#cache?.delete(key);
    this.#reads.delete(key);
  }

  /** `call()`'s answer, the keys' cached states forgotten before it and after it (and what was read while it was on its way). */
  async #forgetting(keys, call) {
    for (const k of keys) this.#forget(k);
    const answer = await call();
    for (const k of keys) this.#forget(k);
    return answer;
  }

  // --- outages -------------------------------------------------------------------------------

  /** What the failure mode makes of an outage (StoreLimiter); anything else (the caller's mistakes) is thrown. */
  #degrade(keys, now, cost, peek, e) {
    if (!(e instanceof WorkerUnavailableError)) throw e;
    for (const k of keys) this.#forget(k);
    return this._outage(e, e, keys, now, cost, peek);
  }

  /** The Worker's policy once known; before, the limiter's own limits (an outage's answer is theirs). @internal */
  _answeringPolicy() {
    return this.policy ?? this.#ownPolicy;
  }
}

/** The most reservations a limiter remembers the keys of (`#reservations`). */
const MAX_REMEMBERED_RESERVATIONS = 4096;
