// A chat where every message passes a token bucket (the core: 3 tokens, one back every 4 s,
// per sender). A spammer posts every second or so and soon sees most of its messages refused;
// you, posting now and then, never notice the limit. The spammer's bucket is drawn.
import { START } from "./core.js";
import { el, fitWidth, W, H } from "./svg.js";
import { draw as drawBucket } from "./draw-bucket.js";

export const CHAT_OPTIONS = { algorithm: "token-bucket", limit: 1, window: 4000, burst: 3 };
const SPAM = ["BUY CHEAP TOKENS!!!", "click here >>> free stuff", "FOLLOW ME", "!!!!!!!!", "best deals, DM me"];

export class ChatDemo {
  constructor(root, core, t0) {
    this.root = root;
    this.core = core;
    this.t0 = t0;
    this.rl = new core.RateLimiter(CHAT_OPTIONS);
    this.log = root.querySelector("ol");
    this.form = root.querySelector("form");
    this.input = root.querySelector("input");
    this.svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "The spammer's token bucket", class: "stage" });
    this.g = el("g", {}, this.svg);
    root.querySelector(".chat-bucket").append(this.svg);
    this.toggle = root.querySelector("button.auto");
    this.spammerHits = [];
    this.entries = { times: [], keys: [], allowed: [] };
    this.auto = !matchMedia("(prefers-reduced-motion: reduce)").matches;
    this.timer = 0;
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.post("you", this.input.value.trim() || "hello!");
      this.input.value = "";
    });
    this.toggle.addEventListener("click", () => {
      this.auto = !this.auto;
      this.sync();
    });
    this.sync();
    this.render(this.now());
  }

  now() {
    return START + (performance.now() - this.t0);
  }

  sync() {
    this.toggle.textContent = this.auto ? "Stop the spammer" : "Let the spammer post";
    clearTimeout(this.timer);
    if (this.auto) this.timer = setTimeout(() => this.spam(), 500 + 700 * Math.random());
  }

  spam() {
    this.post("spammer", SPAM[this.entries.times.length % SPAM.length]);
    this.sync();
  }

  /** One message from `who`: the core decides whether it is posted. */
  post(who, text) {
    const now = this.now();
    const d = this.rl.limit(who, { now });
    this.entries.times.push(now);
    this.entries.keys.push(who);
    this.entries.allowed.push(d.allowed);
    if (who === "spammer") this.spammerHits.push({ at: now, allowed: d.allowed });
    const li = document.createElement("li");
    li.className = `${who} ${d.allowed ? "ok" : "refused"}`;
    const by = Object.assign(document.createElement("b"), { textContent: who === "you" ? "you: " : "spammer: " });
    const msg = Object.assign(document.createElement("span"), { textContent: text });
    const tag = Object.assign(document.createElement("small"), {
      textContent: d.allowed ? "" : ` ✕ refused (429), retry in ${(d.retryAfter / 1000).toFixed(1)} s`,
    });
    li.append(by, msg, tag);
    this.log.append(li);
    while (this.log.children.length > 8) this.log.firstElementChild.remove();
    this.root.dataset.messages = String(this.entries.times.length);
    this.render(now);
  }

  render(now) {
    const f = this.core.describe(CHAT_OPTIONS, this.rl, "spammer", now);
    this.g.textContent = "";
    drawBucket(this.g, f, { now, hits: this.spammerHits, width: fitWidth(this.svg) });
    this.root.dataset.state = JSON.stringify(f);
    this.root.dataset.at = String(now);
    this.root.dataset.hits = String(this.entries.times.length);
  }

  tape() {
    return { options: CHAT_OPTIONS, times: [...this.entries.times], keys: [...this.entries.keys], allowed: [...this.entries.allowed] };
  }
}
