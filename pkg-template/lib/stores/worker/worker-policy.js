// Which limits a Worker store's limiter decides by: the Worker policy's, as `GET /v1/policies`
// describes it (normalised, durations in ms). A limiter may omit its limits and take the
// Worker's; limits it gives must be that policy, compared as the core encodes a configuration
// (`tollgate::policy_codec`: two configurations that decide alike encode alike), so that the
// same decision is never made under two different limits without anyone noticing.
import { Policy } from "../../limiter/policy.js";
import { WorkerRequestError } from "./worker-errors.js";

/** A limit of `GET /v1/policies` as limiter options (`windowMs` -> `window`, ...); a calendar
 * month's window is described as written (`"1month"`, `"3months"`), not in ms. */
function limitOptions(described) {
  const window = described.windowMs ?? described.window;
  const o = { name: described.name, algorithm: described.algorithm, limit: described.limit, window };
  if (described.align !== undefined) o.align = described.align;
  if (described.burst !== undefined) o.burst = described.burst;
  if (described.refillAmount !== undefined) o.refillAmount = described.refillAmount;
  if (described.precisionMs !== undefined) o.precision = described.precisionMs;
  if (described.offsetMs !== undefined) o.offset = described.offsetMs;
  if (described.leaseTtlMs !== undefined) o.leaseTtl = described.leaseTtlMs;
  return o;
}

/** The limiter options of a policy as the Worker describes it. */
export function optionsOf(description) {
  return { limits: description.limits.map(limitOptions) };
}

const equalBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The `Policy` to decide by, from the Worker's description of `name` (`described`) and the
 * limiter's own options (`null`: none given). Throws `policy_mismatch` when they differ.
 */
export function resolvePolicy(name, described, own) {
  const worker = new Policy(optionsOf(described));
  if (own === null) return { policy: worker, options: optionsOf(described) };
  const mine = new Policy(own);
  if (!equalBytes(mine._wasm.configBytes(), worker._wasm.configBytes())) {
    throw new WorkerRequestError(
      200,
      "policy_mismatch",
      `the limiter's limits are not the Worker's policy ${JSON.stringify(name)} (${JSON.stringify(described.limits)}); ` +
        "omit them to use the Worker's, or make them equal",
      "policy",
    );
  }
  return { policy: mine, options: own };
}
