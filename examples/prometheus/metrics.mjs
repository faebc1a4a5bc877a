// Decision metrics for Prometheus with prom-client, counted as Envoy's rate limit service
// counts them per rule: total_hits, over_limit, near_limit (80% of the limit used, tollgate's
// `near-limit` outcome) and shadow_mode (over the limit, admitted by shadow mode); beside
// them failed_open (admitted because the store failed). Each counter adds the hit's cost and
// is labelled by policy and limit. tollgate has no dependency on prom-client: this file is
// yours to copy. The npm README shows it; tests/js/decision-hook.test.mjs runs it.
import { Counter, register } from "prom-client";

/**
 * An `onDecision` function counting into `registry` (default prom-client's global one).
 * `policy` labels the reports of limiters that have no Worker policy of their own.
 */
export function prometheusDecisions({ registry = register, policy = "" } = {}) {
  const counter = (name, help) => {
    const existing = registry.getSingleMetric(`ratelimit_${name}`);
    return existing ?? new Counter({ name: `ratelimit_${name}`, help, labelNames: ["policy", "limit"], registers: [registry] });
  };
  const total = counter("total_hits", "Hits decided, by their cost");
  const over = counter("over_limit", "Hits over the limit (denied, or admitted by shadow mode)");
  const near = counter("near_limit", "Hits allowed with at least 80% of the limit used");
  const shadow = counter("shadow_mode", "Hits over the limit admitted by shadow mode");
  const failedOpen = counter("failed_open", "Hits admitted because the store failed");
  return ({ policy: own, limit, outcome, cost }) => {
    const labels = { policy: own ?? policy, limit: limit ?? "" };
    total.inc(labels, cost);
    if (outcome === "denied" || outcome === "shadow-denied") over.inc(labels, cost);
    if (outcome === "near-limit") near.inc(labels, cost);
    if (outcome === "shadow-denied") shadow.inc(labels, cost);
    if (outcome === "failed-open") failedOpen.inc(labels, cost);
  };
}
