// The Worker store's own errors, each with a stable `code` to branch on (docs/vocabulary.md),
// and how an answer of the Worker becomes one.

/** The Worker failed, refused the connection, timed out or answered 5xx, and `failure` is "throw". */
export class WorkerUnavailableError extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "WorkerUnavailableError";
    this.code = "worker_unavailable";
  }
}

/**
 * The Worker refused the request (a 4xx, or a configuration it cannot serve): a mistake in the
 * call, the token or the Worker's configuration, never an outage, so no failure mode hides it.
 * Input mistakes the in-memory limiter also makes are thrown as the `TypeError`/`RangeError` it
 * throws, with the same `code` and `field`; the rest as this class.
 */
export class WorkerRequestError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.name = "WorkerRequestError";
    this.code = code;
    this.status = status;
    if (field !== undefined) this.field = field;
  }
}

/** Codes the in-memory limiter throws as a `RangeError` (the rest of its mistakes are `TypeError`s). */
const RANGE_CODES = new Set(["invalid_cost", "missing_key", "key_too_long", "out_of_range", "invalid_now"]);
/** Codes the in-memory limiter throws as a plain `Error` (a settlement or renewal its keys' state refuses). */
const STATE_CODES = new Set(["unknown_reservation", "unknown_lease"]);
/** Codes the in-memory limiter throws itself: the Worker's answer is rethrown as its error class. */
const INPUT_CODES = new Set([...RANGE_CODES, ...STATE_CODES, "invalid_type", "invalid_state", "unknown_field", "invalid_reservation", "invalid_lease"]);
/** Answers about the Worker's own set-up (503s among them): a mistake to fix, not an outage. */
const CONFIG_CODES = new Set(["config_error", "auth_not_configured"]);

/** Whether a Worker answer with this status and error code is an outage (the failure mode's business). */
export function isOutage(status, code) {
  return status >= 500 && !CONFIG_CODES.has(code);
}

/** The error to throw for a Worker's error answer (`{ error: { code, message, field } }`). */
export function requestError(status, body) {
  const e = body?.error ?? {};
  const code = typeof e.code === "string" ? e.code : `http_${status}`;
  const message = `the Worker answered ${status}: ${typeof e.message === "string" ? e.message : "no error message"}`;
  if (INPUT_CODES.has(code)) {
    const err = new (RANGE_CODES.has(code) ? RangeError : STATE_CODES.has(code) ? Error : TypeError)(message);
    return Object.assign(err, e.field === undefined ? { code } : { code, field: e.field });
  }
  return new WorkerRequestError(status, code, message, e.field);
}
