// docs/vocabulary.md as data: one row per name, with its kind and the edges it applies to.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const page = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs/vocabulary.md");

/** The rows of every table of the page: `{ name, kind, edges }`. */
export function vocabulary() {
  const rows = [];
  for (const line of readFileSync(page, "utf8").split("\n")) {
    const m = /^\| `([^`]+)` \| (\w+) \| ([^|]*) \|/.exec(line);
    if (m) rows.push({ name: m[1], kind: m[2], edges: m[3].trim().split(/\s+/) });
  }
  return rows;
}

/** The names of `kind` the table gives `edge`, sorted. */
export function namesOf(edge, kind) {
  return vocabulary()
    .filter((r) => r.kind === kind && r.edges.includes(edge))
    .map((r) => r.name)
    .sort();
}

/**
 * The options an options object accepts, as its own unknown-option error lists them
 * ("zz is not an option (the options are a, b, c)"): what the edge really accepts, read from
 * the built package rather than from a list kept beside it.
 */
export function optionsListedBy(make) {
  try {
    make("zzNotAnOption");
  } catch (e) {
    const m = /is not an option \(the options are ([^)]*)\)/.exec(e.message);
    if (m) return m[1].split(", ").sort();
    throw e;
  }
  throw new Error("an unknown option was accepted");
}
