// Browsers and bundlers ("browser" and the default): the .wasm file referenced as
// `new URL(file, import.meta.url)`, which webpack, Vite/Rollup, Turbopack and Parcel emit as an
// asset, fetched and compiled once (top-level await); then every call is synchronous.
import * as glue from "../tollgate_wasm.js";
import { fetched } from "./start.js";

export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = await fetched(glue, new URL("../tollgate_wasm_bg.wasm", import.meta.url));
