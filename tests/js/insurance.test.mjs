// The in-memory limiter a store's `failure: "insurance"` decides with while the store is down
// (lib/stores/insurance.js): each limit scaled to the process's share. A WorkerStore whose fetch
// always fails is an outage from its first hit, with no server to start.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, WorkerStore } from "../../pkg/dist/lib/index.js";

const T = 1_700_000_000_000;

const insured = (options) => {
  const down = () => Promise.reject(new Error("down"));
  const store = new WorkerStore({ url: "http://127.0.0.1:9", policy: "p", failure: "insurance", insurance: 0.1, fetch: down, onError: () => {} });
  return new RateLimiter({ ...options, store });
};

test("insurance scales a token bucket's refillAmount with its capacity, which the core requires it to fit", async () => {
  for (const [options, capacity] of [
    [{ algorithm: "token-bucket", limit: 100, window: "1s", burst: 50, refillAmount: 20 }, 5],
    [{ algorithm: "token-bucket", quota: "100/s", refillAmount: 40 }, 10],
  ]) {
    const limiter = insured(options);
    const answers = [];
    for (let i = 0; i <= capacity; i++) answers.push(await limiter.limit("k", { now: T }));
    const want = [...Array(capacity).fill([true, "unavailable"]), [false, "unavailable"]];
    assert.deepEqual(answers.map((d) => [d.allowed, d.degraded]), want, JSON.stringify(options));
  }
});
