// The core in Node for the expected answers: the package's Node build (pkg/dist/lib) decides,
// the playground's own module (www/vendor/tollgate-www, describeState) describes, so a test
// compares the page with the core, never with itself.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./browser.mjs";
import { WWW } from "./static-server.mjs";
import { fieldsOf } from "../../www/app/state-reader.js";

export const { RateLimiter, WorkerStore } = await import(path.join(ROOT, "pkg/dist/lib/index.js"));
const own = await import(path.join(WWW, "vendor/tollgate-www/tollgate_www.js"));
own.initSync({ module: readFileSync(path.join(WWW, "vendor/tollgate-www/tollgate_www_bg.wasm")) });

/** `key`'s state in `rl` at epoch ms `now`, as the core describes it (named fields). */
export const describe = (options, rl, key, now) => fieldsOf(own.describeState(options, rl.export(key), now));
