// The boundary attack against every algorithm: three hits just before a window boundary and
// three just after (facts.js decides them with the core), as a table of verdicts beside each
// algorithm's bound, and one picture of the attack on the page's clock.
import { el, axis, drawHits, drawTicks, fitWidth, LANE } from "./svg.js";
import { ATTACK, BOUNDARY, START, WINDOW } from "./facts.js";

/** Fills the table's body (rows of `facts.js`'s boundaryRows) and draws the attack. */
export function renderBoundary(root, rows) {
  const body = root.querySelector("tbody");
  body.textContent = "";
  for (const r of rows) {
    const tr = document.createElement("tr");
    const th = Object.assign(document.createElement("th"), { scope: "row", textContent: r.name });
    const cell = (text, cls = "") => Object.assign(document.createElement("td"), { className: cls, textContent: text });
    const m = cell(r.marks, "marks");
    m.setAttribute("aria-label", r.verdicts.map((a) => (a ? "admitted" : "refused")).join(", "));
    const a = cell(`${r.admitted} of 6`);
    const b = cell(r.bound.text);
    m.dataset.fact = `row-${r.id}-marks`;
    a.dataset.fact = `row-${r.id}-admitted`;
    b.dataset.fact = `row-${r.id}-bound`;
    if (r.admitted > 3) a.classList.add("over");
    tr.append(th, m, a, b);
    body.append(tr);
  }
  // The attack on the clock: the boundary at 8 s, the windows either side, and the six hits as
  // the clock-aligned fixed window decides them.
  const svg = root.querySelector("svg");
  const g = svg.querySelector("g") ?? el("g", {}, svg);
  g.textContent = "";
  const width = fitWidth(svg, 200);
  const ax = axis(BOUNDARY - 5000, BOUNDARY + 5000, 10, width - 10);
  drawTicks(g, ax, START, ax.t1 + 1);
  for (const [a, b, label] of [
    [BOUNDARY - WINDOW, BOUNDARY, `4–8 s: ${rows[0].verdicts.slice(0, 3).filter(Boolean).length} of 3`],
    [BOUNDARY, BOUNDARY + WINDOW, `8–12 s: ${rows[0].verdicts.slice(3).filter(Boolean).length} of 3`],
  ]) {
    el("rect", { x: ax.x(a), y: 76, width: ax.x(b) - ax.x(a), height: 74, class: "span", rx: 4 }, g);
    el("text", { x: (ax.x(a) + ax.x(b)) / 2, y: 62, "text-anchor": "middle", class: "small" }, g, label);
  }
  el("line", { x1: ax.x(BOUNDARY), x2: ax.x(BOUNDARY), y1: 70, y2: 156, class: "boundary" }, g);
  drawHits(g, ax, ATTACK.map((at, i) => ({ at, allowed: rows[0].verdicts[i] })), LANE);
  el("text", { x: 10, y: 20, class: "label" }, g, `Fixed window: ${rows[0].admitted} of 6 within 3 s`);
  el("text", { x: 10, y: 40, class: "small" }, g, "each window counts only its own hits");
  svg.setAttribute("aria-label", `The attack on the clock: hits at 6.5, 7, 7.5, 8.5, 9 and 9.5 s; the fixed window admits ${rows[0].admitted} of 6.`);
}
