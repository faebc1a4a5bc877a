// The same policy and the same hits give the same rate-limit headers from the npm middleware
// (`rateLimitFetch`, in simulated time) and from the Worker in workerd (Miniflare, TEST_MODE on,
// `now` per request): both call the core's writer (src/headers.rs), in every header mode.
import test from "node:test";
import assert from "node:assert/strict";
import { rateLimitFetch } from "../../pkg/dist/lib/index.js";
import { start, post } from "../../worker/test/harness.mjs";

/** Per policy: the Worker's wrangler.toml form, and the npm options of the same limits. */
const CASES = {
  gcra: {
    worker: { limits: [{ name: "fast", algorithm: "gcra", limit: 5, window: "250ms", burst: 3 }] },
    npm: { limits: [{ name: "fast", algorithm: "gcra", limit: 5, window: "250ms", burst: 3 }] },
  },
  login: {
    worker: {
      limits: [
        { name: "per-minute", algorithm: "sliding-window", quota: "5/m" },
        { name: "per-hour", algorithm: "sliding-window", quota: "20/h" },
      ],
      standardHeaders: "draft-8",
      partitionKey: true,
    },
    npm: {
      limits: [
        { name: "per-minute", algorithm: "sliding-window", quota: "5/m" },
        { name: "per-hour", algorithm: "sliding-window", quota: "20/h" },
      ],
      standardHeaders: "draft-8",
      partitionKey: true,
    },
  },
  bucket: {
    worker: { limits: [{ name: "api", algorithm: "token-bucket", limit: 4, window: "1s", burst: 6 }], standardHeaders: "draft-7", legacyHeaders: false },
    npm: { limits: [{ name: "api", algorithm: "token-bucket", limit: 4, window: "1s", burst: 6 }], standardHeaders: "draft-7", legacyHeaders: false },
  },
  log: {
    worker: { limits: [{ name: "log", algorithm: "sliding-log", limit: 3, window: "2s" }], standardHeaders: "draft-6" },
    npm: { limits: [{ name: "log", algorithm: "sliding-log", limit: 3, window: "2s" }], standardHeaders: true },
  },
  first: {
    worker: { limits: [{ name: "w", algorithm: "fixed-window", align: "first-hit", limit: 4, window: "1s" }], standardHeaders: false },
    npm: { limits: [{ name: "w", algorithm: "fixed-window", align: "first-hit", limit: 4, window: "1s" }], standardHeaders: false },
  },
  buckets: {
    worker: {
      limits: [
        { name: "hourly", algorithm: "sliding-buckets", limit: 6, window: "1h", precision: "10m" },
        { name: "second", algorithm: "fixed-window", limit: 2, window: "1s" },
      ],
    },
    npm: {
      limits: [
        { name: "hourly", algorithm: "sliding-buckets", limit: 6, window: "1h", precision: "10m" },
        { name: "second", algorithm: "fixed-window", limit: 2, window: "1s" },
      ],
    },
  },
};

const T0 = 1_800_000_000_000;
/** Gaps (ms) and costs of the hits; after a denial the next hit waits out its Retry-After. */
const HITS = [[0, 1], [0, 1], [0, 2], [0, 1], [40, 1], [100, 2], [0, 1], [700, 1], [0, 1], [1_500, 2], [0, 1], [0, 1], [60_000, 1], [0, 2]];
const rateHeaders = (headers) =>
  Object.fromEntries([...headers].filter(([n]) => /^(ratelimit|x-ratelimit|retry-after)/i.test(n)).map(([n, v]) => [n.toLowerCase(), v]));

test("the npm middleware and the Worker send the same headers for the same policy and hits", async () => {
  const s = await start({ bindings: { POLICIES: Object.fromEntries(Object.entries(CASES).map(([n, c]) => [n, c.worker])) } });
  const realNow = Date.now;
  try {
    for (const [policy, { npm }] of Object.entries(CASES)) {
      const key = `parity:${policy}:${process.pid}`;
      let now = T0;
      Date.now = () => now;
      let cost = 1;
      const wrap = rateLimitFetch({ ...npm, key: () => key, cost: () => cost })(() => new Response("ok"));
      let wait = 0;
      for (const [i, [gap, c]] of HITS.entries()) {
        now += Math.max(gap, wait);
        cost = c;
        const mine = await wrap(new Request("http://example.test/"));
        const theirs = await post(s.url, "/v1/limit", { key, policy, cost, now });
        // The middleware answers a denial 429; the Worker's decision API answers it 200 with
        // "allowed": false (a denial is an answer). The same decision either way.
        assert.equal(theirs.body.allowed, mine.status === 200, theirs.text);
        assert.deepEqual(rateHeaders(mine.headers), rateHeaders(theirs.headers), `${policy}, hit ${i} at +${now - T0} ms`);
        wait = theirs.body.allowed ? 0 : theirs.body.retryAfter;
      }
    }
  } finally {
    Date.now = realNow;
    await s.stop();
  }
});
