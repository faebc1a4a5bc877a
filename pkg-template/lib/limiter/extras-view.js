// The extras module's output buffer as a Float64Array view (its classes write decisions there,
// as the limiter's do in its own memory). Apart from decision.js so that the limiter's modules
// never import the extras module; the module is reached on the first call only.
import { extras } from "../extras.js";
import { float64View } from "./decision.js";

/** The view of the extras module's memory; renewed after memory growth detached the old one. */
export const extrasOutView = float64View(() => extras().wasmMemory());
