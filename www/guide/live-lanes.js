// A live widget drawn as lanes (lanes.js): the break-it section's store outage and hot key and
// the ending's seven algorithms. Its own clock as Widget's (fresh at START + window + 0.5 s on
// arrival and Reset; real time while on screen, or stepped under reduced motion), buttons, a
// sentence spoken to screen readers, and `decide(now)` from the subclass (awaited: a store
// limiter answers with a promise): what the core answered for the hits at `now`. Nothing here
// decides.
import { START } from "./core.js";
import { drawLanes } from "./lanes.js";
import { BURST_GAP, reduced } from "./widget.js";

export class LiveLanes {
  constructor(root, core, { windowMs, buttons = [["Hit", "hit", 1], ["Hit ×4", "hit4", 4]] }) {
    this.root = root;
    this.core = core;
    this.windowMs = windowMs;
    this.visible = false;
    const slot = root.querySelector(".stage-slot");
    this.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    this.svg.setAttribute("class", "stage");
    this.svg.setAttribute("role", "img");
    this.svg.setAttribute("aria-label", root.querySelector("figcaption").textContent.trim());
    this.svg.setAttribute("viewBox", "0 0 640 124");
    this.bar = Object.assign(document.createElement("div"), { className: "bar-controls" });
    const button = (text, cls, on) => {
      const b = Object.assign(document.createElement("button"), { type: "button", className: cls, textContent: text });
      b.addEventListener("click", on);
      this.bar.append(b);
      return b;
    };
    for (const [text, cls, n] of buttons) button(text, cls, () => this.press(n));
    button("Reset", "reset", () => this.reset());
    if (reduced()) button("+1 s", "step", () => this.step(1000)).setAttribute("aria-label", "+1 s: move the clock one second on");
    this.said = Object.assign(document.createElement("output"), { id: `${root.id}-said`, className: "said" });
    this.said.setAttribute("aria-live", "polite");
    slot.append(this.svg, this.bar, this.said);
  }

  now() {
    return this.stepped ? this.base : this.base + (performance.now() - this.since);
  }

  /** A fresh start: the subclass's limiters new, the clock at 0.5 s into the second window. */
  reset() {
    this.stepped = reduced();
    this.base = START + this.windowMs + 500;
    this.since = performance.now();
    this.last = -Infinity;
    this.busy = false;
    this.fresh();
    this.said.textContent = "";
    this.root.dataset.fresh = "1";
    this.render(this.now());
  }

  setVisible(on) {
    if (on && !this.visible && this.now() - this.last > 2 * this.windowMs) this.reset();
    this.visible = on;
    this.root.dataset.visible = on ? "1" : "0"; // for the tests: the arrival was seen
  }

  step(ms) {
    this.base += ms;
    this.render(this.now());
  }

  /** `n` presses, BURST_GAP apart; then the subclass says what happened. */
  async press(n) {
    if (this.busy) return;
    this.busy = true;
    this.from = this.pressFrom();
    for (let i = 0; i < n; i++) {
      if (i > 0) {
        if (this.stepped) this.step(BURST_GAP);
        else await new Promise((r) => setTimeout(r, BURST_GAP));
      }
      if (this.stepped && this.last === this.now()) this.step(BURST_GAP);
      const now = this.now();
      this.last = now;
      await this.decide(now);
      this.root.dataset.fresh = "0";
      this.render(now);
    }
    this.busy = false;
    this.said.textContent = this.say();
    this.svg.setAttribute("aria-label", `${this.root.querySelector("figcaption").textContent.trim()} ${this.said.textContent}`);
  }

  render(now) {
    const t0 = START + this.windowMs + 200;
    drawLanes(this.svg, this.lanes(), t0, Math.max(now, this.last, t0 + this.windowMs) + 500, START, this.nameWidth ?? 112);
    this.root.dataset.at = String(now);
  }
}
