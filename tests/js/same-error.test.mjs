// The same mistake gets the same code and field at every edge (issue 20): the table of
// tests/same-error/mistakes.json through the npm package. The Worker runs the same table
// through its wrangler.toml and body parsers (worker/src/same_error.rs) and over HTTP
// (worker/test/same-error.test.mjs).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { RateLimiter } from "../../pkg/dist/node/index.js";

const table = JSON.parse(readFileSync(new URL("../same-error/mistakes.json", import.meta.url), "utf8"));
const applies = (c) => c.edges === undefined || c.edges.includes("npm");
const NOW = 1_700_000_000_000;

for (const c of table.config.filter(applies)) {
  test(`options, ${c.mistake}: ${c.code} at ${c.field}`, () => {
    assert.throws(() => new RateLimiter(c.options), (e) => {
      assert.deepEqual({ code: e.code, field: e.field }, { code: c.code, field: c.field }, e.message);
      assert.ok(e instanceof (c.code === "out_of_range" ? RangeError : TypeError), e.message);
      return true;
    });
  });
}

for (const c of table.hit.filter(applies)) {
  test(`limit(key, options), ${c.mistake}: ${c.code} at ${c.field}`, () => {
    const limiter = new RateLimiter(table.policy);
    // JSON has no NaN: the table writes it as a string, which JavaScript can pass as a number.
    const options = { now: NOW, ...c.options };
    if (options.cost === "NaN") options.cost = NaN;
    assert.throws(() => limiter.limit(c.key, options), (e) => {
      assert.deepEqual({ code: e.code, field: e.field }, { code: c.code, field: c.field }, e.message);
      return true;
    });
    assert.equal(limiter.size, 0, "a bad hit changes nothing");
  });
}
