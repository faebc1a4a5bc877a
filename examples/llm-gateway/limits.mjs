// The gateway's limits, per API key, from an environment (process.env on Node, a Worker's env):
// RPM requests per minute, TPM tokens per minute, by ALGORITHM (default token-bucket: a key's
// whole minute may come at once, then the minute's rate refills it; ALIGN for a fixed window).
export function limitsOf(env = {}) {
  const rpm = Number(env.RPM ?? 60);
  const tpm = Number(env.TPM ?? 10000);
  const algorithm = env.ALGORITHM ?? "token-bucket";
  const extra = env.ALIGN !== undefined ? { align: env.ALIGN } : {};
  return {
    requests: { limits: [{ name: "requests", algorithm, limit: rpm, window: "1m", ...extra }] },
    tokens: { limits: [{ name: "tokens", algorithm, limit: tpm, window: "1m", ...extra }] },
  };
}
