// The bounded FIFO queue of the in-memory limiter's `acquire` (docs/concurrency.md, "Waiting
// in line"): `acquire(key, { maxQueue, maxWait, signal })` waits in order for a slot instead of
// being denied at once. The core decides every admission (the limiter's own `acquire`); this
// module only keeps the waiters of each key in order and asks again for the head when a slot
// may have freed: on a `release` in this process, or at the nearest lease's expiry (the
// denial's `retryAfter`). One process only: waiters of other processes are not in this line.
import { durationMs, optionError, wholeIn } from "../contract/options.js";
import { DEFAULT_MAX_QUEUE, MAX_QUEUE, MAX_WAIT_MS } from "../contract/contract.generated.js";

/** Whether `options` asks `acquire` to wait in line. */
export function queued(options) {
  return options !== undefined && options !== null && typeof options === "object" && (options.maxQueue !== undefined || options.maxWait !== undefined);
}

/**
 * `maxQueue` and `maxWait` of `options` by the core's rules (`tollgate::spec::parse_queue`, its
 * domains in the contract): `{ maxQueue, maxWait }` (ms), or null when neither is given.
 * `ofText`: the wasm module's duration reader.
 */
export function queueOptions(options, ofText) {
  if (!queued(options)) return null;
  const { maxQueue, maxWait } = options;
  return {
    maxQueue: maxQueue === undefined ? DEFAULT_MAX_QUEUE : wholeIn("maxQueue", maxQueue, 0, MAX_QUEUE),
    maxWait: maxWait === undefined ? MAX_WAIT_MS : durationMs("maxWait", maxWait, 0, MAX_WAIT_MS, ofText),
  };
}

export class AcquireQueue {
  /** `decide(key, options)`: the limiter's acquire, now; `ofText`: its duration reader. */
  #decide;
  #ofText;
  /** key's line (the keys joined) -> { waiters: [...], timer }. */
  #lines = new Map();

  constructor(decide, ofText) {
    this.#decide = decide;
    this.#ofText = ofText;
  }

  /**
   * A promise of the decision: admitted at once when no one waits for `key` and the core
   * admits; else in line, admitted in order. Resolves with the core's denial when the line
   * already holds `maxQueue` waiters or `maxWait` passes first; rejects with `signal`'s reason.
   */
  acquire(key, options) {
    const { maxQueue: _q, maxWait: _w, signal, now, ...rest } = options;
    try {
      if (now !== undefined) throw optionError("conflicting_fields", "now", "now cannot be given with maxQueue or maxWait: a waiter in line is woken on the real clock");
      const { maxQueue, maxWait: wait } = queueOptions(options, this.#ofText);
      if (signal?.aborted) return Promise.reject(signal.reason);
      const id = Array.isArray(key) ? key.join("\u0000") : typeof key === "string" ? key : key.key;
      const line = this.#lines.get(id);
      let last;
      if (line === undefined) {
        // No one waits: the core decides now.
        last = this.#decide(key, rest);
        if (last.allowed || maxQueue === 0 || wait === 0) return Promise.resolve(last);
      } else {
        // Someone waits: this arrival never overtakes them. A full line answers the core's
        // latest denial of its head.
        last = line.waiters[0].last;
        if (line.waiters.length >= maxQueue || wait === 0) return Promise.resolve(last);
      }
      return new Promise((resolve, reject) => {
        const l = line ?? this.#open(id);
        const w = { key, rest, resolve, reject, signal, last, timer: null, onAbort: null };
        w.timer = setTimeout(() => this.#leave(l, id, w, () => resolve(w.last)), wait);
        if (signal) {
          w.onAbort = () => this.#leave(l, id, w, () => reject(signal.reason));
          signal.addEventListener("abort", w.onAbort, { once: true });
        }
        l.waiters.push(w);
        this.#pump(l, id);
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A slot may have freed (a release in this process): each line asks again for its head. */
  wake() {
    for (const [id, line] of this.#lines) this.#pump(line, id);
  }

  #open(id) {
    const line = { waiters: [], timer: null };
    this.#lines.set(id, line);
    return line;
  }

  /** Takes `w` out of its line (a timeout or an abort) and ends its wait with `end`. */
  #leave(line, id, w, end) {
    const i = line.waiters.indexOf(w);
    if (i < 0) return;
    line.waiters.splice(i, 1);
    this.#settle(w);
    if (i === 0) this.#pump(line, id); // the next head may be admitted now
    else this.#close(line, id);
    end();
  }

  #settle(w) {
    clearTimeout(w.timer);
    w.signal?.removeEventListener("abort", w.onAbort);
  }

  #close(line, id) {
    if (line.waiters.length > 0) return;
    clearTimeout(line.timer);
    this.#lines.delete(id);
  }

  /** Admits heads in order while the core admits them; then sleeps until a release or the nearest expiry. */
  #pump(line, id) {
    clearTimeout(line.timer);
    line.timer = null;
    while (line.waiters.length > 0) {
      const head = line.waiters[0];
      const d = this.#decide(head.key, head.rest);
      if (!d.allowed) {
        head.last = d;
        line.timer = setTimeout(() => this.#pump(line, id), Math.max(1, Math.ceil(d.retryAfter)));
        return;
      }
      line.waiters.shift();
      this.#settle(head);
      head.resolve(d);
    }
    this.#close(line, id);
  }
}
