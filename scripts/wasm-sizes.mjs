// The wasm modules' sizes in the docs, never typed by hand: each file given holds one block
// between `<!-- wasm-sizes -->` and `<!-- /wasm-sizes -->`, a table this script writes from the
// built modules in pkg/dist (raw bytes, and gzip at level 9, zlib's, as tests/js/size.test.mjs
// measures them). scripts/build-pkg.sh runs it with --write after each release build;
// tests/js/size.test.mjs imports sizesBlock() and fails when a doc's block differs.
//   node scripts/wasm-sizes.mjs [--write] <file>...
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DOCS = ["README.md", "pkg-template/README.md", "docs/js-layer.md"];
const MODULES = [
  ["tollgate_wasm", "`tollgate`, `tollgate/limiter`: the limiter's module, with `Pacer`, `LeasedPacer`, `Policy`, the Redis and Worker stores"],
  ["tollgate_wasm_lite", "`tollgate/lite`: the lite module (the same crate without its `full` feature)"],
];
const OPEN = "<!-- wasm-sizes: written by scripts/wasm-sizes.mjs from the build; do not edit -->";
const CLOSE = "<!-- /wasm-sizes -->";

const kb = (n) => `${(n / 1000).toFixed(1)} KB`;

/** The block as the modules in `dist` make it. */
export function sizesBlock(dist = resolve(root, "pkg/dist")) {
  const rows = MODULES.map(([m, what]) => {
    const bytes = readFileSync(`${dist}/${m}_bg.wasm`);
    return `| \`${m}_bg.wasm\` | ${what} | ${kb(bytes.length)} | ${kb(gzipSync(bytes, { level: 9 }).length)} |`;
  });
  return [OPEN, "| module | loaded by | raw | gzip -9 |", "|---|---|---:|---:|", ...rows, CLOSE].join("\n");
}

/** The block a doc holds now, or null. */
export function blockIn(text) {
  const at = text.indexOf(OPEN.slice(0, 17));
  const end = text.indexOf(CLOSE);
  return at < 0 || end < at ? null : text.slice(at, end + CLOSE.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const write = process.argv.includes("--write");
  const files = process.argv.slice(2).filter((a) => a !== "--write");
  const block = sizesBlock();
  for (const f of files.length ? files : DOCS) {
    const path = resolve(root, f);
    const text = readFileSync(path, "utf8");
    const now = blockIn(text);
    if (now === null) throw new Error(`${f}: no ${CLOSE.replace("/", "")} block`);
    if (now === block) continue;
    if (!write) { console.error(`${f}: its wasm sizes differ from the build's`); process.exitCode = 1; continue; }
    writeFileSync(path, text.replace(now, block));
    console.error(`wasm-sizes: rewrote ${f}`);
  }
}
