// The fixture: every algorithm of the package and a multi-limit policy, and a bursty trace
// of hits over a few keys (seeded, so every run is the same), including weighted hits,
// two-key hits and refunds.

export const T0 = 1_700_000_000_000;

export const CONFIGS = {
  "fixed-window (clock)": { algorithm: "fixed-window", limit: 5, window: "2s" },
  "fixed-window (first-hit)": { algorithm: "fixed-window", align: "first-hit", limit: 5, window: "2s" },
  "sliding-log": { algorithm: "sliding-log", limit: 5, window: "2s" },
  "sliding-window": { algorithm: "sliding-window", limit: 5, window: "2s" },
  "sliding-buckets (precision)": { algorithm: "sliding-buckets", limit: 5, window: "2s", precision: "500ms" },
  "token-bucket": { algorithm: "token-bucket", limit: 4, window: "2s", burst: 6 },
  gcra: { algorithm: "gcra", limit: 5, window: "2s", burst: 3 },
  "multi-limit policy": {
    limits: [
      { algorithm: "sliding-window", limit: 5, window: "2s", name: "short" },
      { algorithm: "fixed-window", limit: 12, window: "10s", name: "long" },
      { algorithm: "gcra", quota: "3/s", name: "smooth" },
    ],
  },
};

/** xorshift32: a tiny seeded generator. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** `n` operations: { op: "limit" | "refund", key: string | string[], now, cost }. */
export function trace(n = 400, seed = 7) {
  const r = rng(seed);
  const keys = ["alice", "bob", "carol"];
  const out = [];
  let now = T0 + 123;
  for (let i = 0; i < n; i++) {
    now += r() < 0.3 ? 0 : Math.floor(r() * 400);
    const u = r();
    const key = u < 0.1 ? ["alice", "bob"] : keys[Math.floor(r() * keys.length)];
    const cost = r() < 0.15 ? 2 : 1;
    out.push({ op: r() < 0.05 ? "refund" : "limit", key, now, cost });
  }
  return out;
}
