// Uncoordinated holders in separate processes (tests/lease/holder-child.mjs) share one pool
// of the real Worker (workerd via Miniflare) and send as fast as their LeasedPacers let them
// to one simulated service. One is SIGKILLed while holding partitions: they come back after
// its TTL and another holder takes them. Throughout, the units started in any window of the
// pool's length, all holders together, never exceed the pool's capacity, and the service
// rejects nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startWorker, TOKEN, CAPACITY, WINDOW_MS, sleep, eventually } from "./worker.mjs";
import { startService } from "./service.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const TTL_MS = 3000; // renewed every second; nothing starts in the last 600 ms of a lease

let w;
let svc;
before(async () => {
  [w, svc] = await Promise.all([startWorker(["shared"]), startService({ capacity: CAPACITY, windowMs: WINDOW_MS })]);
});
after(async () => {
  await Promise.all([w?.stop(), svc?.stop()]);
});

/**
 * Starts a holder process; `ready` resolves once it has the pool's first answer, `latest` is
 * its last status report, `exited` resolves on exit.
 */
function spawnHolder(holder, partitions) {
  const cfg = { workerUrl: w.url, pool: "shared", holder, partitions, ttlMs: TTL_MS, token: TOKEN, serviceUrl: svc.url, cost: 5 };
  const child = fork(path.join(here, "holder-child.mjs"), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const h = { holder, child, latest: null, reports: [], closed: null };
  let ready;
  h.ready = new Promise((resolve) => (ready = resolve));
  h.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.on("message", (m) => {
    if (m.type === "status") {
      h.latest = m;
      h.reports.push(m);
    } else if (m.type === "ready") ready(m);
    else if (m.type === "closed") h.closed = m;
  });
  return h;
}

test("three holder processes share 500/s; a SIGKILLed holder's partitions return after its TTL to another", async (t) => {
  const holders = [spawnHolder("p1", 12), spawnHolder("p2", 12), spawnHolder("p3", 8)];
  t.after(() => holders.forEach((h) => h.child.exitCode === null && h.child.kill("SIGKILL")));
  await Promise.all(holders.map((h) => h.ready));
  const [p1, p2] = holders;
  const held = (st, h) => st.leases.find((l) => l.holder === h.holder)?.partitions.length ?? 0;
  // They race for the 20 partitions: the first askers take them all, then the pool's fair
  // shares (demands 12, 12 and 8 give 7, 7 and 6) move the excess to the third holder as each
  // asks again (every third of the TTL). Until then a given-back partition may be free for a
  // moment, so wait for the pool to be fully leased again rather than read one snapshot.
  const first = await eventually("the pool to be fully leased", async () => {
    const st = await w.status("shared");
    return st.free === 0 ? st : null;
  }, 10_000);
  const victim = [p1, p2].find((h) => held(first, h) > 0);
  const others = holders.filter((h) => h !== victim);
  // Once both holders count their partitions, a whole window at the full capacity.
  await eventually("the victim to send", () => svc.units(victim.holder) > 0);
  await sleep(1300);
  const victimHeld = held(first, victim);
  const lastSeen = (await w.status("shared")).leases.find((l) => l.holder === victim.holder);
  victim.child.kill("SIGKILL");
  const killedAt = Date.now();
  assert.equal((await victim.exited).signal, "SIGKILL");
  assert.ok(lastSeen, JSON.stringify(first));
  // After its last lease lapses (at most a TTL after its last ask), the others, asking every
  // third of the TTL, take its partitions; nobody ever holds one twice (the pool).
  const after = await eventually("the others to take the killed holder's partitions", async () => {
    const st = await w.status("shared");
    return !st.leases.some((l) => l.holder === victim.holder) && st.free === 0 ? st : null;
  }, 15_000);
  const retakenAt = Date.now();
  assert.ok(retakenAt >= lastSeen.expiresAt, "not before the killed holder's lease lapsed");
  const gainer = others.find((h) => held(after, h) > held(first, h));
  assert.ok(gainer, `nobody gained: ${JSON.stringify([first, after])}`);
  // The gainer counts them a window after its grant, and sends at the higher rate.
  await eventually("the gainer to pace at its new rate", () => gainer.latest.rate === gainer.latest.heldRate && gainer.latest.at > retakenAt, 15_000);
  await sleep(1100);
  for (const h of others) h.child.send("close");
  await Promise.all(others.map((h) => h.exited));
  assert.deepEqual(others.map((h) => h.closed?.released).sort(), after.leases.map((l) => l.partitions.length).sort(), "close released what each held");
  const end = await w.status("shared");
  assert.deepEqual([end.free, end.leases], [20, []]);

  // The service's view: every window within the capacity, nothing rejected, nothing early.
  const max = svc.maxInWindow();
  assert.equal(svc.rejected, 0);
  assert.ok(max <= CAPACITY, `${max} units in one window > ${CAPACITY}`);
  // (The holders send as fast as allowed; 60% leaves room for a loaded machine.)
  assert.ok(max >= CAPACITY * 0.6, `the busiest window had only ${max} units: the capacity went unused`);
  for (const s of svc.sends) assert.ok(s.arrived >= s.start, `a send arrived ${s.start - s.arrived} ms before its start`);
  const victimLast = Math.max(...svc.sends.filter((s) => s.holder === victim.holder).map((s) => s.start));
  assert.ok(victimLast <= killedAt);
  const units = Object.fromEntries(holders.map((h) => [h.holder, svc.units(h.holder)]));
  console.log(
    `# processes: ${svc.sends.length} sends, busiest ${WINDOW_MS} ms window ${max}/${CAPACITY} units, 0 rejected; ` +
      `units ${JSON.stringify(units)}; ${victim.holder} (${victimHeld} partitions) killed, its lease lapsed ${lastSeen.expiresAt - killedAt} ms after the kill, retaken ${retakenAt - killedAt} ms after it`,
  );
});
