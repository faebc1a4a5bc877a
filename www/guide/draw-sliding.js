// The sliding window counter's state: the previous and current clock windows with their
// counts, and the window sliding over them: the current count plus the previous one weighted
// by how much of it the sliding window still covers.
import { el, axis, drawHits, drawNow, drawSpan } from "./svg.js";

/** fields: describe's { start, end, current, previous, weightedPrevious, count, limit } */
export function draw(g, f, { now, hits, windowMs, width }) {
  const ax = axis(now - 2.2 * windowMs, now + 0.4 * windowMs, 10, width - 10);
  drawSpan(g, ax, f.start - windowMs, f.start, `previous: ${f.previous}`, "span prev");
  drawSpan(g, ax, f.start, f.end, `current: ${f.current}`);
  // The sliding window: the last windowMs up to now.
  const x1 = ax.x(now - windowMs);
  const x2 = ax.x(now);
  el("rect", { x: x1, y: 92, width: x2 - x1, height: 52, class: "slide", rx: 4 }, g);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  const share = Math.round(((f.end - now) / (f.end - f.start)) * 100);
  el("text", { x: 10, y: 22, class: "label" }, g, `counted: ${f.current} + ${f.weightedPrevious} = ${f.count} of ${f.limit}`);
  el("text", { x: 10, y: 42, class: "small" }, g, `${f.current} current + ${f.weightedPrevious} of the previous ${f.previous} (${share}% still covered)`);
}
