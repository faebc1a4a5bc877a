// The state that decided the chosen hit, drawn on the timeline over that hit's lane: the
// window and its count, the previous window's weight, the log's entries, the buckets, the
// bucket's tokens and next refill, GCRA's theoretical arrival time and tolerance. The
// numbers are describeState's (state-reader.js fieldsOf); nothing here decides. What each
// algorithm draws with these pens is algorithms.js's (`overlay`).
import { ALGORITHM_PAGES } from "./algorithms.js";

const BLUE = "rgba(36, 80, 184, 0.13)";
const EDGE = "#2450b8";
const ORANGE = "#9c4f00";
const GREY = "rgba(90, 90, 90, 0.10)";

/**
 * @param ctx the timeline's 2D context
 * @param f the fields of the state the hit found (with `now`, its time; epoch ms)
 * @param g { toX (ms after start -> px), start (epoch ms of time 0), top, height (the lane), windowMs }
 */
export function drawState(ctx, f, g) {
  const x = (epoch) => g.toX(epoch - g.start);
  const band = (a, b, fill, label) => {
    const x1 = x(a);
    const x2 = x(b);
    ctx.fillStyle = fill;
    ctx.fillRect(x1, g.top, x2 - x1, g.height);
    ctx.strokeStyle = EDGE;
    ctx.strokeRect(x1 + 0.5, g.top + 0.5, x2 - x1 - 1, g.height - 1);
    if (label) text(label, x1 + 3, g.top + 10);
  };
  const bracket = (a, b, label) => {
    ctx.save();
    ctx.strokeStyle = ORANGE;
    ctx.lineWidth = 2;
    ctx.setLineDash([5, 3]);
    ctx.strokeRect(x(a), g.top + 1, x(b) - x(a), g.height - 2);
    ctx.restore();
    if (label) text(label, x(a) + 3, g.top + g.height - 3);
  };
  const vline = (at, colour, label) => {
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x(at), g.top);
    ctx.lineTo(x(at), g.top + g.height);
    ctx.stroke();
    ctx.lineWidth = 1;
    if (label) text(label, x(at) + 3, g.top + 10);
  };
  const text = (s, tx, ty) => {
    ctx.font = "bold 10px system-ui, sans-serif";
    ctx.textAlign = "left";
    ctx.fillStyle = "#1b1d21";
    ctx.fillText(s, tx, ty);
  };
  const pens = { x, band, bracket, vline, text, bottom: g.top + g.height - 3, windowMs: g.windowMs, BLUE, EDGE, ORANGE, GREY };
  ALGORITHM_PAGES[f.kind]?.overlay(f, pens);
}
