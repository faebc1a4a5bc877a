// A fixed window's state (clock-aligned or from the first hit): the window in force as a box
// over the hits, its counter as `limit` slots, and when it starts over.
import { el, axis, drawHits, drawNow, drawSpan, drawSlots, secs } from "./svg.js";

/** fields: describe's { start, end, count, limit }; ctx: { now, hits, windowMs, clock } */
export function draw(g, f, { now, hits, windowMs, clock, width }) {
  const ax = axis(now - 1.6 * windowMs, now + 0.6 * windowMs, 10, width - 10);
  if (clock) {
    // Clock-aligned: every window boundary is a tick of the wall clock.
    for (let b = Math.ceil(ax.t0 / windowMs) * windowMs; b <= ax.t1; b += windowMs) {
      el("line", { x1: ax.x(b), x2: ax.x(b), y1: 78, y2: 150, class: "boundary" }, g);
    }
  }
  drawSpan(g, ax, f.start, f.end, `this window: ${f.count} of ${f.limit}`);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 22, class: "label" }, g, "counter");
  const x = drawSlots(g, 72, 9, f.count, f.limit);
  const next = clock || f.count > 0 ? `resets in ${secs(f.end - now)}` : "next hit opens one";
  el("text", { x: x + 8, y: 22, class: "label" }, g, `${f.count} / ${f.limit}, ${next}`);
}
