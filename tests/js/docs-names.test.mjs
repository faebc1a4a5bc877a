// The docs name what exists: every option and error code the docs name (read as
// docs-names.mjs says, precisely) is a row of docs/vocabulary.md of that kind, and
// docs/benchmarks.md holds the current figures only, in at most 250 lines. Reads Markdown
// only: no package, no build.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { namesIn, pages } from "./docs-names.mjs";
import { vocabulary } from "./vocabulary.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The vocabulary's names of `kind`. */
function known(kind) {
  return new Set(vocabulary().filter((r) => r.kind === kind).map((r) => r.name));
}

for (const kind of ["option", "code"]) {
  test(`every ${kind} the docs name is in docs/vocabulary.md as a ${kind}`, () => {
    const names = known(kind);
    const unknown = pages()
      .flatMap(namesIn)
      .filter((n) => n.kind === kind && !names.has(n.name))
      .map((n) => `${n.page}:${n.line}: \`${n.name}\``);
    assert.deepEqual(unknown, [], `named in the docs as ${kind}s but not in docs/vocabulary.md:\n${unknown.join("\n")}`);
  });
}

test("the docs are read: options and codes are found in the pages that name them", () => {
  const found = pages().flatMap(namesIn);
  const at = (page, kind) => new Set(found.filter((n) => n.page === page && n.kind === kind).map((n) => n.name));
  assert.ok(at("worker/README.md", "code").has("unknown_field"));
  assert.ok(at("docs/npm.md", "option").has("blockedCache"));
  assert.ok(at("docs/headers.md", "option").has("standardHeaders"));
  assert.ok(found.filter((n) => n.kind === "code").length > 20);
  assert.ok(found.filter((n) => n.kind === "option").length > 40);
});

test("docs/benchmarks.md is at most 250 lines", () => {
  const lines = readFileSync(resolve(root, "docs/benchmarks.md"), "utf8").trimEnd().split("\n").length;
  assert.ok(lines <= 250, `docs/benchmarks.md has ${lines} lines: keep the current figures only (git keeps the rest)`);
});
