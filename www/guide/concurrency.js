// The other side: concurrency against rate, live. Each press starts a job that runs a few
// seconds (jobs.js), asked of the guide's rate limit and of the core's concurrency limit; the
// lanes show each limit's answers and the jobs each let run (a bar from start to end).
import { LiveLanes } from "./live-lanes.js";
import { Jobs } from "./jobs.js";

export class ConcurrencyLive extends LiveLanes {
  constructor(root, core, rate, windowMs) {
    super(root, core, { windowMs });
    this.rate = rate;
    this.reset();
  }
  fresh() {
    this.jobs?.free();
    this.jobs = new Jobs(this.core.RateLimiter, this.rate);
  }
  pressFrom() {
    return this.jobs.hits.length;
  }
  decide(now) {
    this.jobs.hit(now);
  }
  lanes() {
    const hits = this.jobs.hits;
    const lane = (name, which) => ({
      name,
      hits: hits.map((h) => ({ at: h.at, allowed: h[which].allowed })),
      spans: hits.filter((h) => h[which].allowed).map((h) => ({ from: h.at, to: h.end })),
    });
    return [lane("Rate 3 / 4 s", "rate"), lane("2 at once", "conc")];
  }
  say() {
    const hits = this.jobs.hits;
    const n = (which, a) => hits.filter((h) => h[which].allowed === a).length;
    const last = hits.at(-1).conc;
    return `Rate limit: ${n("rate", true)} started, ${n("rate", false)} refused. Concurrency limit: ${n("conc", true)} started, ${n("conc", false)} refused; ${last.remaining} of 2 slots free at the last hit.`;
  }
  tape() {
    return { rate: this.rate, log: this.jobs.log.map((s) => ({ ...s })) };
  }
}
