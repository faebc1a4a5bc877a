// What the HTTP adapters report of a decision made in shadow mode (controls.js): a header
// saying what enforcement would have answered, and a log line for each would-be denial (the
// limit and the wait, never the key, which may be a credential).

/** `allow` or `deny`: what enforcement would have answered (the Worker sends the same). */
export const SHADOW_HEADER = "Tollgate-Shadow";

/**
 * The `[SHADOW_HEADER, "allow" | "deny"]` header of a decision made in shadow mode (null for any
 * other), its would-be denial logged through an express-rate-limit style `logger`
 * (`warn(fields, message)`; default: the console, for the adapters without a `logger` option).
 */
export function shadowReport(decision, logger = { warn: (fields, message) => console.warn(message, fields) }) {
  if (decision.shadow !== true) return null;
  if (!decision.wouldAllow) {
    const fields = { shadow: true, blockedBy: decision.blockedBy, retryAfter: decision.retryAfter, penalty: decision.penalty === true };
    logger.warn(fields, "tollgate: shadow mode admitted a request that enforcement would have denied");
  }
  return [SHADOW_HEADER, decision.wouldAllow ? "allow" : "deny"];
}
