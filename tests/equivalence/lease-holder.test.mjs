// The lease holder across the HTTP boundary: three `LeasedPacer`s (the npm package) share a
// capacity pool of the real Worker (workerd through Miniflare), asking for more than it holds
// (so fair shares move partitions between them), one closing midway. Every answer the pool
// sent is recorded as it crossed HTTP; replaying the same grants through the native core's
// `LeaseHolder` (examples/lease_holder_replay.rs) must give, at every instant the test looked,
// what each LeasedPacer reported: the rate it paces to, the rate held, until when it may start
// work, the window and the partitions. The holders' clock is simulated; the pool's is real.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { LeasedPacer } from "tollgate";
import { start } from "../../worker/test/harness.mjs";
import { root } from "../js/fixture.mjs";
import { manualClock, settle } from "../pacer/clock.mjs";

const TTL_MS = 3000;
const MARGIN_MS = 500;
const STEP_MS = 250;

let s;
before(async () => {
  s = await start({ bindings: { POOLS: { shared: { partitions: 20, rate: "25/s", maxTtl: "1m" } } } });
});
after(async () => {
  await s?.stop();
});

const realSleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("LeasedPacers over HTTP decide what the core's LeaseHolder decides on the same grants", async () => {
  const clock = manualClock();
  /** Per holder: the replay's input lines, and what the LeasedPacer reported at each query. */
  const events = new Map();
  const reported = new Map();
  let inflight = 0;
  // The pacers' fetch: the Worker's own, recording every grant answer as the holder gets it.
  const recordingFetch = async (url, init) => {
    inflight++;
    try {
      const sent = clock.now();
      const res = await fetch(url, init);
      if (init.method === "POST") {
        const asked = JSON.parse(init.body);
        const answer = await res.clone().json();
        if (res.status === 200) {
          // A lease lasts the answer's TTL, never more than was asked (what LeasedPacer passes on).
          const ttl = answer.partitions.length > 0 ? Math.min(asked.ttlMs, answer.ttlMs) : asked.ttlMs;
          const parts = answer.partitions.length > 0 ? answer.partitions.join(",") : "-";
          events.get(asked.holder).push(`granted ${sent} ${clock.now()} ${answer.rate} ${answer.window} ${ttl} ${parts}`);
        }
      }
      return res;
    } finally {
      inflight--;
    }
  };
  /** Lets every request in flight finish and its answer be applied (the clock stands still). */
  const quiet = async () => {
    do {
      while (inflight > 0) await realSleep(2);
      await settle();
    } while (inflight > 0);
  };
  const holders = new Map();
  const open = (holder, partitions) => {
    events.set(holder, [`new ${MARGIN_MS}`]);
    reported.set(holder, []);
    const lp = new LeasedPacer({
      url: s.url,
      pool: "shared",
      holder,
      partitions,
      ttlMs: TTL_MS,
      renewMargin: MARGIN_MS,
      fetch: recordingFetch,
      now: clock.now,
      sleep: clock.sleep,
    });
    holders.set(holder, lp);
    lp.start();
  };
  const look = () => {
    for (const [holder, lp] of holders) {
      const st = lp.status;
      events.get(holder).push(`query ${clock.now()}`);
      reported.get(holder).push(`${st.rate} ${st.heldRate} ${st.usableUntil} ${st.window} ${st.partitions.length ? st.partitions.join(",") : "-"}`);
    }
  };

  open("a", 12);
  await quiet();
  for (let step = 1; step <= 48; step++) {
    if (step === 3) open("b", 10);
    if (step === 6) open("c", 5);
    if (step === 24) {
      const a = holders.get("a");
      holders.delete("a");
      await a.close();
      events.get("a").push("lost");
    }
    await clock.advance(STEP_MS);
    await quiet();
    look();
  }
  for (const lp of holders.values()) await lp.close();

  let grants = 0;
  let moved = 0;
  for (const [holder, lines] of events) {
    const replay = execFileSync("cargo", ["run", "--quiet", "--example", "lease_holder_replay"], {
      cwd: root,
      input: lines.join("\n") + "\n",
      encoding: "utf8",
    });
    const core = replay.trim().split("\n").map((l) => {
      const [rate, held, usable, , window, parts] = l.split(" ");
      return `${rate} ${held} ${usable} ${window} ${parts}`;
    });
    assert.deepEqual(reported.get(holder), core, `holder ${holder}: the LeasedPacer and the core disagree`);
    const granted = lines.filter((l) => l.startsWith("granted"));
    grants += granted.length;
    moved += new Set(granted.map((l) => l.split(" ")[6])).size - 1;
  }
  console.log(`${grants} grants over HTTP replayed through the core; the partitions held changed ${moved} times`);
  assert.ok(grants > 20 && moved > 2, "the holders renewed and fair shares moved partitions");
});
