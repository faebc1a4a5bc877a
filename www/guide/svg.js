// SVG building blocks shared by the drawing modules: elements, a time axis, and the hits as
// marks whose shape says the outcome (a filled circle admitted, a cross blocked), so colour
// is never the only signal.
const NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes, appended to `parent` when given. */
export function el(name, attrs = {}, parent = null, text = null) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== null) e.textContent = text;
  if (parent) parent.append(e);
  return e;
}

export const W = 640;
export const H = 170;
/** The strip of hits: its vertical centre and the plot's left and right edges. */
export const LANE = 118;
const LEFT = 10;
const RIGHT = W - 10;

/** A time axis over [t0, t1] (epoch ms) on the plot's width. */
export function axis(t0, t1, left = LEFT, right = RIGHT) {
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (right - left);
  return { t0, t1, x, left, right };
}

/** Seconds with at most one decimal, for labels. */
export const secs = (ms) => `${(Math.round(ms / 100) / 10).toFixed(1)} s`;

/** The hits in view as marks on the lane, the newest emphasised. */
export function drawHits(g, ax, hits, y = LANE) {
  const shown = hits.filter((h) => h.at >= ax.t0 && h.at <= ax.t1);
  for (const h of shown) {
    const cx = ax.x(h.at);
    if (h.allowed) el("circle", { cx, cy: y, r: 6, class: "hit-ok" }, g);
    else el("path", { d: `M${cx - 5},${y - 5}L${cx + 5},${y + 5}M${cx + 5},${y - 5}L${cx - 5},${y + 5}`, class: "hit-no" }, g);
  }
}

/** The "now" line, with its label above the lane. */
export function drawNow(g, ax, now) {
  const x = ax.x(now);
  el("line", { x1: x, x2: x, y1: 20, y2: H - 8, class: "now" }, g);
  el("text", { x: x - 4, y: H - 2, class: "small", "text-anchor": "end" }, g, "now");
}

/** A bracket [a, b] above the lane: the span a decision looks at. */
export function drawSpan(g, ax, a, b, label, cls = "span") {
  const x1 = Math.max(ax.left, ax.x(a));
  const x2 = Math.min(ax.right, ax.x(b));
  if (x2 <= x1) return;
  el("rect", { x: x1, y: LANE - 16, width: x2 - x1, height: 32, class: cls, rx: 4 }, g);
  if (label) el("text", { x: (x1 + x2) / 2, y: LANE - 22, "text-anchor": "middle", class: "label" }, g, label);
}

/** `filled` of `total` boxes in a row from (x, y): a counter or a bucket's tokens. */
export function drawSlots(g, x, y, filled, total, size = 16, cls = "slot") {
  const n = Math.min(total, 40);
  for (let i = 0; i < n; i++) el("rect", { x: x + i * (size + 4), y, width: size, height: size, rx: 3, class: i < filled ? `${cls} on` : cls }, g);
  return x + n * (size + 4);
}

/**
 * The drawing width for `svg`: its width on screen, between 400 and W, set as its viewBox's
 * width, so text keeps a readable size on a phone instead of shrinking with the picture.
 */
export function fitWidth(svg, height = H) {
  const width = Math.round(Math.max(400, Math.min(W, svg.clientWidth || W)));
  if (svg.dataset.width !== String(width)) {
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.dataset.width = String(width);
  }
  return width;
}
