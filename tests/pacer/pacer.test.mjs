// The JS Pacer's behaviour, in simulated time: FIFO order, aborts, the bounded queue, the
// service's headers (three conventions, three container shapes), costs, rates and bad options.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pacer, PacerCostError, PacerQueueFullError } from "tollgate";
import { instantClock, manualClock, settle, T0 } from "./clock.mjs";

test("waiters are released first in, first out, whatever their cost", async () => {
  const clock = instantClock();
  const pacer = new Pacer({ rate: "10/s", grain: "1s", ...clock });
  const order = [];
  const costs = [3, 7, 1, 9, 2, 8, 10, 1];
  await Promise.all(costs.map((c, i) => pacer.acquire(c).then(() => order.push([i, clock.now() - T0]))));
  assert.deepEqual(order.map(([i]) => i), costs.map((_, i) => i));
  // 10 per second: [3,7] at 0, [1] waits for the next window... each start respects the rate.
  const starts = order.map(([, t]) => t);
  for (let i = 1; i < starts.length; i++) assert.ok(starts[i] >= starts[i - 1], "starts never go back");
  for (const [i, t] of order) {
    const inWindow = order.filter(([, u]) => u > t - 1000 && u <= t).reduce((s, [j]) => s + costs[j], 0);
    assert.ok(inWindow <= 10, `record ${i} at ${t} ms: ${inWindow} units in the window before it`);
  }
});

test("grain smooths: 100/s in shares of 20 every 200 ms", async () => {
  const clock = instantClock();
  const pacer = new Pacer({ rate: "100/s", grain: "200ms", ...clock });
  assert.equal(pacer.maxCost, 20);
  const starts = [];
  for (let i = 0; i < 60; i++) {
    await pacer.acquire();
    starts.push(clock.now() - T0);
  }
  assert.deepEqual([starts[0], starts[19], starts[20], starts[39], starts[40]], [0, 0, 201, 201, 402]);
});

test("aborting the sleeping head gives its reservation back", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "1/s", grain: "1s", now: clock.now, sleep: clock.sleep });
  await pacer.acquire(); // at T0
  const ctl = new AbortController();
  const second = pacer.acquire(1, { signal: ctl.signal });
  await settle();
  assert.equal(pacer.queued, 1);
  assert.equal(clock.sleeping, 1);
  ctl.abort(new Error("no longer needed"));
  await assert.rejects(second, /no longer needed/);
  assert.equal(pacer.queued, 0);
  // Its slot just after T0 + 1000 ms is free again: the next waiter gets it, not T0 + 2001 ms.
  // (A window is a closed interval, so a start exactly one window after another would share
  // it; starts are on whole milliseconds, so the next is 1001 ms later.)
  assert.equal(pacer.peek(1), T0 + 1001);
  let released = false;
  const third = pacer.acquire().then(() => (released = true));
  await clock.advance(1000);
  assert.equal(released, false);
  await clock.advance(1);
  await third;
  assert.equal(released, true);
});

test("aborting a waiter behind the head removes it without disturbing the others", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "1/s", grain: "1s", now: clock.now, sleep: clock.sleep });
  await pacer.acquire();
  const order = [];
  const ctl = new AbortController();
  const a = pacer.acquire().then(() => order.push("a"));
  const b = pacer.acquire(1, { signal: ctl.signal }).then(() => order.push("b"), (e) => order.push(`b:${e.name}`));
  const c = pacer.acquire().then(() => order.push("c"));
  await settle();
  ctl.abort();
  await settle();
  assert.deepEqual(order, ["b:AbortError"]);
  await clock.advance(1001);
  await a;
  assert.equal(clock.now() - T0, 1001);
  await clock.advance(1001);
  await Promise.all([b, c]);
  assert.deepEqual(order, ["b:AbortError", "a", "c"], "c took b's place at T0 + 2002 ms");
});

test("an already aborted signal rejects without queueing", async () => {
  const pacer = new Pacer({ rate: "1/s", ...instantClock() });
  await assert.rejects(pacer.acquire(1, { signal: AbortSignal.abort() }), { name: "AbortError" });
  assert.equal(pacer.queued, 0);
  assert.equal(pacer.peek(1), T0, "nothing was reserved");
});

test("a full queue rejects with a clear, distinct error", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "1/s", grain: "1s", maxQueue: 2, now: clock.now, sleep: clock.sleep });
  await pacer.acquire();
  const waiting = [pacer.acquire(), pacer.acquire()];
  await settle();
  const err = await pacer.acquire().catch((e) => e);
  assert.ok(err instanceof PacerQueueFullError);
  assert.equal(err.code, "pacer_queue_full");
  assert.match(err.message, /queue is full: 2 waiters.*maxQueue/);
  assert.equal(pacer.queued, 2, "the rejected call changed nothing");
  await clock.advance(1001);
  await clock.advance(1001);
  await Promise.all(waiting);
  assert.equal(pacer.queued, 0);
});

