// The guide: loads the core, mounts the story (the chat), one widget per algorithm (the same
// Widget, its options and its drawing per algorithm), the lanes widgets (the store outage, the
// hot key, the ending's live side-by-side), the boundary table, and fills every
// figure the text states from facts.js (the core's decisions). It redraws what is on screen
// once per frame; under reduced motion only when something happens.
//
// Test hook: `window.guide` gives each widget's tape (its hits and the core's verdicts), the
// chat's, and the facts shown, so the browser tests can decide the same hits with the Node
// build and compare every stated figure with the core's.
import { loadCore } from "./core.js";
import { Widget, reduced } from "./widget.js";
import { ChatDemo } from "./chat.js";
import { renderBoundary } from "./boundary.js";
import { drawLanes } from "./lanes.js";
import { computeFacts, mostWithin, ALGORITHMS, LIMIT, WINDOW, START, TRACE } from "./facts.js";
import * as fixed from "./draw-window.js";
import * as sliding from "./draw-sliding.js";
import * as buckets from "./draw-buckets.js";
import * as log from "./draw-log.js";
import * as bucket from "./draw-bucket.js";
import * as gcra from "./draw-gcra.js";
import { SideLive } from "./side-live.js";
import { OutageLive } from "./outage.js";
import { HotKeyLive } from "./hotkey.js";
import { ConcurrencyLive } from "./concurrency.js";

const options = Object.fromEntries(ALGORITHMS.map(([id, , o]) => [id, o]));
const secs = (ms) => `${(Math.ceil(Math.max(0, ms) / 100) / 10).toFixed(1)} s`;
/** Each widget: RateLimiter options (the guide's settings), its drawing, and its state in words. */
export const WIDGETS = {
  "fixed-window": { options: options["fixed-window"], draw: fixed.draw, clock: true, say: (f, now) => `${f.count} of ${f.limit} used in this window; it starts over in ${secs(f.end - now)}.` },
  attack: { options: options["fixed-window"], draw: fixed.draw, clock: true, after: showMost, say: (f, now) => `${f.count} of ${f.limit} used in this window; it starts over in ${secs(f.end - now)}.` },
  "fixed-window-first-hit": { options: options["fixed-window-first-hit"], draw: fixed.draw, say: (f, now) => `${f.count} of ${f.limit} used; this window ends in ${secs(f.end - now)}.` },
  "sliding-log": { options: options["sliding-log"], draw: log.draw, say: (f) => `${f.count} of ${f.limit} in the last 4 s.` },
  "sliding-window": { options: options["sliding-window"], draw: sliding.draw, say: (f) => `Counted ${f.current} current plus ${f.weightedPrevious} of the previous window's ${f.previous}: ${f.count} of ${f.limit}.` },
  "sliding-buckets": { options: options["sliding-buckets"], draw: buckets.draw, say: (f) => `Buckets ${f.counts.join(", ")}: ${f.count} of ${f.limit}.` },
  "token-bucket": { options: options["token-bucket"], draw: bucket.draw, say: (f, now) => `${f.tokens} of ${f.capacity} tokens left${f.tokens < f.capacity ? `; the next in ${secs(f.nextRefillAt - now)}` : ""}.` },
  gcra: { options: options.gcra, draw: gcra.draw, say: (f) => `Room for ${f.room} of ${f.burst}.` },
  client: { options: options["fixed-window"], draw: fixed.draw, clock: true, client: "open", say: (f, now) => `${f.count} of ${f.limit} used; it starts over in ${secs(f.end - now)}.` },
};
/** The live attack's score: the most admitted within any 4 s of its hits, from the core's verdicts. */
function showMost(w) {
  const passed = w.times.filter((_, i) => w.verdicts[i]);
  document.getElementById("attack-most").textContent = String(mostWithin(passed, WINDOW - 1));
}
const SHORT = { "fixed-window": "Fixed, clock", "fixed-window-first-hit": "Fixed, 1st hit", "sliding-log": "Sliding log", "sliding-window": "Counter", "sliding-buckets": "Sub-buckets", "token-bucket": "Token bucket", gcra: "GCRA" };

/** The playground with the guide's settings, all algorithms side by side (www/app reads them). */
export const PLAYGROUND = `../?limit=${LIMIT}&window=${WINDOW}&view=compare&traffic=bursty`;

