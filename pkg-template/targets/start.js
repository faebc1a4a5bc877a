// Every ESM loader's one step (dist/load/, chosen per runtime by package.json's "imports"):
// instantiate a module's glue with its compiled module or bytes and hand the glue back. Each
// loader names its exports from what this returns, so a bundler that keeps any export keeps the
// instantiation: nothing in the package depends on a module kept for its side effect alone
// (package.json says "sideEffects": false, and means it).
export function started(glue, module) {
  glue.initSync({ module });
  return glue;
}

/** The same, fetching and compiling asynchronously (browsers compile a large module only so). */
export async function fetched(glue, url) {
  // A string: webpack may hand over its own URL-like object, which the glue would take for bytes.
  await glue.default({ module_or_path: String(url) });
  return glue;
}
