// The limiter a `RedisStore` returns (exact mode, `syncRate` 0 or absent): every key's state
// is the core's encoded bytes in one Redis string. A hit is decided by the wasm core over the
// bytes this process last saw, then written with one compare-and-swap script call
// (redis-script.js); when another writer got there first, the script answers with the current
// bytes and the core decides again over them. So the common case is one round trip, a
// conflict one more, and no algorithm exists anywhere but in the core: every round is the
// core's compare-and-swap step (`StorePolicy.step`, `tollgate::store::cas_step`), and one
// loop (`#swapLoop`) drives it for one key's batch of hits, a several-key hit and a refund.
import { durationMs, validateKeys } from "../../wasm.js";
import { keysOf, callOptions, optionError, stringKey, stateBytes } from "../../contract/options.js";
import { readDecision } from "../../limiter/decision.js";
import { extras } from "../../extras.js";
import { extrasOutView } from "../../limiter/extras-view.js";
import { RedisStateError, RedisUnavailableError, withTimeout, sharedTimeout } from "./redis-errors.js";
import { keySlot } from "./redis-client.js";
import { toValue } from "./redis-value.js";
import { invalidState } from "../../limiter/memory-limiter.js";
import { reserveInStore, settleInStore } from "../../limiter/reserve.js";
import { Bell, acquireInStore, leaseInStore, noAnonymousSlots } from "../../limiter/concurrency.js";
import { StoreLimiter } from "../store-limiter.js";
// A `SwapRun`'s codes: what to send after a decision, what Redis answered, how the run goes on.
import { SWAP_FINAL, SWAP_WRITE, SWAP_SWAPPED, SWAP_GUARDED, SWAP_OTHER_BYTES, SWAP_CONTENDED, ANSWER_CONTENTION } from "../../contract/contract.generated.js";


/** Marks an error that must reach the caller whatever the failure mode (bad input, bad state). */
class Passthrough {
  constructor(error) {
    this.error = error;
  }
}

/**
 * Other writers won every attempt: Redis answered, so this is not an outage. Carries the bytes
 * Redis answered with last, over which the hit is denied (see `#contended`).
 */
class Contention {
  constructor(states) {
    this.states = states;
  }
}

export class RedisLimiter extends StoreLimiter {
  #store;
  #policy;
  #wasm;
  #names;
  /**
   * The core's store protocol for this limiter's swaps (`StoreRetry`, `tollgate::store_protocol`):
   * the attempt cap, and the contention estimates that size the pauses, shared by its runs.
   */
  #protocol;
  /**
   * Redis key -> the bytes last seen there (`null`: absent) and when Redis last confirmed them
   * (the store's local clock); bounded, oldest confirmation out first. The core's blocked-key
   * cache (`tollgate::blocked`, the Worker's too), in the extras module.
   */
  #cache;
  /** Redis key -> this process's hits on it waiting for the next batch (see #enqueue). */
  #queues = new Map();
  /** The limiter's namespace and its Redis keys (redis-store.js `keySpace`). */
  #space;
  /** Whether the policy holds a concurrency limit (its hits are `acquire`s). */
  #concurrent;

  /** @internal Use `new RateLimiter({ ..., store })` or `store.limiter(options)`. */
  constructor(store, policy, options, space) {
    super(store, options);
    this.#store = store;
    this.#space = space;
    this.#policy = policy;
    this.#wasm = policy._store;
    this.#names = policy.names;
    this.#concurrent = this.#wasm.hasConcurrency();
    this.#cache = new (extras().BlockedCache)(Math.min(store._maxCachedKeys, 0xffff_ffff), store._blockedCacheMs);
    // 0: the core's default cap.
    this.#protocol = new (extras().StoreRetry)(Math.min(store._maxAttempts ?? 0, 0xffff_ffff));
  }

  /** The low-level policy this limiter decides by. */
  get policy() {
    return this.#policy;
  }