test("a cost above what one grain releases is its own error; the largest cost is fine", async () => {
  const pacer = new Pacer({ rate: "100/s", grain: "200ms", ...instantClock() });
  const err = await pacer.acquire(21).catch((e) => e);
  assert.ok(err instanceof PacerCostError && err instanceof RangeError);
  assert.equal(err.code, "pacer_cost_exceeds_capacity");
  assert.deepEqual([err.cost, err.maxCost], [21, 20]);
  assert.match(err.message, /cost 21 can never be paced: at most 20 units/);
  const one = await new Pacer({ rate: "5/s", grain: "200ms", ...instantClock() }).acquire(2).catch((e) => e);
  assert.match(one.message, /at most 1 unit is released per grain/);
  await pacer.acquire(20);
  assert.throws(() => pacer.peek(21), PacerCostError);
  for (const bad of [0, 1.5, -1, NaN]) await assert.rejects(pacer.acquire(bad), { name: "RangeError", message: new RegExp(`cost .*${bad}`) });
  await assert.rejects(pacer.acquire("1"), { name: "TypeError", message: /cost must be a number, got "1"/ });
});

const PAUSES = [
  ["Retry-After", { "Retry-After": "3" }, 3000],
  ["Retry-After as an HTTP date", { "retry-after": new Date(T0 + 4000).toUTCString() }, 4000],
  ["draft-10 RateLimit", { RateLimit: '"default";r=0;t=5', "RateLimit-Policy": '"default";q=100;w=60' }, 5000],
  ["legacy X-RateLimit-* (seconds)", { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "6" }, 6000],
  ["legacy X-RateLimit-* (Unix time)", { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(T0 / 1000 + 7) }, 7000],
];
const SHAPES = {
  record: (h) => h,
  Headers: (h) => new Headers(h),
  pairs: (h) => Object.entries(h),
};

for (const [style, headers, pause] of PAUSES) {
  for (const [shape, make] of Object.entries(SHAPES)) {
    test(`${style} given as ${shape} pushes the schedule back`, async () => {
      const clock = instantClock();
      const pacer = new Pacer({ rate: "100/s", ...clock });
      assert.equal(pacer.observe(make(headers)), T0 + pause);
      await pacer.acquire();
      assert.equal(clock.now(), T0 + pause);
    });
  }
}

