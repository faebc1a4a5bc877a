// The simulation: one trace, a simulated clock, and every algorithm deciding the same hits in
// lockstep (so the compare view and the single view always agree). Hits that have happened
// are kept on a "tape": the trace's hits up to the clock, plus hits made with the Hit button.
// Work per animation frame is bounded by a time budget; when a frame cannot decide every hit
// that is due, the clock shown lags behind the wanted time until it catches up.

import { ALGORITHMS, limiterOptions } from "./params.js";
import { makeTrace } from "./traffic.js";
import { Run } from "./run.js";

/** Simulated time 0 as epoch ms: midnight UTC, so clock-aligned windows start with it. */
export const START = Date.UTC(2026, 0, 1);

export class Player {
  constructor(RateLimiter) {
    this.RateLimiter = RateLimiter;
    this.runs = [];
    this.trace = null;
    this.traceKey = "";
    this.tapeT = [];
    this.tapeK = [];
    this.next = 0; // next trace hit to play
    this.clock = 0; // simulated ms decided so far
    this.target = 0; // simulated ms the clock should reach
    this.auto = true; // the trace plays; false after Hit until Resume traffic
    this.manualHits = 0; // hits on the tape made with the Hit button
    this.paused = false;
    this.speed = 1;
    this.windowMs = 1000;
    this.version = 0; // bumps on every change, so views know when to redraw
  }

  get traceEnd() {
    const ts = this.trace.times;
    return (ts.length ? ts[ts.length - 1] : 0) + this.windowMs;
  }

  /** True once the trace has played out (and the clock stops), unless Hit took over. */
  get ended() {
    return this.auto && this.next >= this.trace.times.length && this.clock >= this.traceEnd;
  }

  /**
   * Applies the page state. Builds every algorithm's limiter first, the selected one first;
   * if the core refuses an option, throws its error (prefixed with the algorithm) and nothing
   * changes.
   */
  configure(s) {
    this.speed = s.speed;
    // The core checks every option first (the traffic is scaled by limit and window, so they
    // must be sound before a trace is made from them).
    // The selected algorithm first, so a refusal names the one the reader is looking at.
    const order = [...ALGORITHMS].sort((a, b) => (b.id === s.algorithm) - (a.id === s.algorithm));
    for (const a of order) {
      try {
        new this.RateLimiter(limiterOptions(a.id, s)).free();
      } catch (e) {
        e.message = `${a.label}: ${e.message}`;
        throw e;
      }
    }
    const wasEnded = this.trace !== null && this.ended;
    const traceKey = JSON.stringify([s.traffic, s.hits, s.seed, s.limit, s.window]);
    const phase = (Math.ceil(START / s.window) * s.window - START) % s.window;
    const trace =
      traceKey === this.traceKey
        ? this.trace
        : makeTrace({ pattern: s.traffic, n: s.hits, seed: s.seed, limit: s.limit, windowMs: s.window, phase });
    const duration = trace.times.length ? trace.times[trace.times.length - 1] + s.window : s.window;
    const sampleEvery = Math.max(s.window / 50, duration / 20000);
    const runs = [];
    try {
      for (const a of ALGORITHMS) {
        runs.push(
          new Run(this.RateLimiter, {
            id: a.id,
            options: limiterOptions(a.id, s),
            start: START,
            keys: trace.keys,
            focus: trace.focus,
            sampleEvery,
            windowMs: s.window,
          }),
        );
      }
    } catch (e) {
      for (const r of runs) r.free();
      throw e;
    }
    for (const r of this.runs) r.free();
    this.runs = runs;
    this.windowMs = s.window;
    if (trace !== this.trace) {
      // A new trace (pattern, size, seed, limit or window changed): the tape becomes the new
      // trace up to the current clock, and its automatic traffic plays on.
      this.trace = trace;
      this.traceKey = traceKey;
      this.auto = true;
      // A trace that had played out stays played out; otherwise the clock stays where it was.
      this.clock = wasEnded ? this.traceEnd : Math.min(this.clock, this.traceEnd);
      this.target = this.clock;
      this.tapeT = [];
      this.tapeK = [];
      this.manualHits = 0;
      this.next = 0;
      while (this.next < trace.times.length && trace.times[this.next] <= this.clock) {
        this.tapeT.push(trace.times[this.next]);
        this.tapeK.push(trace.keyIdx[this.next]);
        this.next++;
      }
    }
    for (let i = 0; i < this.tapeT.length; i++) for (const r of runs) r.hit(this.tapeT[i], this.tapeK[i]);
    for (const r of runs) r.sampleTo(this.clock);
    this.version++;
  }

  /** Back to time 0 with the trace playing. */
  restart() {
    this.clock = this.target = 0;
    this.tapeT = [];
    this.tapeK = [];
    this.next = 0;
    this.auto = true;
    this.traceKey = ""; // forces fresh limiters and tape on the next configure
  }

  /** Real milliseconds elapsed: moves the wanted time on (not past the trace's end while it plays). */
  advance(realMs) {
    if (this.paused) return;
    this.target += realMs * this.speed;
    if (this.auto) this.target = Math.min(this.target, this.traceEnd);
  }

  /** Decides the trace hits due by the wanted time, for at most `budgetMs` of real time. */
  process(budgetMs = Infinity) {
    const until = performance.now() + budgetMs;
    const { times, keyIdx } = this.trace;
    const before = this.clock;
    let done = 0;
    let reached = this.target;
    while (this.auto && this.next < times.length && times[this.next] <= this.target) {
      if ((++done & 63) === 0 && performance.now() > until) {
        reached = times[this.next - 1];
        break;
      }
      this.play(times[this.next], keyIdx[this.next]);
      this.next++;
    }
    if (reached > this.clock) this.clock = reached;
    if (this.clock !== before || done > 0) {
      for (const r of this.runs) r.sampleTo(this.clock);
      this.version++;
    }
  }

  play(t, k) {
    this.tapeT.push(t);
    this.tapeK.push(k);
    for (const r of this.runs) r.hit(t, k);
  }

  /** The Hit button: stops the automatic traffic and decides one hit of the focus key now. */
  hit() {
    this.process();
    this.auto = false;
    this.play(this.clock, this.trace.focus);
    this.manualHits++;
    this.version++;
  }

  /** Hands the clock back to the trace, from its first hit after now. */
  resumeTraffic() {
    const { times } = this.trace;
    while (this.next < times.length && times[this.next] <= this.clock) this.next++;
    this.auto = true;
    this.version++;
  }

  /** Jumps the wanted time to the trace's end; frames decide the rest within their budget. */
  skipToEnd() {
    if (!this.auto) this.resumeTraffic();
    this.target = Math.max(this.target, this.traceEnd);
  }

  run(id) {
    return this.runs.find((r) => r.id === id);
  }
}
