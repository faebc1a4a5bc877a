// A token bucket's state: the bucket with its tokens (one per slot), and the next refill as a
// filling bar; beside it, the hits that took the tokens.
import { el, axis, drawHits, drawNow, secs } from "./svg.js";

/** fields: describe's { tokens, capacity, refillAmount, interval, nextRefillAt } */
export function draw(g, f, { now, hits, width }) {
  const span = Math.max(f.interval * Math.max(f.capacity, 2), 4000);
  const bx = width - 180; // the bucket, right of the hits
  const ax = axis(now - span, now + span * 0.05, 10, bx - 30);
  drawHits(g, ax, hits);
  drawNow(g, ax, now);
  // The bucket: an open box, tokens stacked from the bottom.
  const n = Math.min(f.capacity, 12);
  const cell = Math.min(22, 120 / n);
  const bottom = 158;
  el("path", { d: `M${bx},${bottom - n * cell - 6}V${bottom}H${bx + 60}V${bottom - n * cell - 6}`, class: "bucket" }, g);
  for (let i = 0; i < n; i++) {
    const on = i < f.tokens;
    el("circle", { cx: bx + 30, cy: bottom - (i + 0.5) * cell, r: cell / 2 - 2, class: on ? "token on" : "token" }, g);
  }
  el("text", { x: bx + 70, y: bottom - 60, class: "label" }, g, `${f.tokens} of ${f.capacity} tokens`);
  const full = f.tokens >= f.capacity;
  el("text", { x: bx + 70, y: bottom - 38, class: "small" }, g, full ? "full: no refill due" : `+${f.refillAmount} in ${secs(f.nextRefillAt - now)}`);
  if (!full) {
    const done = Math.max(0, Math.min(1, 1 - (f.nextRefillAt - now) / f.interval));
    el("rect", { x: bx + 70, y: bottom - 30, width: 90, height: 8, class: "bucket-cell", rx: 3 }, g);
    el("rect", { x: bx + 70, y: bottom - 30, width: 90 * done, height: 8, class: "bar", rx: 3 }, g);
  }
  el("text", { x: 10, y: 22, class: "label" }, g, `a hit takes a token; +${f.refillAmount} every ${secs(f.interval)}`);
}