test("headers that ask for nothing change nothing", () => {
  const pacer = new Pacer({ rate: "100/s", ...instantClock() });
  for (const h of [{}, { RateLimit: '"default";r=5;t=9' }, { "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "12" }, { "Retry-After": "soon" }]) {
    assert.equal(pacer.observe(h), null);
  }
  assert.equal(pacer.peek(1), T0);
  assert.throws(() => pacer.observe("Retry-After: 3"), { name: "TypeError", message: /headers must be/ });
  assert.throws(() => pacer.observe([["Retry-After"]]), { name: "TypeError", message: /\[name, value\]/ });
});

test("pace(fn) reads a Response's headers: a 429 with Retry-After delays the next call", async () => {
  const clock = instantClock();
  const pacer = new Pacer({ rate: "100/s", ...clock });
  const starts = [];
  let n = 0;
  const call = pacer.pace(async (id) => {
    starts.push([id, clock.now() - T0]);
    return n++ === 0
      ? new Response("slow down", { status: 429, headers: { "Retry-After": "2" } })
      : new Response("ok");
  });
  const first = await call("a");
  assert.equal(first.status, 429);
  await call("b");
  await call("c");
  assert.deepEqual(starts, [["a", 0], ["b", 2000], ["c", 2000]]);
});

test("pace(fn) with a cost function, and errors from fn pass through", async () => {
  const pacer = new Pacer({ rate: "10/s", grain: "1s", ...instantClock() });
  const call = pacer.pace(async (records) => records.length, { cost: (records) => records.length });
  assert.equal(await call([1, 2, 3]), 3);
  await assert.rejects(call(new Array(11)), PacerCostError);
  const failing = pacer.pace(async () => {
    throw new Error("service down");
  });
  await assert.rejects(failing(), /service down/);
  assert.throws(() => pacer.pace("fn"), { name: "TypeError", message: /fn must be a function/ });
});

test("a pause observed while the head sleeps pushes the head back, keeping the order", async () => {
  const clock = manualClock();
  const pacer = new Pacer({ rate: "1/s", grain: "1s", now: clock.now, sleep: clock.sleep });
  await pacer.acquire();
  const order = [];
  const a = pacer.acquire().then(() => order.push(["a", clock.now() - T0]));
  const b = pacer.acquire().then(() => order.push(["b", clock.now() - T0]));
  await settle();
  pacer.observe({ "Retry-After": "5" });
  for (let i = 0; i < 8; i++) await clock.advance(1000);
  await Promise.all([a, b]);
  // a starts when the pause ends; b a window after a (its timer fires on the next advance).
  assert.deepEqual(order.map(([w]) => w), ["a", "b"]);
  assert.equal(order[0][1], 5000);
  assert.ok(order[1][1] >= 6001, `b started ${order[1][1]} ms in`);
});

test("setRate: the pacer follows a new rate, and past starts still count", async () => {
  const clock = instantClock();
  const pacer = new Pacer({ rate: "10/s", grain: "1s", ...clock });
  for (let i = 0; i < 10; i++) await pacer.acquire();
  assert.equal(pacer.peek(1), T0 + 1001);
  pacer.setRate({ limit: 20, window: "1s" });
  assert.equal(pacer.peek(1), T0, "room for 10 more in this second");
  for (let i = 0; i < 10; i++) await pacer.acquire();
  assert.equal(clock.now(), T0);
  assert.equal(pacer.peek(1), T0 + 1001);
  pacer.setRate("5/s");
  assert.equal(pacer.maxCost, 5);
  assert.throws(() => pacer.setRate("fast"), { name: "TypeError", message: /rate.*fast/ });
  assert.equal(pacer.maxCost, 5, "a bad rate changed nothing");
  assert.throws(() => pacer.setRate({ limit: 0, window: "1s" }), { name: "RangeError", message: /rate\.limit .* got 0/ });
});

test("bad options are TypeError/RangeError naming the field and the value", () => {
  const cases = [
    [undefined, TypeError, /options must be an object/],
    [{}, TypeError, /rate is required/],
    [{ rate: 100 }, TypeError, /rate must be a string .* got number 100/],
    [{ rate: "lots" }, TypeError, /rate.*lots/],
    [{ rate: "100/fortnight" }, TypeError, /rate.*fortnight/],
    [{ rate: "0/s" }, RangeError, /rate/],
    [{ rate: { limit: 1.5, window: "1s" } }, RangeError, /rate\.limit .* got 1\.5/],
    [{ rate: { limit: 10, window: -5 } }, RangeError, /rate\.window .* got -5/],
    [{ rate: { limit: 10, window: true } }, TypeError, /rate\.window .* got boolean true/],
    [{ rate: "100/s", grain: "2s" }, RangeError, /grain must be at most the rate's window \(1000 ms\), got "2s"/],
    [{ rate: "100/s", grain: "soon" }, TypeError, /grain.*soon/],
    [{ rate: "100/s", grain: 0 }, RangeError, /grain .* got 0/],
    // Numbers too large to be exact are refused as numbers, not passed on as "1e+300ms".
    [{ rate: { limit: 1e300, window: "1s" } }, RangeError, /^rate\.limit must be a whole number from 1 to 9007199254740991, got 1e\+300$/],
    [{ rate: { limit: 10, window: 1e300 } }, RangeError, /^rate\.window must be a whole number of milliseconds from 1 to 9007199254740991, got 1e\+300$/],
    [{ rate: "100/s", grain: 1e300 }, RangeError, /^grain must be a whole number of milliseconds from 1/],
    [{ rate: "100/s", maxQueue: -1 }, RangeError, /maxQueue .* got number -1/],
    [{ rate: "100/s", maxQueue: "10" }, RangeError, /maxQueue .* got "10"/],
    [{ rate: "100/s", now: 5 }, TypeError, /now must be a function/],
    [{ rate: "100/s", sleep: "x" }, TypeError, /sleep must be a function/],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => new Pacer(options), (e) => e instanceof type && message.test(e.message), JSON.stringify(options));
  }
  // Accepted forms.
  assert.equal(new Pacer({ rate: "100/s" }).maxCost, 20, "default grain 200 ms");
  assert.equal(new Pacer({ rate: "10/100ms" }).maxCost, 10, "default grain at most the window");
  assert.equal(new Pacer({ rate: { limit: 60, window: 60_000 }, grain: 1000 }).maxCost, 1);
  assert.equal(new Pacer({ rate: "100/s" }).rate, "100/1000000000ns");
});

test("the real clock: the default sleep waits, and an abort ends it", async () => {
  const pacer = new Pacer({ rate: "1/30ms", grain: "30ms" });
  const t = performance.now();
  await pacer.acquire();
  await pacer.acquire();
  assert.ok(performance.now() - t >= 25, "the second start waited for the window");
  // The abort's sleep is a minute long: an abort 5 ms in ends it however late this process
  // runs (behind a 30 ms window, a machine that held the process that long admitted instead).
  const slow = new Pacer({ rate: "1/m", grain: "1m" });
  await slow.acquire();
  const ctl = new AbortController();
  const p = slow.acquire(1, { signal: ctl.signal });
  setTimeout(() => ctl.abort(), 5);
  await assert.rejects(p, { name: "AbortError" });
});
