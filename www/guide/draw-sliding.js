// The sliding window counter's state: the previous and current clock windows with their
// counts, and the window sliding over them. The previous count is weighted by the share of the
// previous window the sliding window still covers: that share is drawn filled.
import { el, axis, drawHits, drawNow, drawSpan, drawTicks } from "./svg.js";

/** fields: describe's { start, end, current, previous, weightedPrevious, count, limit } */
export function draw(g, f, { now, hits, windowMs, width, origin }) {
  const ax = axis(now - 1.25 * windowMs, now + 0.25 * windowMs, 10, width - 10);
  drawTicks(g, ax, origin, now);
  const share = Math.round(((f.end - now) / (f.end - f.start)) * 100);
  drawSpan(g, ax, f.start - windowMs, f.start, `previous ${f.previous} × ${share}%`, "span prev");
  // The weighting: the part of the previous window still inside the last `window`.
  drawSpan(g, ax, now - windowMs, f.start, null, "covered");
  drawSpan(g, ax, f.start, f.end, `current ${f.current}`);
  drawSpan(g, ax, now - windowMs, now, null, "slide", 74, 78);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 20, class: "label" }, g, `counted: ${f.current} + ${f.weightedPrevious} = ${f.count} of ${f.limit}`);
  el("text", { x: 10, y: 40, class: "small" }, g, `${f.current} current + ${f.weightedPrevious} of the previous ${f.previous} (${share}% covered)`);
}
