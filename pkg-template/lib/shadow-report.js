// What the HTTP adapters report of a decision made in shadow mode (controls.js): a header
// saying what enforcement would have answered, and a log line for each would-be denial (the
// limit and the wait, never the key, which may be a credential).

/** `allow` or `deny`: what enforcement would have answered (the Worker sends the same). */
export const SHADOW_HEADER = "Tollgate-Shadow";

/** The console as an express-rate-limit style logger, for the adapters that have no `logger` option. */
const CONSOLE = { warn: (fields, message) => console.warn(message, fields) };

/**
 * The `[SHADOW_HEADER, "allow" | "deny"]` header of a decision made in shadow mode (null for any
 * other), its would-be denial logged through an express-rate-limit style `logger`
 * (`warn(fields, message)`; default: the console).
 */
export function shadowReport(decision, logger = CONSOLE) {
  if (decision.shadow !== true) return null;
  if (!decision.wouldAllow) logShadowDenial(logger, decision);
  return [SHADOW_HEADER, decision.wouldAllow ? "allow" : "deny"];
}

function logShadowDenial(logger, decision) {
  logger.warn(
    { shadow: true, blockedBy: decision.blockedBy, retryAfter: decision.retryAfter, penalty: decision.penalty === true },
    "tollgate: shadow mode admitted a request that enforcement would have denied",
  );
}
