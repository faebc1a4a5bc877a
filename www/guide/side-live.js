// The ending, live: the seven algorithms at the guide's settings, each a RateLimiter of the core,
// decide the same hits; one lane each. From a fresh start Hit ×4 reads ✓✓✓✗ in every lane.
import { LiveLanes } from "./live-lanes.js";

export class SideLive extends LiveLanes {
  /** `algorithms`: [[id, short name, RateLimiter options]]. */
  constructor(root, core, algorithms, windowMs) {
    super(root, core, { windowMs });
    this.algorithms = algorithms;
    this.reset();
  }
  fresh() {
    this.limiters?.forEach((l) => l.free?.());
    this.limiters = this.algorithms.map(([, , o]) => new this.core.RateLimiter(o));
    this.times = [];
    this.verdicts = this.algorithms.map(() => []);
  }
  pressFrom() {
    return this.times.length;
  }
  decide(now) {
    this.times.push(now);
    this.limiters.forEach((rl, i) => this.verdicts[i].push(rl.limit("you", { now }).allowed));
  }
  lanes() {
    return this.algorithms.map(([, name], i) => ({ name, hits: this.times.map((at, j) => ({ at, allowed: this.verdicts[i][j] })) }));
  }
  say() {
    const marks = (v) => v.slice(this.from).map((a) => (a ? "✓" : "✗")).join("");
    return this.algorithms.map(([, name], i) => `${name} ${marks(this.verdicts[i])} (${this.verdicts[i].filter(Boolean).length} of ${this.times.length} admitted)`).join("; ") + ".";
  }
  tape() {
    return { times: [...this.times], allowed: Object.fromEntries(this.algorithms.map(([id], i) => [id, [...this.verdicts[i]]])) };
  }
}
