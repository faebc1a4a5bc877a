// The one timeout rule of every store call on a decision's path (the Redis store's scripts and
// reads, the synced store's rounds, the Worker store's requests): a store is declared
// unavailable only when it has really not answered, never because this process was too busy to
// read its answer (busy is not broken).
//
// Node runs the timers that are due before it polls its sockets. A plain timer that came due
// while the event loop was held (a synchronous loop, a large JSON.parse, a GC pause, a process
// the OS did not run) fires before the reply already waiting in the socket is read, and before
// a request that was still to be written has had any time at all. So a deadline of `ms`:
//
// - counts only time in which this process could run: its timer runs in steps of at most a
//   quarter of `ms` (at least 5 ms), and each step counts for its planned length, not for how
//   late it fired (the process was held meanwhile). A step that fires later than a quarter of
//   `ms` means the process was held for longer than that: the count starts again from then. So
//   the store always gets `ms` of steps that fired on time, in which the process never
//   stopped for longer than two quarters (a step plus its tolerance).
// - gives its verdict one full turn of the event loop after the last step: the poll phase reads
//   the replies received, the clients parse them (in their socket callbacks, or in callbacks
//   those schedule), and the promises they settle run first. A call settled by then is not
//   expired. A turn that itself took longer than a step (the process held inside it, perhaps
//   after its poll) is a late step: the count starts again.
//
// The slack: the verdict comes `ms` after the start, plus how late the steps fired (a few ms
// in all in a process that runs on time; at most a quarter of `ms` each, four or five steps),
// plus that one turn (docs/reliability.md).

/** A monotonic clock in ms. */
const clock = typeof performance === "object" && typeof performance?.now === "function" ? () => performance.now() : () => Date.now();

/**
 * Runs `f` after one full turn of the event loop: past the poll phase that reads the sockets
 * and past the immediates it scheduled (the second `setImmediate` runs in the next turn's check
 * phase). Without `setImmediate` (browsers, workerd), after a zero timer.
 */
const afterTurn = typeof setImmediate === "function" ? (f) => setImmediate(() => setImmediate(f)) : (f) => setTimeout(f, 0);

/** A step of the deadline's timer, and how late one may fire before the process counts as held. */
function stepOf(ms) {
  return Math.max(ms / 4, 5);
}

/** `expire()` once `ms` of this process's own time have passed, unless `clear()` came first. */
export class Deadline {
  #ms;
  #step;
  #expire;
  /** The store's time counted so far: the steps' planned delays, not how late they fired. */
  #counted = 0;
  #planned = 0;
  #due = 0;
  #timer = null;
  #over = false;

  /** @param ms whole milliseconds, at most a timer's 2^31 - 1 @param expire called at most once */
  constructor(ms, expire) {
    this.#ms = ms;
    this.#step = stepOf(ms);
    this.#expire = expire;
    this.#restart(clock());
  }

  /** Stops the deadline: `expire` is not called after this. */
  clear() {
    this.#over = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** The count (re)starts at `now`. */
  #restart(now) {
    this.#counted = 0;
    this.#arm(now, Math.min(this.#step, this.#ms));
  }

  #arm(now, delay) {
    this.#planned = delay;
    this.#due = now + delay;
    this.#timer = setTimeout(() => this.#fired(), delay);
  }

  #fired() {
    this.#timer = null;
    if (this.#over) return;
    const now = clock();
    // Later than a step: the process was held, and none of the time since the count began
    // can be told to be the store's (a request it held may not even be written yet).
    if (now - this.#due > this.#step) return this.#restart(now);
    // On time, or late by less than a step: the step counts, how late it fired does not.
    this.#counted += this.#planned;
    const left = this.#ms - this.#counted;
    // (A timer may fire up to a millisecond early: the loop's clock is whole milliseconds.)
    if (left >= 1) return this.#arm(now, Math.min(this.#step, left));
    afterTurn(() => {
      if (this.#over) return;
      // Held during the turn itself: what arrived meanwhile may not have been polled yet.
      const later = clock();
      if (later - now > this.#step) return this.#restart(later);
      this.#over = true;
      this.#expire();
    });
  }
}

/**
 * Settles as `promise` does, or rejects with `expired()` once a `Deadline` of `ms` expires
 * first (one deadline, no race).
 */
export function withDeadline(promise, ms, expired) {
  return new Promise((resolve, reject) => {
    const deadline = new Deadline(ms, () => reject(expired()));
    Promise.resolve(promise).then(
      (v) => {
        deadline.clear();
        resolve(v);
      },
      (e) => {
        deadline.clear();
        reject(e);
      },
    );
  });
}

/** The open group of `joinSharedDeadline` per `ms`: `{ at, waiting, deadline, over }`. */
const groups = new Map();

/**
 * One call's place under a deadline of `ms` shared by the calls begun within a millisecond of
 * each other (a batch's hits, started as the last batch's answers settle): they share one
 * `Deadline` of `ms + 1`, so none of them gets less than `ms` and a process with many calls in
 * flight runs one timer for them, not one each. When it expires, `expire()` is called for
 * every call of the group not settled yet. Answers `settled()`, which the call runs when it
 * settles (at most once); when the last one has, the timer stops.
 */
export function joinSharedDeadline(ms, expire) {
  const now = clock();
  let group = groups.get(ms);
  if (group === undefined || group.over || now - group.at > 1) {
    const g = { at: now, waiting: new Set(), deadline: null, over: false };
    g.deadline = new Deadline(ms + 1, () => {
      g.over = true;
      for (const f of g.waiting) f();
      g.waiting.clear();
    });
    groups.set(ms, g);
    group = g;
  }
  const g = group;
  g.waiting.add(expire);
  return () => {
    g.waiting.delete(expire);
    // No more calls join it once it is empty: the next one begins its own.
    if (g.waiting.size === 0 && !g.over) {
      g.over = true;
      g.deadline.clear();
    }
  };
}
