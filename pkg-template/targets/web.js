// Browsers and bundlers ("browser" and the default): the .wasm file referenced as
// `new URL(file, import.meta.url)`, which webpack, Vite/Rollup, Turbopack and Parcel emit as an
// asset, fetched and compiled once (top-level await); then every call is synchronous.
import * as glue from "../tollgate_wasm.js";
import { fetched } from "./start.js";

const wasm = await fetched(glue, new URL("../tollgate_wasm_bg.wasm", import.meta.url));
export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = wasm;
/** The classes a `RateLimiter` never uses (`Pacer`, `LeaseHolder`, `StorePolicy`, `StoreRetry`,
 * `BlockedCache`, `Synced`, `countedDecision`), in the same module: lib/ reaches them as `extras()`. */
export const extras = () => wasm;
