// What the page draws for one algorithm (or the live Worker): every hit's time, key and
// decision figures, the focus key's level over time and its window boundaries. Typed arrays
// that grow by doubling, so 100,000 hits per algorithm cost a few MB and no garbage per hit.

function grow(a, n) {
  const b = new a.constructor(n);
  b.set(a);
  return b;
}

export class Track {
  constructor() {
    this.n = 0;
    this.t = new Float64Array(1024); // ms after the start
    this.key = new Uint8Array(1024);
    this.allowed = new Uint8Array(1024);
    this.remaining = new Float64Array(1024);
    this.resetAt = new Float64Array(1024); // epoch ms
    this.retryAfter = new Float64Array(1024);
    this.nextUnitAfter = new Float64Array(1024); // ms until one more unit fits (the headers' t)
    this.limit = 0;
    this.allowedCount = 0;
    this.blockedCount = 0;
    // The focus key's available units over time (after each of its hits and at samples).
    this.levelN = 0;
    this.lt = new Float64Array(1024);
    this.lv = new Float64Array(1024);
    this.levelMax = 0;
    /** Window boundaries (ms after the start), ascending, for windowed algorithms. */
    this.boundaries = [];
  }

  push(t, key, d) {
    if (this.n === this.t.length) {
      const m = this.n * 2;
      for (const f of ["t", "key", "allowed", "remaining", "resetAt", "retryAfter", "nextUnitAfter"]) this[f] = grow(this[f], m);
    }
    const i = this.n++;
    this.t[i] = t;
    this.key[i] = key;
    this.allowed[i] = d.allowed ? 1 : 0;
    this.remaining[i] = d.remaining;
    this.resetAt[i] = d.resetAt;
    this.retryAfter[i] = d.retryAfter;
    this.nextUnitAfter[i] = d.limits?.[0]?.nextUnitAfter ?? 0;
    this.limit = d.limit;
    if (d.allowed) this.allowedCount++;
    else this.blockedCount++;
    return i;
  }

  level(t, v) {
    if (this.levelN === this.lt.length) {
      this.lt = grow(this.lt, this.levelN * 2);
      this.lv = grow(this.lv, this.levelN * 2);
    }
    this.lt[this.levelN] = t;
    this.lv[this.levelN++] = v;
    if (v > this.levelMax) this.levelMax = v;
  }

  boundary(t) {
    const b = this.boundaries;
    if (b.length === 0 || t > b[b.length - 1]) b.push(t);
  }

  /** Hit i as the package's Decision shape (docs/js-layer.md), for `RateLimiter.headers`. */
  decision(i, name = "default") {
    const allowed = this.allowed[i] === 1;
    const figures = {
      limit: this.limit,
      remaining: this.remaining[i],
      resetAt: this.resetAt[i],
      retryAfter: this.retryAfter[i],
    };
    return {
      allowed,
      ...figures,
      blockedBy: allowed ? null : name,
      limits: [{ name, allowed, ...figures, nextUnitAfter: this.nextUnitAfter[i] }],
    };
  }

  /**
   * The index of the hit nearest to time t (ms after the start) on key index `lane` (-1: any
   * key), or -1 when there is none.
   */
  nearest(t, lane = -1) {
    let best = -1;
    let dist = Infinity;
    for (let i = 0; i < this.n; i++) {
      if (lane >= 0 && this.key[i] !== lane) continue;
      const d = Math.abs(this.t[i] - t);
      if (d < dist) {
        dist = d;
        best = i;
      }
    }
    return best;
  }
}
