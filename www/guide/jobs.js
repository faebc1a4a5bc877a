// Concurrency against rate: each hit starts a job that runs JOB_MS, asked of two limiters at
// once: a rate limit (how many start per window) and the core's concurrency limit (how many run
// at once: `algorithm: "concurrency"`, a lease per admitted job). A job gives its slot back
// (`release`) when it ends, told to the core before any later hit, at the job's end. Every
// `allowed` and figure is a decision's; this file only keeps the leases and the order.

/** How long a job runs (ms). */
export const JOB_MS = 3000;
/** The concurrency limit beside the guide's rate: 2 jobs at once, each lease 10 s unless released. */
export const CONCURRENCY = { algorithm: "concurrency", limit: 2, leaseTtl: "10s" };

const figures = (d) => ({ allowed: d.allowed, remaining: d.remaining, retryAfter: d.retryAfter });

export class Jobs {
  /** `RateLimiter`: the core's limiter class; `rate`: the rate limit's options. */
  constructor(RateLimiter, rate) {
    this.rate = new RateLimiter(rate);
    this.slots = new RateLimiter(CONCURRENCY);
    /** Every step in order: { op: "hit", at, end, rate, conc } (each a decision's figures) or { op: "release", at, released }. */
    this.log = [];
    /** The concurrency limit's leases of jobs still running: { end, lease }. */
    this.running = [];
  }

  /** A job asked to start at `now`: the jobs ended by then give their slots back first. */
  hit(now) {
    this.releaseUpTo(now);
    const rate = figures(this.rate.limit("you", { now }));
    const d = this.slots.acquire("you", { now });
    const end = now + JOB_MS;
    if (d.allowed) this.running.push({ end, lease: d.lease });
    const step = { op: "hit", at: now, end, rate, conc: figures(d) };
    this.log.push(step);
    return step;
  }

  /** The jobs that ended by `now` release their leases, in the order they end, each at its end. */
  releaseUpTo(now) {
    this.running.sort((a, b) => a.end - b.end);
    while (this.running.length > 0 && this.running[0].end <= now) {
      const job = this.running.shift();
      const r = this.slots.release(job.lease, { now: job.end });
      this.log.push({ op: "release", at: job.end, released: r.released });
    }
  }

  /** The hits so far. */
  get hits() {
    return this.log.filter((s) => s.op === "hit");
  }

  free() {
    this.rate.free?.();
    this.slots.free?.();
  }
}
