// A fixed window's state (clock-aligned or from the first hit): the window in force as a box
// over the hits, its counter as `limit` slots, and when it starts over.
import { el, axis, drawHits, drawNow, drawSpan, drawSlots, drawTicks, secs, PLOT_TOP, PLOT_BOTTOM } from "./svg.js";

/** fields: describe's { start, end, count, limit }; ctx: { now, hits, windowMs, clock, width, origin } */
export function draw(g, f, { now, hits, windowMs, clock, width, origin }) {
  const ax = axis(now - 1.25 * windowMs, now + 0.25 * windowMs, 10, width - 10);
  drawTicks(g, ax, origin, now);
  if (clock) {
    // Clock-aligned: every window boundary is a tick of the wall clock.
    for (let b = origin + Math.ceil((ax.t0 - origin) / windowMs) * windowMs; b <= ax.t1; b += windowMs) {
      el("line", { x1: ax.x(b), x2: ax.x(b), y1: PLOT_TOP, y2: PLOT_BOTTOM, class: "boundary" }, g);
    }
  }
  if (f.count > 0 || clock) drawSpan(g, ax, f.start, f.end, `this window: ${f.count} of ${f.limit}`);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 20, class: "label" }, g, "counter");
  const x = drawSlots(g, 74, 7, f.count, f.limit);
  el("text", { x: x + 6, y: 20, class: "label" }, g, `${f.count} / ${f.limit}`);
  const next = clock || f.count > 0 ? `starts over in ${secs(f.end - now)}` : "the next hit opens a window";
  el("text", { x: 10, y: 40, class: "small" }, g, next);
}
