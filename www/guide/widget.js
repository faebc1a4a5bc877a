// One live widget, parameterised per algorithm: a real RateLimiter (the core) deciding the
// hits of one client, its controls (Hit, Hit ×4, Reset, sample traffic) and a picture of the
// algorithm's state drawn from the core's `describe`.
//
// Time is the widget's own clock, starting at 4.5 s on the page's clock (START) whenever the
// client is fresh: on arrival (the widget scrolled into view after it was left alone), on
// Reset. With motion it follows real time while the widget is on screen; under reduced motion
// it is stepped: it moves only when the reader presses "+1 s" (and by the gaps of Hit ×4), and
// nothing moves by itself. So four quick hits from a fresh client read ✓✓✓✗ with every
// algorithm on the page (3 per 4 s), and the picture shows them apart.
//
// The drawn model is on the widget's root as data attributes (`data-state`: describe's
// fields, `data-at`: the epoch ms they describe, `data-hits`: the hits decided by then), so
// tests compare the picture's numbers with the core's.
import { START, response } from "./core.js";
import { el, fitWidth, H } from "./svg.js";

const KEY = "you";
/** The fresh clock: half a second into the second clock window, so quick hits land in one window. */
const freshAt = (windowMs) => START + windowMs + 500;
/** Hit ×4's gap between hits (ms of the widget's clock): far enough apart to read as four marks. */
export const BURST_GAP = 300;
export const reduced = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

export class Widget {
  /**
   * @param root the widget's <figure> (its figcaption names it; its `.stage-slot` receives the picture)
   * @param core loadCore()'s answer
   * @param spec { id, options (RateLimiter options), windowMs, draw(g, fields, ctx), clock, gapMs, client, say(fields) }
   */
  constructor(root, core, spec) {
    this.root = root;
    this.core = core;
    this.spec = spec;
    this.visible = false;
    this.auto = false;
    this.timer = 0;
    this.build();
    this.reset();
  }

  /** The widget's clock (epoch ms). */
  now() {
    return this.stepped ? this.base : this.base + (performance.now() - this.since);
  }

  /** A fresh client: a new limiter, the clock back at 0.5 s, nothing drawn. */
  reset() {
    this.rl?.free?.();
    this.rl = new this.core.RateLimiter(this.spec.options);
    this.hits = []; // { at, allowed }: drawn
    this.times = []; // every hit's time and the core's verdict: the tests' replay
    this.verdicts = [];
    this.stepped = reduced();
    this.base = freshAt(this.spec.windowMs);
    this.since = performance.now();
    this.touched = false;
    this.busy = false;
    this.said.textContent = "";
    this.client.querySelector("pre").textContent = "No request yet.";
    this.root.dataset.fresh = "1";
    this.render(this.now());
    this.spec.after?.(this);
  }

  build() {
    const r = this.root;
    const name = r.querySelector("figcaption")?.textContent.trim() ?? this.spec.id;
    const slot = r.querySelector(".stage-slot") ?? r;
    this.svg = el("svg", { viewBox: `0 0 640 ${H}`, role: "img", "aria-label": name, class: "stage" });
    this.g = el("g", {}, this.svg);
    const bar = document.createElement("div");
    bar.className = "bar-controls";
    const button = (text, cls, on) => {
      const b = Object.assign(document.createElement("button"), { type: "button", className: cls, textContent: text });
      b.addEventListener("click", on);
      bar.append(b);
      return b;
    };
    this.hitButton = button("Hit", "hit", () => this.press(1));
    this.hitButton.setAttribute("aria-describedby", `${r.id}-said`);
    this.burstButton = button("Hit ×4", "hit4", () => this.press(4));
    button("Reset", "reset", () => {
      this.setAuto(false);
      this.reset();
    });
    if (reduced()) {
      this.stepButton = button("+1 s", "step", () => this.step(1000));
      this.stepButton.setAttribute("aria-label", "+1 s: move the clock one second on");
    } else {
      this.autoButton = button("", "auto", () => this.setAuto(!this.auto));
    }
    // What happened, said in words to everyone (and announced to screen readers).
    this.said = Object.assign(document.createElement("output"), { id: `${r.id}-said`, className: "said" });
    this.said.setAttribute("aria-live", "polite");
    this.client = document.createElement("details");
    this.client.className = "client";
    this.client.open = this.spec.client === "open";
    this.client.innerHTML = "<summary>What the client receives for the last hit</summary><pre></pre>";
    slot.append(this.svg, bar, this.said);
    if (this.spec.client) slot.append(this.client);
    this.syncAuto();
  }

