// The guide: loads the core, mounts one widget per algorithm (the same Widget, its options and
// its drawing per algorithm), the boundary attack and the chat, and redraws what is on screen
// once per frame (once a second when the reader prefers reduced motion).
//
// Test hook: `window.guide` gives each widget's tape (its hits and the core's verdicts) and
// the chat's, so the browser tests can decide the same hits with the Node build.
import { loadCore } from "./core.js";
import { Widget } from "./widget.js";
import { BoundaryDemo } from "./boundary.js";
import { ChatDemo } from "./chat.js";
import * as fixed from "./draw-window.js";
import * as sliding from "./draw-sliding.js";
import * as buckets from "./draw-buckets.js";
import * as log from "./draw-log.js";
import * as bucket from "./draw-bucket.js";
import * as gcra from "./draw-gcra.js";

const W4 = 4000;
/** Each widget: RateLimiter options (small numbers), its drawing, and the traffic's mean gap. */
export const WIDGETS = {
  hero: { options: { algorithm: "sliding-log", limit: 3, window: W4 }, draw: log.draw },
  "fixed-window": { options: { algorithm: "fixed-window", align: "clock", limit: 3, window: W4 }, draw: fixed.draw, clock: true },
  "fixed-window-first-hit": { options: { algorithm: "fixed-window", align: "first-hit", limit: 3, window: W4 }, draw: fixed.draw },
  "sliding-log": { options: { algorithm: "sliding-log", limit: 3, window: W4 }, draw: log.draw },
  "sliding-window": { options: { algorithm: "sliding-window", limit: 3, window: W4 }, draw: sliding.draw },
  "sliding-buckets": { options: { algorithm: "sliding-buckets", limit: 3, window: W4, precision: 1000 }, draw: buckets.draw },
  "token-bucket": { options: { algorithm: "token-bucket", limit: 3, window: W4 }, draw: bucket.draw },
  gcra: { options: { algorithm: "gcra", limit: 3, window: W4 }, draw: gcra.draw },
  client: { options: { algorithm: "fixed-window", align: "clock", limit: 3, window: W4 }, draw: fixed.draw, clock: true, client: "open" },
};

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
    const spec = WIDGETS[id];
    // A bit faster than the limit allows (limit per window), so some hits are refused.
    widgets[id] = new Widget(root, core, { id, windowMs: W4, gapMs: (W4 / spec.options.limit) * 0.6, ...spec }, t0);
  }
  const boundary = new BoundaryDemo(document.getElementById("boundary"), core);
  const chat = new ChatDemo(document.getElementById("chat"), core, t0);

  // Only what is on screen is redrawn.
  const live = [...Object.values(widgets), chat];
  const visible = new Set();
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const w = live.find((x) => x.root === e.target);
      if (e.isIntersecting) visible.add(w);
      else visible.delete(w);
    }
  });
  for (const w of live) io.observe(w.root);
  const redraw = () => {
    for (const w of visible) w.render(w.now());
  };
  const still = matchMedia("(prefers-reduced-motion: reduce)");
  const frame = () => {
    if (!still.matches) redraw();
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  setInterval(() => still.matches && redraw(), 1000);

  window.guide = {
    widgets: Object.keys(widgets),
    tape: (id) => widgets[id].tape(),
    chat: () => chat.tape(),
    boundary: () => ({ times: boundary.times, verdicts: boundary.verdicts }),
  };
  document.body.dataset.ready = "1";
}

main();
