// Bun (the "bun" condition): the .wasm file imported as a file, so `bun build` copies it and
// `bun build --compile` embeds it in the executable; its path is read synchronously, against
// the module's own URL (`bun build` gives a path relative to the bundle, not to the working
// directory; `bun run` and `--compile` an absolute one).
import { readFileSync } from "node:fs";
import wasmPath from "../tollgate_wasm_bg.wasm" with { type: "file" };
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = started(glue, readFileSync(new URL(wasmPath, import.meta.url)));
