// The denials of a store that cannot decide: the failure mode's (`failure: "closed"`) and
// contention's, over figures the core gave (`deny`). These are the configured failure mode's
// answers, not a decision of the limits: no limit is consulted here.

/**
 * Makes `d` a denial (every pair denied, nothing remaining) that can be retried after what its
 * own figures say, and at least `minRetryMs`; an admission becomes blocked by `blockedBy` (the
 * first limit).
 */
export function deny(d, minRetryMs, blockedBy = d.limits[0]?.name ?? null) {
  d.retryAfter = Math.max(d.retryAfter, minRetryMs);
  if (d.allowed) d.blockedBy = blockedBy;
  d.allowed = false;
  d.remaining = 0;
  for (const l of d.limits) {
    // nextUnitAfter (the headers' `t`) waits at least as long as the denial does.
    const retryAfter = Math.max(l.retryAfter, minRetryMs);
    Object.assign(l, { allowed: false, remaining: 0, retryAfter, nextUnitAfter: Math.max(l.nextUnitAfter ?? 0, minRetryMs) });
  }
}