  /** The namespace of this limiter's Redis keys (`<prefix><namespace>:<key>`; `""`: none). */
  get namespace() {
    return this.#space.namespace;
  }

  /** The Redis key of `key`. @internal */
  _key(key) {
    return this.#space.key(key);
  }

  /** Decides a hit and counts it if allowed; resolves to the decision (on a concurrency policy, `acquire`'s). */
  limit(key, options) {
    if (this.#concurrent) return this.acquire(key, options);
    return this.#run(key, options, false, (keys, rkeys, now, cost, hit) =>
      rkeys.length === 1 ? this.#enqueue(keys[0], rkeys[0], now, cost, hit) : this.#limit(keys, rkeys, now, cost, hit),
    );
  }

  /** The decision `limit` would make, counting nothing (reads the keys: one round trip). */
  peek(key, options) {
    return this.#run(key, options, true, async (keys, rkeys, now, cost) => {
      const states = await this.#read(rkeys);
      this.#decodeOr(() => this.#wasm.peek(states, now, cost), rkeys, states);
      return this.#decision(keys);
    });
  }

  /** Gives back `cost` units, never beyond fresh. */
  async refund(key, options) {
    const keys = keysOf(key);
    const { cost } = callOptions(options);
    // A refund is never answered from the cache: other processes' hits may be there.
    await this.#guarded(keys, options, (rkeys, now) => this.#swapWith(rkeys, (states) => this.#wasm.step(states, now, cost, true), now, false));
  }

  /** A hit of the estimate `cost`, decided as `limit`, opening a reservation (reserve.js, docs/reserve.md). */
  reserve(key, options) {
    if (this.#wasm.hasConcurrency()) return Promise.resolve().then(() => noAnonymousSlots("reserve"));
    return reserveInStore(this.#wasm, key, options, this.#hit, (rkeys, step, now) => this.#swapWith(rkeys, step, now, true), this.#decision);
  }

  /** Settles a reservation with the actual cost (reserve.js); rejects with its error, changing nothing. */
  settle(reservation, actual, options) {
    const guarded = (keys, o, op) =>
      this.#guarded(keys, o, async (rkeys, now) => {
        await this.#read(rkeys); // the bytes Redis holds: never "unknown" over a stale cache
        return op(rkeys, now);
      });
    return settleInStore(this.#wasm, reservation, actual, options, guarded, this.#swapFresh, this.#decision);
  }

  /**
   * A hit decided as `limit` that, when admitted, holds a slot of every concurrency limit under
   * the decision's `lease` (concurrency.js, docs/concurrency.md). Its denials are never answered
   * from this process's cache: other processes' releases free slots at any time.
   */
  acquire(key, options) {
    return acquireInStore(this.#wasm, key, options, this.#hit, this.#swapFresh, this.#decision, this.#line);
  }

  /** `acquire`'s waiters in line (maxQueue, maxWait): woken when this process frees a slot. */
  #line = { bell: new Bell(), ofText: durationMs, release: (token) => this.release(token) };

  /** Frees a lease's slots on every key: the keys' figures with `released` (false: nothing to free). */
  release(lease, options) {
    return this.#lease("release", lease, options).then((d) => {
      if (d.released) this.#line.bell.ring();
      return d;
    });
  }

  /** Extends a live lease: the keys' figures with `expiresAt`; rejects `unknown_lease` or `invalid_lease`, changing nothing. */
  renew(lease, options) {
    return this.#lease("renew", lease, options);
  }

  #lease(op, lease, options) {
    // A renewal refuses a lease it does not find: it reads the bytes Redis holds first (one
    // round trip more, as a settlement), never "unknown" over what this process forgot. A
    // release that finds nothing asks Redis anyway (its confirmation), so it needs no read.
    const guarded = (keys, o, run) =>
      this.#guarded(keys, o, async (rkeys, now) => {
        if (op === "renew") await this.#read(rkeys);
        return run(rkeys, now);
      });
    return leaseInStore(this.#wasm, op, lease, options, guarded, this.#swapFresh, this.#decision);
  }

  /** `op(rkeys, now)` for `keys`, checked, under `#guard`; `now` is the caller's, else the store's clock. */
  #guarded(keys, options, op) {
    validateKeys(keys);
    const rkeys = keys.map((k) => this.#space.key(k));
    checkSlots(this.#store, keys, rkeys);
    return this.#guard(rkeys, async () => op(rkeys, options?.now ?? (await this.#store._now())));
  }

  /** `#swapLoop` of `call(states)`, a `StorePolicy` step answering the bytes to write (`null`: none). */
  #swapWith(rkeys, call, now, trustCache) {
    return this.#swapLoop(rkeys, (states) => this.#step(rkeys, states, call, now), trustCache, {}, now);
  }

  /** What reserve.js and concurrency.js drive: the decision the core wrote for `keys`, a hit's run, a swap past the cache. */
  #decision = (keys) => readDecision(this.#wasm.outPtr, this.#names, keys, extrasOutView());
  #hit = (k, o, decide) => this.#run(k, o, false, decide);
  #swapFresh = (rkeys, step, now) => this.#swapWith(rkeys, step, now, false);

  /** Forgets the key(s) in Redis. */
  async reset(key) {
    const keys = keysOf(key);
    validateKeys(keys);
    const rkeys = keys.map((k) => this.#space.key(k));
    await this.#guard(rkeys, async () => {
      for (const k of rkeys) this.#cache.delete(k);
      const client = this.#store._client;
      // On a cluster, one DEL per key: the keys of a reset need not share a slot.
      if (this.#store._cluster) await Promise.all(rkeys.map((k) => client.send(["DEL", k])));
      else await client.send(["DEL", ...rkeys]);
    });
  }

  /** The key's state as the core's bytes (`null`: fresh), as the in-memory limiter's `export`. */
  async export(key) {
    const rkey = this.#space.key(checkStateKey(key));
    return this.#guard([rkey], async () => {
      const [state] = await this.#read([rkey]);
      if (state !== null) this.#decodeOr(() => this.#policy.validateState(state), [rkey], [state]);
      return state;
    });
  }

  /**
   * Replaces the key's state with `state` (bytes from any store's `export`; `null`: fresh),
   * kept until it is fresh again. Bytes that are not a state of this policy are refused as by
   * the in-memory limiter (`invalid_state`) and change nothing.
   */
  async import(key, state) {
    const rkey = this.#space.key(checkStateKey(key));
    stateBytes(state);
    let expiresAt = 0;
    if (state !== null) {
      try {
        expiresAt = this.#wasm.stateExpiresAt(state);
      } catch (e) {
        throw invalidState(e);
      }
    }
    await this.#guard([rkey], async () => {
      const ttl = Math.ceil(expiresAt - (await this.#store._now()));
      this.#cache.delete(rkey);
      const client = this.#store._client;
      if (ttl > 0) await client.send(["SET", rkey, toValue(state), "PX", String(ttl)]);
      else await client.send(["DEL", rkey]);
    });
  }

  // --- the decision --------------------------------------------------------------------------

  /**
   * Shared by limit and peek: checks input, takes the time, applies the failure mode. Answers
   * one promise, which the decision settles itself (`#decideAt`): a queued hit's answer reaches
   * its caller without promise hops between.
   */
  #run(key, options, peek, decide) {
    let keys, cost, rkeys;
    try {
      keys = keysOf(key);
      cost = callOptions(options).cost;
      checkKeys(keys);
      rkeys = keys.map((k) => this.#space.key(k));
      checkSlots(this.#store, keys, rkeys);
    } catch (e) {
      return Promise.reject(e);
    }
    let t;
    try {
      // The local clock answers at once; Redis's (clock: "redis") may ask TIME first.
      t = options?.now ?? this.#store._now();
    } catch (e) {
      t = Promise.reject(e);
    }
    if (typeof t === "number") return this.#decideAt(keys, rkeys, t, cost, peek, decide);
    return this.#runAt(keys, rkeys, t, cost, peek, decide);
  }

  /** `#run` once the clock `t` (a promise) has answered. */
  async #runAt(keys, rkeys, t, cost, peek, decide) {
    let now;
    try {
      now = await withTimeout(t, this.#store._timeoutMs);
    } catch (e) {
      return this.#degrade(keys, rkeys, this.#store._local(), cost, peek, e);
    }
    return this.#decideAt(keys, rkeys, now, cost, peek, decide);
  }

  /**
   * `decide(keys, rkeys, now, cost, hit)` under the store's timeout, its failures through the
   * failure mode. `decide` answers a promise of the decision, or nothing and settles `hit`
   * itself (`hit.settle(decision)`, `hit.fail(error)`: a queued hit, `#enqueue`).
   */
  #decideAt(keys, rkeys, now, cost, peek, decide) {
    // `hit.abandoned`: the caller was answered by the failure mode (timeout); a queued hit is
    // then not sent late.
    const hit = { abandoned: false, done: false, settle: null, fail: null, track: null };
    const started = performance.now();
    return new Promise((resolve, reject) => {
      // One timer for the hits begun together (a process's hits in flight start as one batch's answers settle).
      const settled = sharedTimeout(this.#store._timeoutMs, (e) => hit.fail(e));
      hit.settle = (v) => {
        if (hit.done) return;
        hit.done = true;
        settled();
        resolve(v);
      };
      hit.fail = (e) => {
        if (hit.done) return;
        hit.done = true;
        hit.abandoned = true;
        settled();
        try {
          // Out of time after Redis answered a lost race while this hit waited: contention, not an
          // outage (a conflict from before it, then silence, is an outage).
          const track = hit.track;
          if (e instanceof RedisUnavailableError && track?.conflict != null && track.conflictAt >= started && track.conflict.length === rkeys.length) {
            resolve(this.#contended(keys, track.conflict, now, cost));
          } else resolve(this.#degrade(keys, rkeys, now, cost, peek, e));
        } catch (x) {
          reject(x);
        }
      };
      let p;
      try {
        p = decide(keys, rkeys, now, cost, hit);
      } catch (e) {
        return hit.fail(e);
      }
      if (p !== undefined) Promise.resolve(p).then(hit.settle, hit.fail);
    });
  }

  /**
   * One key's hits from this process are decided in arrival order, in batches: while one
   * compare-and-swap is in flight, the hits that arrive queue up; then the core decides all of
   * them one after another over the running state (exactly as in memory), and one
   * compare-and-swap writes the result. On a conflict the whole batch, with the hits that
   * queued meanwhile, is decided again over the bytes Redis answered with. So a hot key costs
   * one round trip per batch, not per hit, and this process's hits never conflict with each
   * other.
   */
  #enqueue(key, rkey, now, cost, hit) {
    let queue = this.#queues.get(rkey);
    if (queue === undefined) {
      // `conflict`: the bytes Redis last answered a lost race with (at `conflictAt`), while
      // this queue drains.
      queue = { hits: [], conflict: null, conflictAt: 0 };
      this.#queues.set(rkey, queue);
      queueMicrotask(() => this.#drain(rkey, queue));
    }
    hit.key = key;
    hit.now = now;
    hit.cost = cost;
    hit.track = queue;
    queue.hits.push(hit);
  }

  async #drain(rkey, queue) {
    while (queue.hits.length > 0) {
      const batch = [];
      try {
        await this.#decideBatch(rkey, queue, batch);
      } catch (e) {
        for (const h of batch) {
          if (e instanceof Contention) h.settle(this.#contended([h.key], e.states, h.now, h.cost));
          else h.fail(e);
        }
      }
    }
    this.#queues.delete(rkey);
  }

  /** Decides the queued hits (moved into `batch`, which grows as more queue) and swaps once. */
  async #decideBatch(rkey, queue, batch) {
    const w = this.#wasm;
    const rkeys = [rkey];
    for (const h of queue.hits.splice(0)) if (!h.abandoned) batch.push(h);
    if (batch.length === 0) return;
    let results;
    // `redo`: Redis applied this batch's guard over other bytes; decide the same hits again
    // over them (none joins or leaves: every one was written), for their exact figures.
    const step = (start, redo) => {
      if (!redo) {
        // Hits that queued while the last attempt was in flight join; hits whose caller gave
        // up (timed out and was answered) leave, so that they are not counted.
        for (const h of queue.hits.splice(0)) batch.push(h);
        for (let i = batch.length - 1; i >= 0; i--) if (batch[i].abandoned) batch.splice(i, 1);
      }
      results = new Array(batch.length);
      // The core decides the hits one after another over bytes it keeps between the calls
      // (`batchBegin`, `batchStep`): one wasm call per hit, and the bytes cross once each way.
      w.batchBegin(start[0]);
      let changedAt = null;
      const out = w.outPtr;
      for (let i = 0; i < batch.length; i++) {
        const h = batch[i];
        let changed;
        try {
          // Each step after the first joins the guard of the ones before (the core's guard of
          // the whole batch; none once a hit is denied or fails).
          changed = w.batchStep(h.now, h.cost, i > 0);
        } catch (e) {
          // This hit's own error (a cost that never fits, a bad `now`) is this hit's alone;
          // bytes that are not state fail the whole batch.
          const err = this.#stateError(e, rkeys, start);
          if (err !== null) throw new Passthrough(err);
          results[i] = new Passthrough(e);
          continue;
        }
        results[i] = readDecision(out, this.#names, ONE, extrasOutView());
        // A denial changes the state only when it starts a penalty's block: then it is written too.
        if (changed) changedAt = h.now;
      }
      if (changedAt === null) return { write: null, ttls: [0], guard: null };
      const bytes = w.batchBytes() ?? null;
      return { write: [bytes], ttls: [ttlOf(bytes, w.batchExpiresAt, changedAt)], guard: guardText(w.lastGuard()) };
    };
    let latest = -Infinity;
    for (const h of batch) latest = Math.max(latest, h.now);
    // The earliest time of the hits a step decided (read after each step: hits join on a retry).
    const earliest = () => {
      let at = Infinity;
      for (const h of batch) at = Math.min(at, h.now);
      return at;
    };
    await this.#swapLoop(rkeys, step, true, queue, latest, earliest);
    for (let i = 0; i < batch.length; i++) {
      const r = results[i];
      if (r instanceof Passthrough) batch[i].fail(r);
      else batch[i].settle(r);
    }
  }

  async #limit(keys, rkeys, now, cost, hit) {
    let decision;
    const step = (states) => {
      const next = this.#step(rkeys, states, (s) => this.#wasm.step(s, now, cost, false), now);
      decision = readDecision(this.#wasm.outPtr, this.#names, keys, extrasOutView());
      // The core's step changed the bytes (an admitted hit, or a denial that starts a block).
      return next;
    };
    hit.track = hit;
    await this.#swapLoop(rkeys, step, true, hit, now, () => now);
    return decision;
  }

  /** The core's step `call(states)`: what to write (`null`: nothing) and each key's TTL. */
  #step(rkeys, states, call, now) {
    const write = this.#decodeOr(() => call(states), rkeys, states);
    if (write === null) return { write: null, ttls: null };
    const expires = this.#wasm.lastExpiresAt();
    return { write, ttls: write.map((s, i) => ttlOf(s, expires[i], now)) };
  }

  /**
   * The one compare-and-swap loop, a driver of the core's steps (`SwapRun`,
   * `tollgate::store_protocol`). `step(states)` decides over the bytes believed to be in Redis
   * and answers `{ write, ttls }` (`write` null: nothing changed); the run says what to send:
   * the write (swapped in if Redis still holds those bytes), the cached bytes for themselves
   * (a confirmation, unless Redis confirmed them within `blockedCache` and `trustCache`), or
   * nothing (the decision is final). Redis answers with what it holds when it did not write;
   * the run then says to decide again over that (after the pause it sizes by how contended
   * this limiter's swaps are) or that other writers won every time (`maxAttempts`), and
   * `Contention` is thrown. Every answer Redis gives to a lost race is kept in
   * `track.conflict`: a decision that runs out of time after one was refused by contention,
   * not by an outage. A write with a guard (the core's, src/guard.rs) that Redis applied over
   * other bytes is not a lost race: `step(current, true)` decides the same hits again over the
   * bytes Redis held, which gives the bytes Redis wrote. `earliest()` (absent: not used): the
   * earliest time of the hits the last step decided; bytes that decide like a fresh key by then
   * are sent as "these or none" (`#fresh`).
   */
  async #swapLoop(rkeys, step, trustCache, track, latest, earliest) {
    let states = rkeys.map((k) => this.#cached(k));
    // Begun after the first step: whether a denial over the cached bytes may stand matters
    // only when that step writes nothing (`SwapRun.decided`), and `#shut` asks the core's peek,
    // which a batch of admitted hits (every hit on a key being written) then never pays for.
    // Every step that trusts the cache reads its decision within `step` (the peek writes the
    // same output buffer).
    let run = null;
    try {
      for (let next = 0; next >= 0; ) {
        const { write, ttls, guard } = step(states, false);
        run ??= this.#protocol.begin(write === null && trustCache && this.#trusted(rkeys) && this.#shut(states, latest));
        const send = run.decided(write !== null);
        if (send === SWAP_FINAL) return;
        const sent = performance.now();
        const gone = earliest === undefined ? undefined : this.#fresh(states, earliest());
        const current = await (send === SWAP_WRITE ? this.#swap(rkeys, states, write, ttls, guard, gone) : this.#swap(rkeys, states, states, rkeys.map(() => 1), null, gone));
        const guarded = current?.guarded !== undefined;
        next = run.answered(current === null ? SWAP_SWAPPED : guarded ? SWAP_GUARDED : SWAP_OTHER_BYTES, performance.now() - sent, Math.random());
        if (current === null) this.#remember(rkeys, write ?? states);
        else if (guarded) this.#settleGuarded(rkeys, step, current);
        else {
          this.#remember(rkeys, current);
          track.conflict = current;
          track.conflictAt = performance.now();
          if (next === SWAP_CONTENDED) throw new Contention(current);
          states = current;
          if (next > 0) await new Promise((resolve) => setTimeout(resolve, next));
        }
      }
    } finally {
      run?.free();
    }
  }

  /**
   * Redis wrote `written` under the guard over the bytes `guarded` it held: the hits are decided
   * again over those (the core's decisions are exact, and the guard promised they admit every
   * hit and give `written`), and `written` is what Redis holds now.
   */
  #settleGuarded(rkeys, step, { guarded, written }) {
    const stats = this.#store._guarded;
    stats.writes++;
    const { write } = step(guarded, true);
    if (write === null || !sameStates(write, written)) stats.mismatches++;
    this.#remember(rkeys, written);
  }

  /**
   * One key through the batcher (or its own call), several through the all-or-nothing script;
   * `gone[i]`: an absent key i counts as `expected[i]`.
   */
  #swap(rkeys, expected, next, ttls, guard, gone) {
    if (rkeys.length === 1) return this.#store._swapOne(rkeys[0], expected[0], next[0], ttls[0], guard, gone?.[0] === true);
    return this.#store._script.swap(rkeys, expected, next, ttls, undefined, gone);
  }

  /**
   * Which of `states` decide like a fresh key at `at` (`StorePolicy.stateExpiresAt`, the core's
   * `PolicyState::expires_at`), as booleans, or `undefined` for none. Redis drops bytes by
   * their TTL, which ends then: the swap takes an absent key for them (redis-value.js
   * `expected`), since over either the same hits decide the same. Without it a key idle past
   * its TTL (with many processes on a loaded machine, every batch's key) costs a conflict and
   * a second round trip.
   */
  #fresh(states, at) {
    let out;
    for (let i = 0; i < states.length; i++) {
      const s = states[i];
      if (s === null) continue;
      let expires;
      try {
        expires = this.#wasm.stateExpiresAt(s);
      } catch {
        continue; // not a state: the step has reported it
      }
      if (expires <= at) (out ??= states.map(() => false))[i] = true;
    }
    return out;
  }

  /** Runs a wasm call over `states`; bytes that are not state become a `RedisStateError`. */
  #decodeOr(call, rkeys, states) {
    try {
      return call();
    } catch (e) {
      throw new Passthrough(this.#stateError(e, rkeys, states) ?? e);
    }
  }

  /** The `RedisStateError` a wasm error means, if it is about the state bytes; else `null`. */
  #stateError(e, rkeys, states) {
    if (!(e instanceof TypeError && e.message.startsWith("state:"))) return null;
    for (let i = 0; i < states.length; i++) {
      if (states[i] === null) continue;
      try {
        this.#policy.validateState(states[i]);
      } catch (bad) {
        this.#cache.delete(rkeys[i]);
        return new RedisStateError(bad.message.replace(/^state: /, ""), this.#space.namespace);
      }
    }
    return null;
  }

  /** What the failure mode makes of an error; input and state errors always reach the caller. */
  #degrade(keys, rkeys, now, cost, peek, e) {
    if (e instanceof Passthrough) throw e.error;
    if (e instanceof Contention) return this.#contended(keys, e.states, now, cost);
    if (e instanceof RedisStateError) {
      for (const k of rkeys) this.#cache.delete(k);
      throw e.within(this.#space.namespace);
    }
    // The write may or may not have happened: forget what this process thought was there.
    for (const k of rkeys) this.#cache.delete(k);
    return this._outage(e, unavailable(e), keys, now, cost, peek);
  }

  /**
   * Other writers kept winning, but Redis answered: the hit is denied (never admitted on a
   * guess), with the figures of the last bytes Redis answered with, which is when it could
   * pass if nothing else arrived. The failure mode is not consulted: it is for outages.
   */
  #contended(keys, states, now, cost) {
    // The core's answer (`Answer::contention`), over fresh keys' figures when the last bytes are not this policy's.
    try {
      this.#wasm.unavailable(states, now, cost, ANSWER_CONTENTION, 1);
    } catch {
      this.#wasm.unavailable(keys.map(() => null), now, cost, ANSWER_CONTENTION, 1);
    }
    const d = this.#decision(keys);
    d.degraded = "contention";
    return d;
  }

  #guard(rkeys, op) {
    return withTimeout(op(), this.#store._timeoutMs).catch((e) => {
      if (e instanceof Passthrough) throw e.error;
      if (e instanceof RedisStateError) throw e.within(this.#space.namespace);
      if (e instanceof Contention) {
        throw new RedisUnavailableError(`gave up after ${this.#protocol.maxAttempts} attempts: other writers kept changing the key`);
      }
      for (const k of rkeys) this.#cache.delete(k);
      throw unavailable(e);
    });
  }

  // --- what this process knows ---------------------------------------------------------------

  /**
   * The bytes Redis holds for the keys: a swap that writes nothing, over what this process
   * believes is there (so one round trip either way), which unlike MGET refuses a key of
   * another type (`WRONGTYPE`) instead of reading it as absent.
   */
  async #read(rkeys) {
    const believed = rkeys.map((k) => this.#cached(k));
    const states = (await this.#store._script.swap(rkeys, believed, believed, rkeys.map(() => 1))) ?? believed;
    this.#remember(rkeys, states);
    return states;
  }

  #cached(rkey) {
    return this.#cache.state(rkey) ?? null;
  }

  /** Bytes Redis holds for the keys now (read, or written by this process). */
  #remember(rkeys, states) {
    const at = this.#store._local();
    for (let i = 0; i < rkeys.length; i++) this.#cache.remember(rkeys[i], states[i], at);
  }

  /**
   * Whether every key's cached state, alone, admits no hit at all (not one of cost 1) at
   * `latest`, the latest time of the hits to decide: then no other process can have added a hit
   * since Redis confirmed it (a state only gets more permissive as time passes without hits),
   * so a denial over it has Redis's own figures (`remaining`, `retryAfter`), for any cost. A
   * state that still admits a lighter hit may have taken other processes' hits: a denial
   * over it asks Redis (issue: costs 1, 2, 1, 2 from two processes on 4 per window). Reads
   * the core's peek before the step decides (it writes the same output buffer).
   */
  #shut(states, latest) {
    const w = this.#wasm;
    try {
      for (const s of states) {
        if (s === null) return false;
        w.peek([s], latest, 1);
        if (readDecision(w.outPtr, this.#names, ONE, extrasOutView()).allowed) return false;
      }
      return true;
    } catch {
      return false; // a bad time is the hit's own error, which its step reports
    }
  }

  /** Whether a denial over the keys' cached bytes may stand without asking Redis. */
  #trusted(rkeys) {
    if (this.#store._blockedCacheMs === 0) return false;
    const now = this.#store._local();
    return rkeys.every((k) => this.#cache.trusted(k, now));
  }

}

/** The keys of a one-key decision, for `readDecision`. */
const ONE = [""];

/**
 * The keys as the in-memory limiter takes them. The common case (one short non-empty key) is
 * plainly fine and skips a call into wasm; anything else gets wasm's exact error.
 */
function checkKeys(keys) {
  if (keys.length === 1 && keys[0].length > 0 && keys[0].length <= 85) return; // <= 255 UTF-8 bytes
  validateKeys(keys);
}

/** A key of `export`/`import`: one string, checked as the in-memory limiter checks it. */
function checkStateKey(key) {
  validateKeys([stringKey(key)]);
  return key;
}

/**
 * A failure of Redis (or of the client) as the caller sees it: the client's error, whose
 * message may name a server's address, is only the `cause`.
 */
function unavailable(e) {
  return e instanceof RedisUnavailableError ? e : new RedisUnavailableError("Redis failed (the client's error is the cause)", e);
}

/**
 * On Redis Cluster the keys of one hit go to one script call, all or nothing, so they must share
 * a hash slot: a clear error before any I/O, rather than Redis's CROSSSLOT (which the failure
 * mode would take for an outage). Hash tags group keys: `{user:42}:ip` and `{user:42}:acct`.
 */
function checkSlots(store, keys, rkeys) {
  if (!store._cluster || rkeys.length < 2) return;
  const slot = keySlot(rkeys[0]);
  const i = rkeys.findIndex((k) => keySlot(k) !== slot);
  if (i > 0) {
    throw optionError(
      "invalid_value",
      `keys[${i}]`,
      `keys[${i}] is in another Redis Cluster hash slot than keys[0]: ` +
        "the keys of one hit must share a slot (give them a common hash tag, e.g. \"{user:42}:ip\" and \"{user:42}:acct\")",
      RangeError,
    );
  }
}

/** A guard (`[fields, lo, hi, knee]`, exact integers) as the script reads it (redis-guard.js). */
function guardText(g) {
  return g === null || g === undefined ? null : `${g[0]} ${g[1]} ${g[2]} ${g[3]}`;
}

/** Whether two lists of states (`Uint8Array | null`) hold the same bytes. */
function sameStates(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === null || y === null) {
      if (x !== y) return false;
      continue;
    }
    if (x.length !== y.length || x.some((v, j) => v !== y[j])) return false;
  }
  return true;
}

/** The TTL (ms) of a new state that is fresh again at `expiresAt` (0 for a deleted key). */
function ttlOf(state, expiresAt, now) {
  return state === null ? 0 : Math.max(1, Math.ceil(expiresAt - now));
}
