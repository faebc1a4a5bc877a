// Several clients' or algorithms' hits on one time axis, one lane each, named on the left:
// the retry section's three clients and the ending's seven algorithms.
import { el, axis, drawHits, fitWidth } from "./svg.js";

/**
 * Draws `lanes` ([{ name, hits: [{ at, allowed }], spans?: [{ from, to }] }]) over [t0, t1] (epoch ms, `origin` the
 * clock's zero) into `svg`, 30 px a lane; a name column on the left, seconds below.
 */
export function drawLanes(svg, lanes, t0, t1, origin, nameWidth = 112) {
  const height = 30 * lanes.length + 34;
  const width = fitWidth(svg, height);
  svg.style.height = `${height}px`;
  const g = svg.querySelector("g") ?? el("g", {}, svg);
  g.textContent = "";
  const ax = axis(t0, t1, nameWidth, width - 12);
  lanes.forEach((lane, i) => {
    const y = 20 + 30 * i;
    if (i % 2 === 0) el("rect", { x: 0, y: y - 15, width, height: 30, class: "lane-band" }, g);
    el("text", { x: 8, y: y + 5, class: "small" }, g, lane.name);
    // Work a lane let run (`spans`: { from, to }), a thin bar each, up to three rows apart.
    (lane.spans ?? []).forEach((s, k) => {
      const x1 = Math.max(ax.left, ax.x(s.from));
      const x2 = Math.min(ax.right, ax.x(s.to));
      if (x2 > x1) el("rect", { x: x1, y: y - 11 + 8 * (k % 3), width: x2 - x1, height: 4, rx: 2, class: "job" }, g);
    });
    drawHits(g, ax, lane.hits, y);
  });
  const base = 30 * lanes.length + 8;
  el("line", { x1: ax.left, x2: ax.right, y1: base, y2: base, class: "axis" }, g);
  const pxPerS = ((ax.right - ax.left) / (t1 - t0)) * 1000;
  const every = pxPerS >= 40 ? 1 : pxPerS >= 18 ? 2 : 5;
  for (let s = Math.ceil((t0 - origin) / 1000); origin + s * 1000 <= t1; s++) {
    const x = ax.x(origin + s * 1000);
    el("line", { x1: x, x2: x, y1: base, y2: base + 5, class: "axis" }, g);
    if (s % every === 0) el("text", { x, y: base + 20, "text-anchor": "middle", class: "tick" }, g, `${s} s`);
  }
}
