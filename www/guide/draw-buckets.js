// Sub-buckets: the window cut into small clock-aligned buckets, each with its own count; the
// buckets still inside the window are summed, and the oldest drops out as time moves on.
import { el, axis, drawHits, drawNow, secs } from "./svg.js";

/** fields: describe's { oldestStart, precision, count, limit, counts } */
export function draw(g, f, { now, hits, windowMs, width }) {
  const ax = axis(now - 1.5 * windowMs, now + 0.3 * windowMs, 10, width - 10);
  const top = Math.max(1, f.limit);
  f.counts.forEach((c, i) => {
    const a = f.oldestStart + i * f.precision;
    const x1 = Math.max(ax.left, ax.x(a));
    const x2 = Math.min(ax.right, ax.x(a + f.precision));
    if (x2 <= x1) return;
    const h = (Math.min(c, top) / top) * 50;
    el("rect", { x: x1 + 1, y: 82 - 12, width: x2 - x1 - 2, height: 12, class: "bucket-cell", rx: 2 }, g);
    if (c > 0) el("rect", { x: x1 + 3, y: 68 - h, width: x2 - x1 - 6, height: h, class: "bar", rx: 2 }, g);
    el("text", { x: (x1 + x2) / 2, y: 80, "text-anchor": "middle", class: "small" }, g, String(c));
  });
  const end = f.oldestStart + f.counts.length * f.precision;
  el("rect", { x: ax.x(f.oldestStart), y: 92, width: ax.x(end) - ax.x(f.oldestStart), height: 52, class: "slide", rx: 4 }, g);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 14, class: "label" }, g, `buckets of ${secs(f.precision)}: ${f.counts.join(" + ")} = ${f.count} of ${f.limit}`);
}
