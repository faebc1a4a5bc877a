// Node ESM: a wasm module's bytes, read from `name` beside the loader (`base`, its
// import.meta.url). The two are passed apart so that no bundler rewrites the reference: webpack
// would hand readFileSync a URL-like object of its own, while webpack and Turbopack set
// import.meta.url to this file's place in node_modules, where the .wasm files are.
import { readFileSync } from "node:fs";

const EXTERNAL = "keep tollgate out of the bundle (esbuild --packages=external or --external:tollgate), so that Node loads it from node_modules";

export function wasmFile(name, base) {
  if (typeof base !== "string") {
    throw new Error(`tollgate: ${name} cannot be found from a CommonJS bundle of the package's ES modules (import.meta is empty there); ${EXTERNAL}`);
  }
  try {
    return readFileSync(new URL(name, base));
  } catch (e) {
    if (e?.code === "ENOENT") e.message += `: tollgate's wasm is not beside the code that loads it (bundled?); ${EXTERNAL}`;
    throw e;
  }
}
