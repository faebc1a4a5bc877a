// Sub-buckets: the window cut into small clock-aligned buckets, each with its own count; the
// buckets still inside the window are summed, and the oldest drops out as time moves on. The
// newest bucket runs past now: it is the one being filled.
import { el, axis, drawHits, drawNow, drawTicks, secs, LABEL_Y, PLOT_TOP } from "./svg.js";

/** fields: describe's { oldestStart, precision, count, limit, counts } */
export function draw(g, f, { now, hits, windowMs, width, origin }) {
  const ax = axis(now - 1.25 * windowMs, now + 0.25 * windowMs, 10, width - 10);
  drawTicks(g, ax, origin, now);
  const top = Math.max(1, f.limit);
  f.counts.forEach((c, i) => {
    const a = f.oldestStart + i * f.precision;
    const x1 = Math.max(ax.left, ax.x(a));
    const x2 = Math.min(ax.right, ax.x(a + f.precision));
    if (x2 <= x1) return;
    el("rect", { x: x1 + 1, y: PLOT_TOP + 4, width: x2 - x1 - 2, height: 36, class: "bucket-cell", rx: 2 }, g);
    const h = (Math.min(c, top) / top) * 36;
    if (c > 0) el("rect", { x: x1 + 3, y: PLOT_TOP + 40 - h, width: x2 - x1 - 6, height: h, class: "bar", rx: 2 }, g);
    if (x2 - x1 > 14) el("text", { x: (x1 + x2) / 2, y: LABEL_Y, "text-anchor": "middle", class: "small" }, g, String(c));
  });
  const end = f.oldestStart + f.counts.length * f.precision;
  const x1 = Math.max(ax.left, ax.x(f.oldestStart));
  el("rect", { x: x1, y: PLOT_TOP + 2, width: Math.min(ax.right, ax.x(end)) - x1, height: 82, class: "slide", rx: 4 }, g);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  el("text", { x: 10, y: 20, class: "label" }, g, `${f.counts.join(" + ")} = ${f.count} of ${f.limit}`);
  el("text", { x: 10, y: 40, class: "small" }, g, `${f.counts.length} buckets of ${secs(f.precision)}, summed`);
}
