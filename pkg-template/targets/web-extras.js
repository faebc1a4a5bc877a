// Browsers and bundlers ("browser" and the default): the .wasm file referenced as
// `new URL(file, import.meta.url)`, which webpack, Vite/Rollup, Turbopack and Parcel emit as an
// asset, fetched and compiled once (top-level await); then every call is synchronous.
import * as glue from "../tollgate_wasm_extras.js";
import { fetched } from "./start.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`). */
const ready = await fetched(glue, new URL("../tollgate_wasm_extras_bg.wasm", import.meta.url));
export const extras = () => ready;
