// What the HTTP adapters report of a decision made in shadow mode (controls.js): a header
// saying what enforcement would have answered, and a log line for each would-be denial (the
// limit and the wait, never the key, which may be a credential).

/** `allow` or `deny`: what enforcement would have answered (the Worker sends the same). */
export const SHADOW_HEADER = "Tollgate-Shadow";

/** Logs a would-be denial through an express-rate-limit style `logger` (`warn(fields, message)`). */
export function logShadowDenial(logger, decision) {
  logger.warn(
    { shadow: true, blockedBy: decision.blockedBy, retryAfter: decision.retryAfter, penalty: decision.penalty === true },
    "tollgate: shadow mode admitted a request that enforcement would have denied",
  );
}
