// The gateway's limits, per API key, from an environment (process.env on Node, a Worker's env):
// RPM requests per minute and TPM tokens per minute, by ALGORITHM (default token-bucket: a
// key's whole minute may come at once, then the minute's rate refills it; ALIGN for a fixed
// window), and MONTHLY tokens per calendar month (a fixed window from the 1st, midnight UTC;
// OFFSET shifts it, e.g. "-2h" for months at UTC+2). MAX_IN_FLIGHT calls of a key may be upstream
// at once (default 8): a concurrency limit in the requests policy, decided with RPM all or
// nothing; each admitted call holds a lease until its answer ends, or LEASE_TTL (default 5m) if
// the gateway never releases it.
export function limitsOf(env = {}) {
  const rpm = Number(env.RPM ?? 60);
  const tpm = Number(env.TPM ?? 10000);
  const monthly = Number(env.MONTHLY ?? 1000000);
  const inFlight = Number(env.MAX_IN_FLIGHT ?? 8);
  const leaseTtl = env.LEASE_TTL ?? "5m";
  const algorithm = env.ALGORITHM ?? "token-bucket";
  const extra = env.ALIGN !== undefined ? { align: env.ALIGN } : {};
  const month = { name: "month", algorithm: "fixed-window", quota: `${monthly}/month`, ...(env.OFFSET !== undefined ? { offset: env.OFFSET } : {}) };
  return {
    requests: { limits: [{ name: "in-flight", algorithm: "concurrency", limit: inFlight, leaseTtl }, { name: "requests", algorithm, limit: rpm, window: "1m", ...extra }] },
    tokens: { limits: [{ name: "tokens", algorithm, limit: tpm, window: "1m", ...extra }, month] },
  };
}
