// The equivalence fixture's reserve/settle trace (`equivalence_fixture -- N reserve`, decided by
// the native crate: examples/equivalence_fixture.rs) and its replay through any limiter with
// the npm API (`reserve(key, { cost, now })`, `settle(reservation, actual, { now })`, `reset`):
// the package in memory, a RedisStore's, a WorkerStore's. Every runner compares the replay's
// lines with the native ones.
import { execFileSync } from "node:child_process";
import { root } from "./fixture.mjs";

/** The reserve trace's length: operations of reserve, settle and reset. */
export const RESERVE_OPS = 3_000;

/**
 * The native trace as operations: `{ op: "R", l, keys, now, cost, native }`, `{ op: "S", l, line,
 * now, actual, native }`, `{ op: "X", l, keys, now }` (`native`: the crate's outcome, as
 * `outcome` writes it).
 */
export function reserveTrace(ops = RESERVE_OPS) {
  const text = execFileSync("cargo", ["run", "--quiet", "--example", "equivalence_fixture", "--", String(ops), "reserve"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 16 << 20,
  });
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [op, l, target, now, amount, ...native] = line.split(",");
      const base = { op, l: +l, now: +now, native: native.join(",") };
      if (op === "S") return { ...base, line: +target, actual: +amount };
      return { ...base, keys: target.split("+"), cost: amount === undefined ? undefined : +amount };
    });
}

/** A reservation's outcome as the fixture writes it: the decision's figures. */
function reserved(d) {
  return [d.allowed ? 1 : 0, d.remaining, d.resetAt, d.retryAfter].join(",");
}

/** A settlement's outcome: the figures after it and what it did, or the error's code. */
function settled(d) {
  return [d.allowed ? 1 : 0, d.remaining, d.resetAt, d.retryAfter, d.refunded, d.charged, d.forgiven].join(",");
}

/** The key argument of an operation: one key as a string, several as an array. */
const keyArg = (keys) => (keys.length === 1 ? keys[0] : keys);

/**
 * Replays `ops` in order through `limiterOf(l)` (sync or async limiters alike) and answers each
 * operation's outcome, in the native format. A settlement's error is its `code` (a limiter
 * throwing anything without one fails the replay).
 */
export async function replayReserve(ops, limiterOf) {
  const tokens = new Map();
  const out = [];
  for (const [i, o] of ops.entries()) {
    const limiter = limiterOf(o.l);
    if (o.op === "R") {
      const d = await limiter.reserve(keyArg(o.keys), { cost: o.cost, now: o.now });
      if (d.allowed !== (typeof d.reservation === "string")) throw new Error(`line ${i}: allowed ${d.allowed} with reservation ${d.reservation}`);
      if (d.allowed) tokens.set(i, d.reservation);
      out.push(reserved(d));
    } else if (o.op === "S") {
      const token = tokens.get(o.line);
      if (token === undefined) throw new Error(`line ${i}: settles line ${o.line}, which reserved nothing here`);
      try {
        out.push(settled(await limiter.settle(token, o.actual, { now: o.now })));
      } catch (e) {
        if (typeof e?.code !== "string") throw e;
        out.push(e.code);
      }
    } else {
      await limiter.reset(keyArg(o.keys));
      out.push("");
    }
  }
  return out;
}

/** The first operation whose replayed outcome differs from the native one, or null. */
export function firstDifference(ops, outcomes) {
  for (const [i, o] of ops.entries()) {
    if (outcomes[i] !== o.native) return { line: i, op: o, native: o.native, replayed: outcomes[i] };
  }
  return null;
}

/** How many settlements of the trace were refused (by code), and how many reservations admitted. */
export function census(ops) {
  const c = { reserved: 0, denied: 0, settled: 0, refused: {}, resets: 0 };
  for (const o of ops) {
    if (o.op === "R") c[o.native.startsWith("1") ? "reserved" : "denied"] += 1;
    else if (o.op === "X") c.resets += 1;
    else if (/^[01],/.test(o.native)) c.settled += 1;
    else c.refused[o.native] = (c.refused[o.native] ?? 0) + 1;
  }
  return c;
}
