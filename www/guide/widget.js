// One live widget, parameterised per algorithm: a real RateLimiter (the core) deciding the
// hits of one client, a "Hit" button, automatic traffic that pauses on Hit, and a picture of
// the algorithm's state drawn from the core's `describe` at every frame.
//
// The drawn model is on the widget's root as data attributes (`data-state`: describe's
// fields, `data-at`: the epoch ms they describe, `data-hits`: the hits decided by then), so
// tests compare the picture's numbers with the core's.
import { START, response } from "./core.js";
import { el, fitWidth, W, H } from "./svg.js";

const KEY = "you";
const reduced = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

export class Widget {
  /**
   * @param root the widget's <figure> (its figcaption names it)
   * @param core loadCore()'s answer
   * @param spec { id, options (RateLimiter options), windowMs, draw(g, fields, ctx), clock, gapMs, client }
   */
  constructor(root, core, spec, t0) {
    this.root = root;
    this.core = core;
    this.spec = spec;
    this.t0 = t0;
    this.rl = new core.RateLimiter(spec.options);
    this.hits = []; // { at, allowed, auto }: the recent ones, drawn
    this.times = []; // every hit's time and the core's verdict: the tests' replay
    this.verdicts = [];
    this.auto = !reduced();
    this.timer = 0;
    this.build();
    this.render(this.now());
    this.schedule();
  }

  now() {
    return START + (performance.now() - this.t0);
  }

  build() {
    const r = this.root;
    const name = r.querySelector("figcaption")?.textContent.trim() ?? this.spec.id;
    this.svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": name, class: "stage" });
    this.g = el("g", {}, this.svg);
    const bar = document.createElement("div");
    bar.className = "bar-controls";
    this.hitButton = Object.assign(document.createElement("button"), { type: "button", className: "hit", textContent: "Hit" });
    this.hitButton.setAttribute("aria-describedby", `${r.id}-said`);
    this.autoButton = Object.assign(document.createElement("button"), { type: "button", className: "auto" });
    this.said = Object.assign(document.createElement("output"), { id: `${r.id}-said`, className: "said" });
    this.said.setAttribute("aria-live", "polite");
    bar.append(this.hitButton, this.autoButton, this.said);
    this.client = document.createElement("details");
    this.client.className = "client";
    this.client.open = this.spec.client === "open";
    this.client.innerHTML = "<summary>What the client receives for the last hit</summary><pre></pre>";
    r.prepend(this.svg);
    r.append(bar, this.client);
    this.hitButton.addEventListener("click", () => {
      this.setAuto(false);
      this.hit(false);
    });
    this.autoButton.addEventListener("click", () => this.setAuto(!this.auto));
    this.syncAuto();
  }

  syncAuto() {
    this.autoButton.textContent = this.auto ? "Pause traffic" : "Play traffic";
    this.root.dataset.auto = this.auto ? "1" : "0";
  }

  setAuto(on) {
    this.auto = on;
    clearTimeout(this.timer);
    this.syncAuto();
    this.schedule();
  }

  /** The next automatic hit: random gaps around spec.gapMs (a bit faster than the limit). */
  schedule() {
    if (!this.auto) return;
    const gap = this.spec.gapMs * (0.3 + 1.4 * Math.random());
    this.timer = setTimeout(() => {
      this.hit(true);
      this.schedule();
    }, gap);
  }

  /** One hit now, decided by the core. */
  hit(auto) {
    const now = this.now();
    const d = this.rl.limit(KEY, { now });
    this.hits.push({ at: now, allowed: d.allowed, auto });
    this.times.push(now);
    this.verdicts.push(d.allowed);
    if (this.hits.length > 400) this.hits.splice(0, 100); // only the recent ones are drawn
    const { status, headers } = response(this.rl, d, now);
    const lines = [`HTTP/1.1 ${status === 200 ? "200 OK" : "429 Too Many Requests"}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.client.querySelector("pre").textContent = lines.join("\n");
    this.root.dataset.status = String(status);
    if (!auto) this.said.textContent = d.allowed ? "Allowed (200)" : `Blocked (429), ${retryIn(d)}`;
    this.render(now);
  }

  /** Draws the state at `now` as the core describes it. */
  render(now) {
    const f = this.core.describe(this.spec.options, this.rl, KEY, now);
    this.g.textContent = "";
    const width = fitWidth(this.svg);
    this.spec.draw(this.g, f, { now, hits: this.hits, windowMs: this.spec.windowMs, clock: this.spec.clock, width });
    this.root.dataset.state = JSON.stringify(f);
    this.root.dataset.at = String(now);
    this.root.dataset.hits = String(this.times.length);
  }

  /** Every hit so far (epoch ms) and whether the core admitted it: the tests' replay. */
  tape() {
    return { key: KEY, options: this.spec.options, times: [...this.times], allowed: [...this.verdicts] };
  }
}

const retryIn = (d) => `try again in ${(Math.max(0, d.retryAfter) / 1000).toFixed(1)} s`;
