// The package as a user installs it: `npm pack` of pkg/ installed into a temporary project.
// Test files that exercise the published files (not pkg/ in place) start with `install()`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const here = dirname(fileURLToPath(import.meta.url));
export const pkgDir = resolve(here, "../../pkg");

export const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/**
 * The tarball of pkg/: the one scripts/pkg-current.sh packed for this run (`make test-pkg` passes
 * it in TOLLGATE_TARBALL), else packed here into `project`.
 */
export function tarballIn(project) {
  const packed = process.env.TOLLGATE_TARBALL;
  if (packed) return packed;
  const tgz = run("npm", ["pack", "--silent", "--pack-destination", project, pkgDir], pkgDir).trim().split("\n").pop();
  return join(project, tgz);
}

/**
 * Installs the tarball of pkg/ (`tarballIn`) into a new temporary project. Returns the
 * project's directory, the tarball's path, `esm(entry)` (the entry imported as an ESM user's `import`
 * would resolve it), `cjs(entry)` (required as a CommonJS user would) and `remove()`.
 */
export function install() {
  const project = mkdtempSync(join(tmpdir(), "tollgate-user-"));
  const tarball = tarballIn(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], project);
  const require = createRequire(join(project, "index.cjs"));
  return {
    project,
    tarball,
    // Node's `import` of this package, resolved from the project as a user's import is.
    esm: (entry = "") => import(resolveFrom(project, `tollgate${entry}`)),
    cjs: (entry = "") => require(`tollgate${entry}`),
    remove: () => rmSync(project, { recursive: true, force: true }),
  };
}

/** The URL an ESM `import "<specifier>"` from `project` resolves to (Node's "import" and "node" conditions). */
function resolveFrom(project, specifier) {
  const manifest = JSON.parse(readFileSync(join(project, "node_modules/tollgate/package.json"), "utf8"));
  const entry = "." + specifier.slice("tollgate".length);
  return pathToFileURL(join(project, "node_modules/tollgate", manifest.exports[entry].default.default)).href;
}
