// `node bench/redis/profile-child.mjs [contender] [key] [seconds]`: one process of
// hotkey.mjs (hotkey-child.mjs) under `node --cpu-prof`, against its own redis-server; the
// profile (.cpuprofile, for Chrome's DevTools) is written to target/redis-profile/ and the
// heaviest functions by self time are printed. For the per-process cost of a contender.
import { fork } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RedisServer } from "../../tests/redis/redis-server.mjs";

const [contender = "tollgate", key = "key:0", seconds = "4"] = process.argv.slice(2);
const dir = fileURLToPath(new URL("../../target/redis-profile/", import.meta.url));
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const server = await RedisServer.start();
const child = fork(fileURLToPath(new URL("./hotkey-child.mjs", import.meta.url)), [String(server.port), contender, key, seconds, "8"], {
  execArgv: ["--cpu-prof", `--cpu-prof-dir=${dir}`, ...(process.env.PROFILE_NODE_FLAGS ?? "").split(" ").filter(Boolean)],
  stdio: ["ignore", "pipe", "inherit", "ipc"],
});
let out = "";
child.stdout.setEncoding("utf8").on("data", (c) => (out += c));
await new Promise((resolve) => child.once("message", resolve));
child.send("go");
await new Promise((resolve) => child.on("exit", resolve));
// What Redis ran for those decisions: the commands and round trips per decision.
const { Redis } = await import("ioredis");
const admin = new Redis({ host: "127.0.0.1", port: server.port });
const stats = (await admin.info("commandstats")).split("\n").filter((l) => l.startsWith("cmdstat_") && !/cmdstat_(info|client|hello)/.test(l));
admin.disconnect();
await server.stop();
console.log(out);
console.log(stats.map((l) => l.replace(/,usec_per_call.*$/, "").trim()).join("\n"));
const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
const profile = JSON.parse(readFileSync(dir + file, "utf8"));
const dt = profile.timeDeltas;
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byName = new Map();
for (const [id, us] of self) {
  const f = byId.get(id).callFrame;
  const name = `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`;
  byName.set(name, (byName.get(name) ?? 0) + us);
}
console.log(`profile ${dir}${file}: ${(total / 1000).toFixed(0)} ms sampled`);
for (const [name, us] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(7)} ms  ${name}`);
}
