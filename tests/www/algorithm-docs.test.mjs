// The playground's explanations are the algorithms' module docs: www/app/algorithm-docs.js is
// what scripts/algorithm-docs.mjs writes from src/algorithms/*.rs now.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { render, OUT } from "../../scripts/algorithm-docs.mjs";
import { ALGORITHMS } from "../../www/app/params.js";
import { ALGORITHM_DOCS } from "../../www/app/algorithm-docs.js";

test("www/app/algorithm-docs.js is current (else: node scripts/algorithm-docs.mjs --write)", () => {
  assert.equal(readFileSync(OUT, "utf8"), render());
});

test("every algorithm the page offers has its title, what it is, guarantee, pros, cons and when to pick it", () => {
  assert.deepEqual(Object.keys(ALGORITHM_DOCS).sort(), ALGORITHMS.map((a) => a.id).sort());
  for (const [id, doc] of Object.entries(ALGORITHM_DOCS)) {
    for (const k of ["title", "guarantee", "pros", "cons", "pick"]) assert.ok(doc[k].length > 20, `${id}.${k}: ${doc[k]}`);
    assert.ok(doc.what.length >= 1, id);
  }
});

test("no explanation points to a document the reader cannot open", () => {
  assert.doesNotMatch(JSON.stringify(ALGORITHM_DOCS), /notes, section/);
});
