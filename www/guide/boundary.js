// The boundary attack: the same six hits, three just before a window boundary and three just
// after, decided by a clock-aligned fixed window and by the sliding log (both the core, limit
// 3 per 4 s). The fixed window admits all six within 3 s, twice its limit; the log three.
import { START } from "./core.js";
import { el, axis, drawHits, fitWidth, W } from "./svg.js";

const OPTIONS = {
  fixed: { algorithm: "fixed-window", align: "clock", limit: 3, window: 4000 },
  log: { algorithm: "sliding-log", limit: 3, window: 4000 },
};
/** The boundary the attack straddles, and the hits' offsets from it (ms). */
const B = START + 8000;
const OFFSETS = [-1500, -1000, -500, 500, 1000, 1500];

export class BoundaryDemo {
  constructor(root, core) {
    this.root = root;
    this.core = core;
    this.svg = el("svg", { viewBox: `0 0 ${W} 190`, role: "img", class: "stage" });
    this.g = el("g", {}, this.svg);
    const button = Object.assign(document.createElement("button"), { type: "button", className: "hit", textContent: "Replay the attack" });
    this.said = Object.assign(document.createElement("p"), { className: "said" });
    root.prepend(this.svg);
    root.append(button, this.said);
    button.addEventListener("click", () => this.play());
    this.decide();
    this.draw(OFFSETS.length);
  }

  /** Both limiters decide the six hits (fresh limiters: the demo always starts clean). */
  decide() {
    this.times = OFFSETS.map((o) => B + o);
    this.verdicts = {};
    for (const [name, options] of Object.entries(OPTIONS)) {
      const rl = new this.core.RateLimiter(options);
      this.verdicts[name] = this.times.map((now) => rl.limit("attacker", { now }).allowed);
      rl.free();
    }
    const admitted = (v) => v.filter(Boolean).length;
    this.root.dataset.fixed = String(admitted(this.verdicts.fixed));
    this.root.dataset.log = String(admitted(this.verdicts.log));
    const label = `Six hits within 3 s across a window boundary. Fixed window: ${this.root.dataset.fixed} admitted (limit 3). Sliding log: ${this.root.dataset.log} admitted.`;
    this.svg.setAttribute("aria-label", label);
    this.said.textContent = `Fixed window: ${this.root.dataset.fixed} admitted in 3 s, ${this.root.dataset.fixed / 3} x its limit of 3. Sliding log: ${this.root.dataset.log}.`;
  }

  /** The first `shown` hits on two lanes, with the windows each algorithm counts in. */
  draw(shown) {
    const g = this.g;
    g.textContent = "";
    const ax = axis(B - 4600, B + 4600, 110, fitWidth(this.svg, 190) - 10);
    const lanes = [
      ["fixed", "Fixed window", 60],
      ["log", "Sliding log", 150],
    ];
    for (const [name, label, y] of lanes) {
      el("text", { x: 8, y: y + 5, class: "label" }, g, label);
      const hits = this.times.slice(0, shown).map((at, i) => ({ at, allowed: this.verdicts[name][i] }));
      if (name === "fixed") {
        el("line", { x1: ax.x(B), x2: ax.x(B), y1: 18, y2: 180, class: "boundary" }, g);
        drawSpanAt(g, ax, B - 4000, B, y, "window 1: 3 of 3");
        drawSpanAt(g, ax, B, B + 4000, y, "window 2: 3 of 3");
      } else {
        drawSpanAt(g, ax, B + 1500 - 4000, B + 1500, y, "any 4 s: at most 3");
      }
      drawHits(g, ax, hits, y);
    }
  }

  play() {
    const still = matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (still) return this.draw(OFFSETS.length);
    let shown = 0;
    const step = () => {
      this.draw(++shown);
      if (shown < OFFSETS.length) setTimeout(step, 250);
    };
    step();
  }
}

function drawSpanAt(g, ax, a, b, y, label) {
  el("rect", { x: ax.x(a), y: y - 16, width: ax.x(b) - ax.x(a), height: 32, class: "span", rx: 4 }, g);
  el("text", { x: (ax.x(a) + ax.x(b)) / 2, y: y - 22, "text-anchor": "middle", class: "small" }, g, label);
}

