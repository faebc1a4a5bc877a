// Draws a Track on a canvas: one lane per key (allowed dots above, blocked below), window
// boundaries, the focus key's available units as a line, and a selected hit. Above a few
// thousand visible hits it draws per pixel column instead of per hit (decimation), so a frame
// costs one pass over the arrays however many hits there are.

import { drawState } from "./state-overlay.js";

export const COLORS = {
  allowed: "#1a7a35",
  blocked: "#b42318",
  level: "#2f5fd0",
  boundary: "#8a8f98",
  mark: "#e9b800",
  select: "#111",
  text: "#333",
  grid: "#e4e6ea",
};

const LABELS = 64; // room for lane labels and the level axis, unless lanes are collapsed
const RIGHT = 8;
/** A lane's height: at least this, more when few lanes leave room (up to LANE_MAX). */
const LANE_MIN = 24;
const LANE_MAX = 64;
const AXIS = 18;

/** A hit: a filled dot when allowed, a cross when blocked (shape, not colour only). */
function mark(ctx, x, y, allowed) {
  if (allowed) {
    ctx.fillStyle = COLORS.allowed;
    ctx.beginPath();
    ctx.arc(x, y, 3, 0, 2 * Math.PI);
    ctx.fill();
  } else {
    ctx.strokeStyle = COLORS.blocked;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(x - 3, y - 3);
    ctx.lineTo(x + 3, y + 3);
    ctx.moveTo(x + 3, y - 3);
    ctx.lineTo(x - 3, y + 3);
    ctx.stroke();
    ctx.lineWidth = 1;
  }
}

/** Sizes the canvas's backing store to its CSS box (crisp on any pixel ratio). */
function fit(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(200, Math.round(canvas.clientWidth * dpr));
  const h = Math.max(40, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w: w / dpr, h: h / dpr };
}

function ticks(ctx, x0, x1, toX, y, h) {
  const span = x1 - x0;
  const raw = span / 8;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  ctx.fillStyle = COLORS.text;
  ctx.strokeStyle = COLORS.grid;
  ctx.font = "11px system-ui, sans-serif";
  ctx.textAlign = "center";
  for (let t = Math.ceil(x0 / step) * step; t <= x1; t += step) {
    const x = toX(t);
    ctx.beginPath();
    ctx.moveTo(x, 0);
    ctx.lineTo(x, h);
    ctx.stroke();
    const label = step >= 1000 ? `${+(t / 1000).toFixed(3)} s` : `${+t.toFixed(1)} ms`;
    ctx.fillText(label, x, y);
  }
}

/**
 * @param canvas the canvas (its CSS size decides the drawing size)
 * @param o.track the Track; o.keys key names; o.x0, o.x1 the time range (ms after start)
 * @param o.boundaries window boundaries (ms after start) to draw
 * @param o.level draw the focus key's level line under the lanes
 * @param o.levelMax the level axis top; o.collapse one lane for every key
 * @param o.mark optional Uint8Array: hits to highlight; o.selected index of the selected hit
 * @param o.state optional: the fields of the state that decided the selected hit (drawn over
 *   its lane; o.start the epoch ms of time 0, o.windowMs the window)
 * @returns the hit-lookup geometry (time at a pixel) for clicks
 */
