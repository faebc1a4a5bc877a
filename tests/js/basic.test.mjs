// The built package imported straight from pkg/ (the tarball tests install it as a user would).
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, Policy } from "../../pkg/dist/node/index.js";

test("a token bucket admits its burst, then says how long to wait", () => {
  const l = new RateLimiter({ algorithm: "token-bucket", limit: 100, window: "1s", burst: 5 });
  for (let i = 0; i < 5; i++) assert.equal(l.limit("user:42", { now: 1000 }).allowed, true);
  const d = l.limit("user:42", { now: 1000 });
  assert.deepEqual([d.allowed, d.remaining, d.retryAfter, d.blockedBy], [false, 0, 10, "default"]);
});