async function main() {
  let core;
  try {
    core = await loadCore();
  } catch (e) {
    const p = document.getElementById("error");
    p.textContent = `The tollgate wasm build is missing from www/vendor (${e.message}). Run "make www" (make run does it).`;
    p.hidden = false;
    return;
  }
  const t0 = performance.now();
  const widgets = {};
  for (const root of document.querySelectorAll("figure[data-widget]")) {
    const id = root.dataset.widget;
    widgets[id] = new Widget(root, core, { id, windowMs: WINDOW, gapMs: (WINDOW / LIMIT) * 0.6, ...WIDGETS[id] });
  }
  const chat = new ChatDemo(document.getElementById("chat"), core, t0);
  // The lanes widgets: the store outage and the hot key (sliding log, 3 per 4 s), the live ending.
  const lanes = {};
  const live = (id) => document.querySelector(`[data-live='${id}']`);
  if (live("outage")) lanes.outage = new OutageLive(live("outage"), core, options["sliding-log"], WINDOW);
  if (live("hot")) lanes.hot = new HotKeyLive(live("hot"), core, options["sliding-log"], WINDOW);
  if (live("concurrency")) lanes.concurrency = new ConcurrencyLive(live("concurrency"), core, options["sliding-log"], WINDOW);
  if (live("side")) lanes.side = new SideLive(live("side"), core, ALGORITHMS.map(([id, , o]) => [id, SHORT[id], o]), WINDOW);

  // Every stated figure, from the core's decisions.
  const { facts, rows, retries, side, two, queue } = await computeFacts({ RateLimiter: core.RateLimiter, Pacer: core.Pacer, describe: core.describe });
  for (const e of document.querySelectorAll("[data-fact]")) {
    if (!(e.dataset.fact in facts)) throw new Error(`no fact named ${e.dataset.fact}`);
    e.textContent = facts[e.dataset.fact];
  }
  renderBoundary(document.getElementById("boundary"), rows);
  const pictures = () => {
    drawLanes(
      document.querySelector("#retry-lanes svg"),
      [
        ["Retry at once", retries.storm.log],
        ["Retry-After", retries.polite.log],
        ["Pacer", retries.paced.log],
      ].map(([name, hits]) => ({ name, hits })),
      START - 300,
      START + Math.max(...[retries.storm, retries.polite, retries.paced].map((r) => r.log.at(-1).at - START)) + 500,
      START,
    );
    drawLanes(
      document.querySelector("#servers-lanes svg"),
      [
        { name: "Server A", hits: two.server.filter((h) => h.on === "A") },
        { name: "Server B", hits: two.server.filter((h) => h.on === "B") },
        { name: "One store", hits: two.store },
      ],
      START - 300,
      START + 4000,
      START,
    );
    drawLanes(
      document.querySelector("#pacer-lanes svg"),
      [
        { name: "Handed over", hits: queue.times.map(() => ({ at: START })) },
        { name: "Started", hits: queue.times.map((at) => ({ at })) },
      ],
      START - 300,
      queue.times.at(-1) + 600,
      START,
    );
  };
  pictures();
  for (const a of document.querySelectorAll("a[data-playground]")) a.href = PLAYGROUND;

  // Only what is on screen moves: traffic and redraws follow visibility.
  const moving = [...Object.values(widgets), ...Object.values(lanes), chat];
  const visible = new Set();
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const w = moving.find((x) => x.root === e.target);
      if (e.isIntersecting) visible.add(w);
      else visible.delete(w);
      w.setVisible(e.isIntersecting);
    }
  });
  for (const w of moving) io.observe(w.root);
  const frame = () => {
    if (!reduced()) for (const w of visible) w.render?.(w.now());
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  let width = innerWidth;
  addEventListener("resize", () => {
    if (innerWidth === width) return;
    width = innerWidth;
    for (const w of [...Object.values(widgets), ...Object.values(lanes)]) w.render(w.now());
    renderBoundary(document.getElementById("boundary"), rows);
    pictures();
  });

  window.guide = {
    widgets: Object.keys(widgets),
    tape: (id) => widgets[id].tape(),
    chat: () => chat.tape(),
    lanes: Object.keys(lanes),
    laneTape: (id) => lanes[id].tape(),
    facts,
  };
  document.body.dataset.ready = "1";
}

main();
