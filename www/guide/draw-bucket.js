// A token bucket's state: the tokens left (one per slot) and the next refill as a filling bar
// in the header; the bucket itself right of the hits that took the tokens.
import { el, axis, drawHits, drawNow, drawTicks, secs, PLOT_BOTTOM } from "./svg.js";

/** fields: describe's { tokens, capacity, refillAmount, interval, nextRefillAt } */
export function draw(g, f, { now, hits, windowMs, width, origin }) {
  const bx = width - 64; // the bucket, right of the hits
  const ax = axis(now - 1.25 * windowMs, now + 0.1 * windowMs, 10, bx - 16);
  drawTicks(g, ax, origin, now);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  // The bucket: an open box, tokens stacked from the bottom.
  const n = Math.min(f.capacity, 12);
  const cell = Math.min(22, 80 / n);
  const bottom = PLOT_BOTTOM;
  el("path", { d: `M${bx},${bottom - n * cell - 6}V${bottom}H${bx + 48}V${bottom - n * cell - 6}`, class: "bucket" }, g);
  for (let i = 0; i < n; i++) {
    el("circle", { cx: bx + 24, cy: bottom - (i + 0.5) * cell, r: cell / 2 - 2, class: i < f.tokens ? "token on" : "token" }, g);
  }
  el("text", { x: 10, y: 20, class: "label" }, g, `${f.tokens} of ${f.capacity} tokens`);
  const full = f.tokens >= f.capacity;
  el("text", { x: 10, y: 40, class: "small" }, g, full ? `full; +${f.refillAmount} every ${secs(f.interval)}` : `+${f.refillAmount} in ${secs(f.nextRefillAt - now)}`);
  if (!full) {
    const done = Math.max(0, Math.min(1, 1 - (f.nextRefillAt - now) / f.interval));
    el("rect", { x: 130, y: 9, width: 80, height: 10, class: "bucket-cell", rx: 3 }, g);
    el("rect", { x: 130, y: 9, width: 80 * done, height: 10, class: "bar", rx: 3 }, g);
  }
}
