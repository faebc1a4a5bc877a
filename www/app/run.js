// One algorithm deciding a trace in simulated time: a real `RateLimiter` from the tollgate
// package, called with an explicit `now` (start + simulated ms), its answers kept in a Track.
// The level line comes from `peek` (which changes nothing) at regular sample times, so what
// is drawn between hits is also the core's word, not a formula of ours.

import { Track } from "./track.js";

/** Algorithms whose decisions' resetAt is the end of the current window. */
const RESET_IS_WINDOW_END = new Set(["fixed-window", "fixed-window-first-hit"]);
/** Algorithms that count in clock-aligned windows (boundaries at multiples of the window). */
const CLOCK_WINDOWS = new Set(["fixed-window", "sliding-window", "sliding-buckets"]);

export class Run {
  /**
   * @param RateLimiter the package's class
   * @param id algorithm id (params.js ALGORITHMS)
   * @param options RateLimiter options (throws a TypeError/RangeError from the package if bad)
   * @param start epoch ms of simulated time 0
   * @param keys the trace's keys; `focus` the index of the one whose level is drawn
   * @param sampleEvery simulated ms between level samples
   */
  constructor(RateLimiter, { id, options, start, keys, focus, sampleEvery, windowMs }) {
    this.rl = new RateLimiter(options);
    this.id = id;
    this.start = start;
    this.keys = keys;
    this.focus = focus;
    this.sampleEvery = sampleEvery;
    this.windowMs = windowMs;
    this.nextSample = 0;
    this.track = new Track();
    this.clockWindows = CLOCK_WINDOWS.has(id);
  }

  /** Level samples of the focus key at every sample time up to t (peek: no state change). */
  sampleTo(t) {
    const key = this.keys[this.focus];
    for (let s = this.nextSample * this.sampleEvery; s <= t; s = ++this.nextSample * this.sampleEvery) {
      const p = this.rl.peek(key, { now: this.start + s });
      // peek's `remaining` is what would be left after one more hit, so one more is available.
      this.track.level(s, p.allowed ? p.remaining + 1 : 0);
    }
  }

  /** Decides one hit of key index k at simulated time t (not before the previous hit). */
  hit(t, k) {
    this.sampleTo(t);
    const d = this.rl.limit(this.keys[k], { now: this.start + t });
    const i = this.track.push(t, k, d);
    if (k === this.focus) {
      this.track.level(t, d.remaining); // after this hit (a denied hit leaves 0 available)
      if (RESET_IS_WINDOW_END.has(this.id)) {
        this.track.boundary(d.resetAt - this.start - this.windowMs);
        this.track.boundary(d.resetAt - this.start);
      }
    }
    return i;
  }

  /** The headers the package gives for hit i (`modes`: standardHeaders and legacyHeaders). */
  headers(i, modes = {}) {
    return this.rl.headers(this.track.decision(i), { ...modes, now: this.start + this.track.t[i] });
  }

  free() {
    this.rl.free();
  }
}
