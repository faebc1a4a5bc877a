// Runs flood.mjs in `n` child processes at once (half node-redis, half ioredis): each connects,
// then all start together; resolves to their results (see flood.mjs), or rejects if one fails.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const flood = fileURLToPath(new URL("./flood.mjs", import.meta.url));

export async function floodFrom(n, port, job, { timeoutMs = 120_000 } = {}) {
  const children = Array.from({ length: n }, (_, i) =>
    fork(flood, [String(port), i % 2 ? "ioredis" : "node-redis", JSON.stringify(job)], { stdio: ["ignore", "pipe", "pipe", "ipc"], timeout: timeoutMs }),
  );
  const done = children.map(
    (child) =>
      new Promise((resolve, reject) => {
        let out = "";
        let err = "";
        child.stdout.setEncoding("utf8").on("data", (c) => (out += c));
        child.stderr.setEncoding("utf8").on("data", (c) => (err += c));
        child.on("exit", (code, signal) => {
          if (code === 0) resolve(JSON.parse(out));
          else reject(new Error(`flood.mjs exited ${code ?? signal}: ${err}`));
        });
      }),
  );
  await Promise.all(children.map((child) => new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", () => reject(new Error("flood.mjs ended before it was ready")));
  })));
  for (const child of children) child.send("go");
  return Promise.all(done);
}

/** The results of all processes summed per config name. */
export function summed(results) {
  const total = {};
  for (const r of results) {
    for (const [name, counts] of Object.entries(r)) {
      total[name] ??= { admitted: 0, denied: 0, contention: 0, unavailable: 0, errors: 0 };
      for (const [k, v] of Object.entries(counts)) total[name][k] = (total[name][k] ?? 0) + v;
    }
  }
  return total;
}
