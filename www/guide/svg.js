// SVG building blocks shared by the drawing modules: elements, a time axis with ticks, and the
// hits as marks whose shape says the outcome (a filled circle admitted, a cross refused), so
// colour is never the only signal.
//
// Every drawing has the same bands, so no text ever meets the "now" line:
//   0–44    two header lines (the state in words);
//   48–66   the label row (labels of spans, buckets, TAT): above the plot, where "now" never runs;
//   70–156  the plot (spans, bars, the hits' lane); the "now" line runs here only;
//   158–182 the time axis (ticks, seconds on the page's clock);
//   184–198 "now", under the end of its line.
// The drawing is as wide as it is on screen (one SVG unit a CSS pixel), so its text keeps its
// size (13 px and up) on a phone instead of shrinking with the picture.
const NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes, appended to `parent` when given. */
export function el(name, attrs = {}, parent = null, text = null) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== null) e.textContent = text;
  if (parent) parent.append(e);
  return e;
}

export const H = 200;
export const LABEL_Y = 62;
export const PLOT_TOP = 70;
export const PLOT_BOTTOM = 156;
/** The strip of hits: its vertical centre. */
export const LANE = 134;

/** A time axis over [t0, t1] (epoch ms) between x = left and x = right. */
export function axis(t0, t1, left, right) {
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (right - left);
  return { t0, t1, x, left, right };
}

/** Seconds with at most one decimal, for labels. */
export const secs = (ms) => `${(Math.round(ms / 100) / 10).toFixed(1)} s`;

/** Ticks every second on the page's clock (seconds since `origin`), labelled every `every` s. */
export function drawTicks(g, ax, origin, now) {
  const step = 1000;
  const pxPerS = ((ax.right - ax.left) / (ax.t1 - ax.t0)) * 1000;
  const every = pxPerS >= 40 ? 1 : pxPerS >= 20 ? 2 : 5;
  el("line", { x1: ax.left, x2: ax.right, y1: PLOT_BOTTOM + 2, y2: PLOT_BOTTOM + 2, class: "axis" }, g);
  // What lies right of now has not happened yet: shaded, so a state reaching ahead reads as a promise.
  const xn = ax.x(now);
  if (xn < ax.right) el("rect", { x: xn, y: PLOT_TOP, width: ax.right - xn, height: PLOT_BOTTOM - PLOT_TOP, class: "future" }, g);
  for (let t = Math.ceil((ax.t0 - origin) / step) * step + origin; t <= ax.t1; t += step) {
    const x = ax.x(t);
    el("line", { x1: x, x2: x, y1: PLOT_BOTTOM + 2, y2: PLOT_BOTTOM + 7, class: "axis" }, g);
    const s = Math.round((t - origin) / 1000);
    // A tick label never sits under "now" (its own label is there).
    if (s % every === 0 && Math.abs(x - xn) > 22 && x > ax.left + 8 && x < ax.right - 8) {
      el("text", { x, y: PLOT_BOTTOM + 22, "text-anchor": "middle", class: "tick" }, g, `${s} s`);
    }
  }
}

/**
 * The hits in view as marks on the lane: a dot admitted, a cross refused (`allowed`, a
 * decision's); an event no limiter decided (no `allowed`: a job handed to the Pacer) is a dot.
 */
export function drawHits(g, ax, hits, y = LANE) {
  for (const h of hits) {
    if (h.at < ax.t0 || h.at > ax.t1) continue;
    const cx = ax.x(h.at);
    if (h.allowed !== false) el("circle", { cx, cy: y, r: 6, class: "hit-ok" }, g);
    else el("path", { d: `M${cx - 5},${y - 5}L${cx + 5},${y + 5}M${cx + 5},${y - 5}L${cx - 5},${y + 5}`, class: "hit-no" }, g);
  }
}

/** The "now" line over the plot only, its label under the axis. */
export function drawNow(g, ax, now) {
  const x = ax.x(now);
  el("line", { x1: x, x2: x, y1: PLOT_TOP, y2: PLOT_BOTTOM, class: "now" }, g);
  el("text", { x, y: H - 4, class: "small now-label", "text-anchor": "middle" }, g, "now");
}

/** A box over [a, b] in the plot, its label in the label row (never in the plot). */
export function drawSpan(g, ax, a, b, label, cls = "span", y = PLOT_TOP + 6, h = PLOT_BOTTOM - PLOT_TOP - 12) {
  const x1 = Math.max(ax.left, ax.x(a));
  const x2 = Math.min(ax.right, ax.x(b));
  if (x2 <= x1) return;
  el("rect", { x: x1, y, width: x2 - x1, height: h, class: cls, rx: 4 }, g);
  if (label) {
    const mid = Math.min(Math.max((x1 + x2) / 2, ax.left + 50), ax.right - 50);
    el("text", { x: mid, y: LABEL_Y, "text-anchor": "middle", class: "small" }, g, label);
  }
}

/** `filled` of `total` boxes in a row from (x, y): a counter or a bucket's tokens. */
export function drawSlots(g, x, y, filled, total, size = 16, cls = "slot") {
  const n = Math.min(total, 40);
  for (let i = 0; i < n; i++) el("rect", { x: x + i * (size + 4), y, width: size, height: size, rx: 3, class: i < filled ? `${cls} on` : cls }, g);
  return x + n * (size + 4);
}

/**
 * The drawing width for `svg`: its width on screen, set as its viewBox's width (one unit a CSS
 * pixel), so text keeps its size on a phone instead of shrinking with the picture.
 */
export function fitWidth(svg, height = H) {
  const width = Math.round(Math.max(280, svg.clientWidth || 640));
  if (svg.dataset.width !== String(width)) {
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.dataset.width = String(width);
  }
  return width;
}
