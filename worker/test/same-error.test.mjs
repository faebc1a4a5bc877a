// The same mistake gets the same code and field at every edge: the hits of
// tests/same-error/mistakes.json as POST /v1/limit bodies to the running Worker, and its
// policy mistakes as the Worker's configuration (answered as config_error naming the field).
// The npm package runs the same table in tests/js/same-error.test.mjs, the Worker's parsers
// in worker/tests/same_error.rs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { start, post, get } from "./harness.mjs";

const table = JSON.parse(readFileSync(new URL("../../tests/same-error/mistakes.json", import.meta.url), "utf8"));
const applies = (c) => c.edges === undefined || c.edges.includes("http");

let s;
before(async () => {
  s = await start({ bindings: { POLICIES: { same: table.policy } } });
});
after(async () => {
  await s?.stop();
});

test("every hit mistake of the table: 400 with the table's code and field, nothing counted", async () => {
  for (const c of table.hit.filter(applies)) {
    // A list of keys is npm's `limit([k1, k2])` and the body's `keys`.
    const keyField = Array.isArray(c.key) ? { keys: c.key } : { key: c.key };
    const body = c.raw ?? { ...keyField, policy: "same", now: 1_700_000_000_000, ...c.options };
    const r = await post(s.url, "/v1/limit", body);
    assert.equal(r.status, 400, `${c.mistake}: ${r.text}`);
    assert.equal(r.body.error.code, c.code, `${c.mistake}: ${r.text}`);
    assert.equal(r.body.error.field, c.field, `${c.mistake}: ${r.text}`);
  }
  // The first hit that counts finds the key fresh: no mistake took anything.
  const first = await post(s.url, "/v1/limit", { key: "k", policy: "same", now: 1_700_000_000_000 });
  assert.equal(first.body.remaining, 9, first.text);
});

test("a policy mistake of the table in wrangler.toml: config_error naming the table's field", async () => {
  // One Worker per mistake would be slow; three representative ones.
  for (const c of table.config.filter((c) => ["unknown_field", "out_of_range", "renamed"].includes(c.code)).slice(0, 3)) {
    const w = await start({ bindings: { POLICIES: { same: c.options } } });
    try {
      const r = await get(w.url, "/healthz");
      assert.equal(r.status, 500, r.text);
      assert.equal(r.body.error.code, "config_error");
      assert.match(r.body.error.message, new RegExp(`policy "same": ${c.field.replace(/[[\]]/g, "\\$&")}`), r.text);
    } finally {
      await w.stop();
    }
  }
});
