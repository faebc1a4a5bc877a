// The sliding log's state: every admitted hit still within one window of now, as an entry
// (a diamond); the count is how many there are.
import { el, axis, drawHits, drawNow, drawSpan, drawSlots, drawTicks, secs, PLOT_TOP, LANE } from "./svg.js";

/** fields: describe's { count, limit, entries: [{ at, cost }] } */
export function draw(g, f, { now, hits, windowMs, width, origin }) {
  const ax = axis(now - 1.25 * windowMs, now + 0.25 * windowMs, 10, width - 10);
  drawTicks(g, ax, origin, now);
  drawSpan(g, ax, now - windowMs, now, `last ${secs(windowMs)}: ${f.count} of ${f.limit}`);
  // Each entry: a diamond above its hit.
  for (const e of f.entries) {
    const x = ax.x(e.at);
    el("line", { x1: x, x2: x, y1: PLOT_TOP + 24, y2: LANE - 8, class: "entry-link" }, g);
    el("rect", { x: x - 5, y: PLOT_TOP + 12, width: 10, height: 10, class: "entry", transform: `rotate(45 ${x} ${PLOT_TOP + 17})` }, g);
  }
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 20, class: "label" }, g, "log");
  const x = drawSlots(g, 44, 7, f.count, f.limit);
  el("text", { x: x + 6, y: 20, class: "label" }, g, `${f.count} / ${f.limit}`);
  const ages = f.entries.slice(-3).map((e) => secs(now - e.at));
  el("text", { x: 10, y: 40, class: "small" }, g, ages.length ? `entries' ages: ${ages.join(", ")}` : "the log is empty");
}
