// The extras module's output buffer as a Float64Array view (its classes write decisions there,
// as the limiter's do in its own memory: decision.js). Apart from decision.js so that the
// limiter's modules never import the extras module.
import { extras } from "./extras.js";

let extrasView = null;

/** The view of the extras module's memory; renewed after memory growth detached the old one. */
export function extrasOutView() {
  if (extrasView === null || extrasView.length === 0) extrasView = new Float64Array(extras().wasmMemory().buffer);
  return extrasView;
}
