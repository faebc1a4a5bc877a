// docs/headers.md is what scripts/headers-doc.mjs prints from the package as built: the
// examples on the page are the headers the code writes, not a copy that can drift.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { render } from "../../scripts/headers-doc.mjs";

const page = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs/headers.md");

test("docs/headers.md is current (else: node scripts/headers-doc.mjs --write)", () => {
  assert.equal(readFileSync(page, "utf8"), render());
});
