// The sliding log's state: every admitted hit still within one window of now, as an entry
// with its age; the count is how many there are.
import { el, axis, drawHits, drawNow, drawSpan, drawSlots, secs } from "./svg.js";

/** fields: describe's { count, limit, entries: [{ at, cost }] } */
export function draw(g, f, { now, hits, windowMs, width }) {
  const ax = axis(now - 1.5 * windowMs, now + 0.3 * windowMs, 10, width - 10);
  drawSpan(g, ax, now - windowMs, now, `the last ${secs(windowMs)}: ${f.count} of ${f.limit}`);
  // Each entry: a tick from the log row down to its hit.
  for (const e of f.entries) {
    const x = ax.x(e.at);
    el("line", { x1: x, x2: x, y1: 56, y2: 100, class: "entry-link" }, g);
    el("rect", { x: x - 5, y: 46, width: 10, height: 10, class: "entry", transform: `rotate(45 ${x} 51)` }, g);
  }
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 22, class: "label" }, g, "log");
  const x = drawSlots(g, 48, 9, f.count, f.limit);
  const ages = f.entries.slice(-4).map((e) => secs(now - e.at));
  el("text", { x: x + 8, y: 22, class: "small" }, g, ages.length ? `ages: ${ages.join(", ")}` : "empty");
}
