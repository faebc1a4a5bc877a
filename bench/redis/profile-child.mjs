// `node bench/redis/profile-child.mjs [contender] [key] [seconds]`: one process of
// hotkey.mjs (hotkey-child.mjs) under `node --cpu-prof`, against its own redis-server; the
// profile (.cpuprofile, for Chrome's DevTools) is written to target/redis-profile/ and the
// heaviest functions by self time during the run are printed (profile-summary.mjs). For the
// per-process cost of a contender. PROFILE_NODE_FLAGS: more flags for the child (e.g. --no-opt).
import { fork } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RedisServer } from "../../tests/redis/redis-server.mjs";
import { summary } from "./profile-summary.mjs";

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
// The samples of the run only (the child's `window`), not its start-up.
const [from, to] = JSON.parse(out).window;
console.log(summary(dir + file, 30, from, to));
