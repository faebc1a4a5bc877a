// The Redis store's guarded update (pkg-template/lib/stores/redis/redis-guard.js: Lua, in doubles) over the
// vectors the core writes (tests/redis/guard-vectors.json, tests/guard_vectors.rs: the core's
// `Guard::apply` over states of every algorithm that has a guard, with the bytes at the key
// moved inside, at the edges of and outside each guard's range): on a real redis-server, the
// Lua writes exactly the bytes the core says (none where it says none) and moves the expiry
// exactly as far.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { GUARD_LUA } from "../../pkg-template/lib/stores/redis/redis-guard.js";
import { RedisServer } from "./redis-server.mjs";
import { connect } from "./clients.mjs";

const { vectors } = JSON.parse(readFileSync(new URL("./guard-vectors.json", import.meta.url), "utf8"));
const SCRIPT = `${GUARD_LUA}
local w, s = guarded(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if w == nil then return false end
return {w, string.format('%.0f', s)}`;

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

test("the Lua guard writes what the core's Guard::apply says, for every vector", async () => {
  assert.ok(vectors.length > 300, `${vectors.length} vectors`);
  const { client, close } = await connect("ioredis", server.port);
  try {
    const sha = await client.call("SCRIPT", "LOAD", SCRIPT);
    const answers = await Promise.all(
      vectors.map((v) => client.call("EVALSHA", sha, 0, v.current, v.expected, v.written, v.guard)),
    );
    vectors.forEach((v, i) => {
      const want = v.out === null ? null : [v.out, String(v.moved)];
      assert.deepEqual(answers[i], want, JSON.stringify(v));
    });
  } finally {
    close();
  }
});
