// The option names and error codes the docs name, read from the Markdown itself, for
// docs-names.test.mjs. What is read, precisely (everything else is prose and is not read):
//
// Pages: docs/*.md except docs/vocabulary.md (the list itself), README.md,
// pkg-template/README.md and worker/README.md.
//
// Options:
// - in a table whose header's first cell is `option` or `options`, the first cell of each row:
//   every backticked span there (`key(req, res)` names `key`, `failure: "open"` names `failure`);
// - in a table whose header has a `kind` column, the first cell of each row whose kind is
//   `option`;
// - in prose, the backticked spans right after the word "option" or "options" (a list such as
//   options `a`, `b` and `c` names all three), and a span right before the word "option".
// Codes:
// - in a table whose header has a cell `code`, the backticked spans of that column;
// - in prose, the backticked spans right after the word "code" or "codes" (a list as above);
// - anywhere, fenced blocks included: `code: "x"`, `code: 'x'` and `"code":"x"`.
// A name is the span's leading identifier; `true`, `false` and `null` are values, not names.
// express-rate-limit's own validation identifiers
// (`ERR_ERL_*`, `WRN_ERL_*`), which tollgate logs under their names, are not codes of tollgate.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The pages read, relative to the repository's root, in a fixed order. */
export function pages() {
  const docs = readdirSync(resolve(root, "docs"))
    .filter((f) => f.endsWith(".md") && f !== "vocabulary.md")
    .sort()
    .map((f) => `docs/${f}`);
  return [...docs, "README.md", "pkg-template/README.md", "worker/README.md"];
}

/** The leading identifier of a code span's text (`key(req, res)` → `key`), or null. */
function nameOf(span) {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(span);
  return m ? m[1] : null;
}

/** The code spans of a text, in order. */
function spans(text) {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** The cells of a table row (`| a | b |` → ["a", "b"]); code spans keep their pipes. */
function cells(row) {
  const out = [];
  let cell = "";
  let inCode = false;
  for (const ch of row.trim().replace(/^\|/, "").replace(/\|$/, "")) {
    if (ch === "`") inCode = !inCode;
    if (ch === "|" && !inCode) {
      out.push(cell.trim());
      cell = "";
    } else cell += ch;
  }
  out.push(cell.trim());
  return out;
}

const LIST = String.raw`((?:\x60[^\x60]+\x60(?:,\s*|\s+and\s+|\s+or\s+|\s*/\s*)?)+)`;
const AFTER_OPTION = new RegExp(String.raw`\boptions?\s+` + LIST, "g");
const BEFORE_OPTION = /`([^`]+)`\s+option\b/g;
const AFTER_CODE = new RegExp(String.raw`\bcodes?\s+` + LIST, "g");
const CODE_VALUE = /"?\bcode"?\s*:\s*["']([a-z][a-z0-9_]*)["']/g;
const ERL = /^(ERR|WRN)_ERL_/;
const VALUES = ["true", "false", "null"];

/** Every option and code `page` names: `[{ page, line, kind, name }]`. */
export function namesIn(page) {
  const text = readFileSync(resolve(root, page), "utf8");
  const found = [];
  const add = (line, kind, span) => {
    const name = nameOf(span);
    if (name !== null && !ERL.test(name) && !VALUES.includes(name)) found.push({ page, line, kind, name });
  };
  const lines = text.split("\n");
  let fenced = false;
  let table = null; // { header: [...] } while inside a table
  lines.forEach((raw, i) => {
    const line = i + 1;
    for (const m of raw.matchAll(CODE_VALUE)) add(line, "code", m[1]);
    if (/^\s*```/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    if (/^\s*\|/.test(raw)) {
      const row = cells(raw);
      if (table === null) {
        table = { header: row.map((c) => c.toLowerCase()) };
        return;
      }
      if (row.every((c) => /^:?-+:?$/.test(c))) return;
      const { header } = table;
      if (header[0] === "option" || header[0] === "options") for (const s of spans(row[0])) add(line, "option", s);
      const kind = header.indexOf("kind");
      if (kind > 0 && row[kind] === "option") for (const s of spans(row[0])) add(line, "option", s);
      const code = header.indexOf("code");
      if (code >= 0 && row[code] !== undefined) for (const s of spans(row[code])) add(line, "code", s);
      return;
    }
    table = null;
    for (const m of raw.matchAll(AFTER_OPTION)) for (const s of spans(m[1])) add(line, "option", s);
    for (const m of raw.matchAll(BEFORE_OPTION)) add(line, "option", m[1]);
    for (const m of raw.matchAll(AFTER_CODE)) for (const s of spans(m[1])) add(line, "code", s);
  });
  return found;
}
