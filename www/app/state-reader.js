// The state that decided a hit, as the core describes it: the key's state just before the hit
// (the bytes `RateLimiter.export` gives), read by the extras module's `describeState`, which
// runs the algorithm's own roll-forward, refill and expiry at the hit's time
// (src/describe.rs). Nothing here computes an algorithm; `fieldsOf` only names the numbers.
//
// The states before each hit come from a second limiter replaying the same hits: forward
// from where it stopped when the hit asked for is later (following the latest hit costs one
// step), from the start when it is earlier (a click back in time).
import { KINDS } from "../vendor/tollgate/web/contract/contract.generated.js";
import { ALGORITHM_PAGES } from "./algorithms.js";

/**
 * Field names per algorithm, by describeState's kind number (the core's `Kind::ALL` order, the
 * generated contract's `KINDS`), in its order (algorithms.js `fields` and `rest`).
 */
const LAYOUT = KINDS.map((kind) => [kind, ALGORITHM_PAGES[kind].fields, ALGORITHM_PAGES[kind].rest]);

/** describeState's numbers as named fields (times stay epoch ms). */
export function fieldsOf(numbers) {
  const [kind, names, rest] = LAYOUT[numbers[0]];
  const f = { kind };
  names.forEach((n, i) => (f[n] = numbers[1 + i]));
  const tail = [...numbers.slice(1 + names.length)];
  if (rest === "entries") f.entries = tail.flatMap((v, i) => (i % 2 === 0 ? [{ at: v, cost: tail[i + 1] }] : []));
  if (rest === "counts") f.counts = tail;
  return f;
}

export class StateReader {
  /**
   * @param RateLimiter the package's class (the page's lite build)
   * @param describeState the extras module's export
   * @param options the RateLimiter options of the run it explains
   */
  constructor(RateLimiter, describeState, options, start, keys) {
    this.RateLimiter = RateLimiter;
    this.describeState = describeState;
    this.options = options;
    this.start = start;
    this.keys = keys;
    this.rl = null;
    this.done = 0; // hits of the track replayed into rl
    this.lastIndex = -1;
    this.last = null;
  }

  /** The fields of the state hit i of `track` found (its key, at its time). */
  before(track, i) {
    // A hit's past never changes (tracks only grow), so the last answer stands.
    if (i === this.lastIndex) return this.last;
    if (this.rl === null || i < this.done) {
      this.rl?.free();
      this.rl = new this.RateLimiter(this.options);
      this.done = 0;
    }
    for (; this.done < i; this.done++) this.rl.limit(this.keys[track.key[this.done]], { now: this.start + track.t[this.done] });
    const key = this.keys[track.key[i]];
    const now = this.start + track.t[i];
    this.lastIndex = i;
    this.last = { ...fieldsOf(this.describeState(this.options, this.rl.export(key), now)), now };
    return this.last;
  }

  free() {
    this.rl?.free();
    this.rl = null;
  }
}