  /** The widget came into view or left it. Arriving at a widget left alone gives a fresh client. */
  setVisible(on) {
    if (on && !this.visible && !this.auto && (!this.touched || this.now() - this.times.at(-1) > 2 * this.spec.windowMs)) this.reset();
    this.visible = on;
    this.root.dataset.visible = on ? "1" : "0"; // for the tests: the arrival was seen
    if (!on) clearTimeout(this.timer);
    else this.schedule();
  }

  syncAuto() {
    if (this.autoButton) this.autoButton.textContent = this.auto ? "Pause traffic" : "Play traffic";
    this.root.dataset.auto = this.auto ? "1" : "0";
  }

  setAuto(on) {
    this.auto = on;
    clearTimeout(this.timer);
    this.syncAuto();
    this.schedule();
  }

  /** Sample traffic, only while on screen: random gaps a bit shorter than the limit's pace. */
  schedule() {
    clearTimeout(this.timer);
    if (!this.auto || !this.visible) return;
    const gap = this.spec.gapMs * (0.3 + 1.4 * Math.random());
    this.timer = setTimeout(() => {
      this.hit();
      this.schedule();
    }, gap);
  }

  /** Stepped mode: the clock moves `ms` on. */
  step(ms) {
    this.base += ms;
    this.render(this.now());
  }

  /** The reader's `n` hits: the first now, the others BURST_GAP apart. */
  async press(n) {
    if (this.busy) return;
    this.setAuto(false);
    this.busy = n > 1;
    const marks = [];
    for (let i = 0; i < n; i++) {
      if (i > 0) {
        if (this.stepped) this.step(BURST_GAP);
        else await new Promise((r) => setTimeout(r, BURST_GAP));
      }
      // Stepped: a hit never lands on the previous one's instant, so each reads as its own mark.
      if (i === 0 && this.stepped && this.times.at(-1) === this.now()) this.step(BURST_GAP);
      marks.push(this.hit(true));
    }
    this.busy = false;
    const last = this.lastDecision;
    const state = this.spec.say?.(this.describe(this.now()), this.now()) ?? "";
    const outcome = last.allowed ? "admitted (200)" : `refused (429), try again in ${secs1(last.retryAfter)}`;
    this.said.textContent = `${marks.join(" ")} ${n > 1 ? "Last hit" : "Hit"} ${outcome}. ${state}`.trim();
    this.svg.setAttribute("aria-label", `${this.root.querySelector("figcaption")?.textContent.trim()} ${state}`);
    this.spec.after?.(this);
  }

  /** One hit now, decided by the core; returns its mark (✓ or ✗). */
  hit(reader = false) {
    const now = this.now();
    const d = this.rl.limit(KEY, { now });
    this.lastDecision = d;
    if (reader) this.touched = true;
    this.root.dataset.fresh = "0";
    this.hits.push({ at: now, allowed: d.allowed });
    this.times.push(now);
    this.verdicts.push(d.allowed);
    if (this.hits.length > 400) this.hits.splice(0, 100); // only the recent ones are drawn
    const { status, headers } = response(this.rl, d, now);
    const lines = [`HTTP/1.1 ${status === 200 ? "200 OK" : "429 Too Many Requests"}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.client.querySelector("pre").textContent = lines.join("\n");
    this.root.dataset.status = String(status);
    this.render(now);
    return d.allowed ? "✓" : "✗";
  }

  describe(now) {
    return this.core.describe(this.spec.options, this.rl, KEY, now);
  }

  /** Draws the state at `now` as the core describes it. */
  render(now) {
    const f = this.describe(now);
    this.g.textContent = "";
    const width = fitWidth(this.svg);
    this.spec.draw(this.g, f, { now, hits: this.hits, windowMs: this.spec.windowMs, clock: this.spec.clock, width, origin: START });
    this.root.dataset.state = JSON.stringify(f);
    this.root.dataset.at = String(now);
    this.root.dataset.hits = String(this.times.length);
  }

  /** Every hit so far (epoch ms) and whether the core admitted it: the tests' replay. */
  tape() {
    return { key: KEY, options: this.spec.options, times: [...this.times], allowed: [...this.verdicts] };
  }
}

/** A wait in seconds, rounded up to a tenth (a wait is never shown as 0.0 s). */
export const secs1 = (ms) => `${(Math.ceil(Math.max(0, ms) / 100) / 10).toFixed(1)} s`;
