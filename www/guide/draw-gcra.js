// GCRA's state: the theoretical arrival time (TAT), when the key would be back to an empty
// meter at the steady rate; a hit is admitted when now is past TAT minus the tolerance. TAT is
// usually ahead of now (a promise about the future): the shaded part of the axis.
import { el, axis, drawHits, drawNow, drawTicks, secs, LABEL_Y, PLOT_TOP, PLOT_BOTTOM } from "./svg.js";

/** fields: describe's { tat, emissionInterval, tolerance, burst, room } */
export function draw(g, f, { now, hits, windowMs, width, origin }) {
  const ax = axis(now - windowMs, now + windowMs * 0.9, 10, width - 10);
  drawTicks(g, ax, origin, now);
  const from = f.tat - f.tolerance;
  const x1 = Math.max(ax.left, ax.x(from));
  const x2 = Math.min(ax.right, ax.x(f.tat));
  if (x2 > x1) el("rect", { x: x1, y: PLOT_TOP + 6, width: x2 - x1, height: 40, class: "tolerance", rx: 3 }, g);
  el("line", { x1: x2, x2: x2, y1: PLOT_TOP, y2: PLOT_BOTTOM, class: "tat" }, g);
  el("text", { x: x2 + 3, y: LABEL_Y, class: "small" }, g, "TAT");
  el("line", { x1: x1, x2: x1, y1: PLOT_TOP, y2: PLOT_BOTTOM, class: "from" }, g);
  if (x2 - x1 > 70) el("text", { x: x1 + 3, y: LABEL_Y, class: "small" }, g, "admits from");
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  const open = now >= from;
  el("text", { x: 10, y: 20, class: "label" }, g, `room for ${f.room} of ${f.burst}; ${open ? "a hit now passes" : `next in ${secs(from - now)}`}`);
  el("text", { x: 10, y: 40, class: "small" }, g, `a hit pushes TAT ${secs(f.emissionInterval)} later; tolerance ${secs(f.tolerance)}`);
}