export function drawTimeline(canvas, o) {
  const { ctx, w, h } = fit(canvas);
  const LEFT = o.collapse ? 8 : LABELS; // the plot's left edge
  const { track } = o;
  const lanes = o.collapse ? 1 : o.keys.length;
  // Few lanes get taller (room for the chosen hit's state); the level keeps at least half.
  const LANE = Math.round(Math.max(LANE_MIN, Math.min(LANE_MAX, (h - AXIS - 40) / lanes / 2)));
  const plotW = w - LEFT - RIGHT;
  const span = Math.max(1e-9, o.x1 - o.x0);
  const toX = (t) => LEFT + ((t - o.x0) / span) * plotW;
  const lanesH = lanes * LANE;
  const levelTop = lanesH + 8;
  const levelH = o.level ? Math.max(20, h - AXIS - levelTop - 4) : 0;

  ctx.clearRect(0, 0, w, h);
  ticks(ctx, o.x0, o.x1, toX, h - 5, h - AXIS);

  // Window boundaries, unless so dense they would paint the plot grey.
  const bs = o.boundaries.filter((b) => b >= o.x0 && b <= o.x1);
  if (bs.length > 0 && bs.length < plotW / 4) {
    ctx.save();
    ctx.strokeStyle = COLORS.boundary;
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    for (const b of bs) {
      const x = Math.round(toX(b)) + 0.5;
      ctx.moveTo(x, 0);
      ctx.lineTo(x, h - AXIS);
    }
    ctx.stroke();
    ctx.restore();
  }

  // Lane labels.
  ctx.fillStyle = COLORS.text;
  ctx.font = "12px system-ui, sans-serif";
  ctx.textAlign = "right";
  if (!o.collapse) o.keys.forEach((k, i) => ctx.fillText(k, LEFT - 6, i * LANE + LANE / 2 + 4));

  // Visible hits: first and last index (times ascend).
  let lo = 0;
  while (lo < track.n && track.t[lo] < o.x0) lo++;
  let hi = track.n;
  while (hi > lo && track.t[hi - 1] > o.x1) hi--;
  const laneOf = (i) => (o.collapse ? 0 : track.key[i]);
  const yOf = (i) => laneOf(i) * LANE + (track.allowed[i] ? LANE / 2 - 5 : LANE / 2 + 5);

  if (hi - lo <= 3000) {
    for (let i = lo; i < hi; i++) {
      const x = toX(track.t[i]);
      const y = yOf(i);
      if (o.mark && o.mark[i]) {
        ctx.fillStyle = COLORS.mark;
        ctx.fillRect(x - 4, y - 4, 8, 8);
      }
      mark(ctx, x, y, track.allowed[i] === 1);
    }
  } else {
    // Decimated: one mark per pixel column, lane and outcome.
    const cols = Math.ceil(plotW);
    const seen = new Uint8Array(cols * lanes * 2);
    const marked = o.mark ? new Uint8Array(cols * lanes) : null;
    for (let i = lo; i < hi; i++) {
      const c = Math.min(cols - 1, Math.floor(((track.t[i] - o.x0) / span) * plotW));
      seen[(laneOf(i) * cols + c) * 2 + track.allowed[i]] = 1;
      if (marked && o.mark[i]) marked[laneOf(i) * cols + c] = 1;
    }
    for (let l = 0; l < lanes; l++) {
      for (let c = 0; c < cols; c++) {
        if (marked && marked[l * cols + c]) {
          ctx.fillStyle = COLORS.mark;
          ctx.fillRect(LEFT + c, l * LANE + 2, 1, LANE - 4);
        }
        for (const a of [1, 0]) {
          if (!seen[(l * cols + c) * 2 + a]) continue;
          ctx.fillStyle = a ? COLORS.allowed : COLORS.blocked;
          ctx.fillRect(LEFT + c, l * LANE + (a ? LANE / 2 - 8 : LANE / 2 + 2), 1, 6);
        }
      }
    }
  }

  if (o.level) drawLevel(ctx, track, o, toX, LEFT, levelTop, levelH, plotW);

  // The state that decided the selected hit, over its lane (the lanes' full height if collapsed).
  if (o.state && o.selected >= 0 && o.selected < track.n) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(LEFT, 0, plotW, lanesH);
    ctx.clip();
    drawState(ctx, o.state, { toX, start: o.start, top: laneOf(o.selected) * LANE, height: LANE, windowMs: o.windowMs });
    ctx.restore();
  }

  if (o.selected >= 0 && o.selected < track.n) {
    const x = toX(track.t[o.selected]);
    ctx.strokeStyle = COLORS.select;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(x, yOf(o.selected), 6, 0, 2 * Math.PI);
    ctx.stroke();
    ctx.lineWidth = 1;
  }
  return {
    laneHeight: LANE,
    toTime: (px) => o.x0 + ((px - LEFT) / plotW) * span,
    /** The key index of the lane at a y pixel (-1: collapsed lanes, or below them). */
    toLane: (py) => (o.collapse || py < 0 || py >= lanesH ? -1 : Math.floor(py / LANE)),
  };
}

/** The focus key's available units: a step line, min/max per pixel column when dense. */
function drawLevel(ctx, track, o, toX, LEFT, top, height, plotW) {
  const max = Math.max(1, o.levelMax);
  const toY = (v) => top + height - (v / max) * height;
  ctx.fillStyle = COLORS.text;
  ctx.textAlign = "right";
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillText(String(max), LEFT - 6, top + 9);
  ctx.fillText("0", LEFT - 6, top + height);
  ctx.fillText("available", LEFT - 6, top + height / 2 + 4);
  ctx.strokeStyle = COLORS.grid;
  ctx.strokeRect(LEFT, top, plotW, height);

  ctx.strokeStyle = COLORS.level;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let started = false;
  let col = -1;
  let cMin = 0;
  let cMax = 0;
  let last = 0;
  let lastX = 0;
  for (let i = 0; i < track.levelN; i++) {
    const t = track.lt[i];
    if (t < o.x0 || t > o.x1) continue;
    const x = toX(t);
    const v = track.lv[i];
    const c = Math.floor(x - LEFT);
    if (!started) {
      ctx.moveTo(x, toY(v));
      started = true;
      col = c;
      cMin = cMax = last = v;
    } else if (c === col) {
      if (v < cMin) cMin = v;
      if (v > cMax) cMax = v;
      last = v;
    } else {
      // Close the previous column (its range, then its last value), then step to this point.
      if (cMin !== cMax) {
        ctx.lineTo(lastX, toY(cMax));
        ctx.lineTo(lastX, toY(cMin));
      }
      ctx.lineTo(lastX, toY(last));
      ctx.lineTo(x, toY(last));
      ctx.lineTo(x, toY(v));
      col = c;
      cMin = cMax = last = v;
    }
    lastX = x;
  }
  if (started) {
    if (cMin !== cMax) {
      ctx.lineTo(lastX, toY(cMax));
      ctx.lineTo(lastX, toY(cMin));
    }
    ctx.lineTo(lastX, toY(last));
  }
  ctx.stroke();
  ctx.lineWidth = 1;
}
