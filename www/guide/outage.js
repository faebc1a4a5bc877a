// Break it: the shared store goes down mid-traffic. While it is up, the core decides against the
// store's state (a RateLimiter: one shared count). While it is down, the store is not asked and
// the configured failure mode answers, as the package's store limiters do (lib/store-limiter.js):
// `failure: "open"` admits and counts nothing; `"closed"` refuses. Counts below are the answers.
import { LiveLanes } from "./live-lanes.js";

export class OutageLive extends LiveLanes {
  constructor(root, core, options, windowMs) {
    super(root, core, { windowMs });
    this.options = options;
    const toggle = (text, on) => {
      const b = Object.assign(document.createElement("button"), { type: "button", className: "toggle", textContent: text });
      b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", () => on(b));
      this.bar.append(b);
      return b;
    };
    this.downButton = toggle("Store down", (b) => {
      this.down = !this.down;
      b.setAttribute("aria-pressed", String(this.down));
      this.root.dataset.down = this.down ? "1" : "0";
    });
    this.closedButton = toggle('failure: "closed"', (b) => {
      this.failure = this.failure === "open" ? "closed" : "open";
      b.setAttribute("aria-pressed", String(this.failure === "closed"));
      this.root.dataset.failure = this.failure;
    });
    this.failure = "open";
    this.root.dataset.failure = "open";
    this.reset();
  }
  fresh() {
    this.rl?.free?.();
    this.rl = new this.core.RateLimiter(this.options);
    this.log = []; // { at, allowed, down, failure }
    // A fresh start has the store up.
    this.down = false;
    this.root.dataset.down = "0";
    this.downButton.setAttribute("aria-pressed", "false");
  }
  pressFrom() {
    return this.log.length;
  }
  decide(now) {
    const allowed = this.down ? this.failure === "open" : this.rl.limit("you", { now }).allowed;
    this.log.push({ at: now, allowed, down: this.down, failure: this.failure });
  }
  lanes() {
    return [
      { name: "Store up", hits: this.log.filter((h) => !h.down) },
      { name: "Store down", hits: this.log.filter((h) => h.down) },
    ];
  }
  say() {
    const up = this.log.filter((h) => !h.down);
    const down = this.log.filter((h) => h.down);
    const n = (hs, a) => hs.filter((h) => h.allowed === a).length;
    const counted = this.core.describe(this.options, this.rl, "you", this.now()).count;
    return `Store up: ${n(up, true)} admitted, ${n(up, false)} refused by the limit. Store down: ${n(down, true)} admitted uncounted, ${n(down, false)} refused by failure "${this.failure}". The store counts ${counted} in the last 4 s.`;
  }
  tape() {
    return { options: this.options, log: this.log.map((h) => ({ ...h })) };
  }
}
