// GCRA's state: the theoretical arrival time (TAT), when the key would be back to an empty
// meter at the steady rate; a hit is admitted when now is past TAT minus the tolerance.
import { el, axis, drawHits, drawNow, secs } from "./svg.js";

/** fields: describe's { tat, emissionInterval, tolerance, burst, room } */
export function draw(g, f, { now, hits, width }) {
  const reach = f.tolerance + f.emissionInterval;
  const ax = axis(now - 1.3 * reach, now + 1.2 * reach, 10, width - 10);
  const from = f.tat - f.tolerance;
  // The tolerance: the span before TAT within which hits are still admitted.
  const x1 = ax.x(from);
  const x2 = ax.x(f.tat);
  el("rect", { x: x1, y: 60, width: Math.max(1, x2 - x1), height: 30, class: "tolerance", rx: 3 }, g);
  el("text", { x: (x1 + x2) / 2, y: 80, "text-anchor": "middle", class: "small" }, g, `tolerance ${secs(f.tolerance)}`);
  el("line", { x1: x2, x2: x2, y1: 48, y2: 150, class: "tat" }, g);
  el("text", { x: x2 + 4, y: 56, class: "label" }, g, "TAT");
  el("line", { x1: x1, x2: x1, y1: 48, y2: 150, class: "from" }, g);
  el("text", { x: x1 - 4, y: 56, "text-anchor": "end", class: "small" }, g, "admits from");
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  const open = now >= from;
  el("text", { x: 10, y: 22, class: "label" }, g, `room for ${f.room} of ${f.burst}; ${open ? "a hit now is admitted" : `next in ${secs(from - now)}`}`);
  el("text", { x: 10, y: 40, class: "small" }, g, `each hit pushes TAT ${secs(f.emissionInterval)} later`);
}
