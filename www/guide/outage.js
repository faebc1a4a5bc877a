// Break it: the shared store goes down mid-traffic. While it is up, the core decides against the
// store's state (a RateLimiter: one shared count). While it is down, the hit goes where a real
// deployment sends it: the npm package's store limiter (a WorkerStore limiter with the guide's
// limits, `failure: "open"` or `"closed"`), whose store cannot be reached, so the package's
// outage path answers: the failure mode given to the core (`tollgate::answer::Answer::degraded`
// through the extras module's `StorePolicy.unavailable`), marked `degraded: "unavailable"`.
// Nothing here decides: every `allowed` and figure below is a decision's.
import { LiveLanes } from "./live-lanes.js";
import { secs1 } from "./widget.js";

/** The store's address while it is gone: never fetched, every request fails as a dropped network does. */
const STORE_URL = "https://store.invalid";
const unreachable = () => Promise.reject(new TypeError("Failed to fetch"));

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
    // One store limiter per failure mode, as a deployment configures one: the guide's limits,
    // its store unreachable.
    const gone = (failure) => new this.core.WorkerStore({ url: STORE_URL, fetch: unreachable, policy: "guide", failure }).limiter(this.options);
    this.gone = { open: gone("open"), closed: gone("closed") };
    this.log = []; // { at, down, failure, allowed, remaining, retryAfter, degraded }
    // A fresh start has the store up.
    this.down = false;
    this.root.dataset.down = "0";
    this.downButton.setAttribute("aria-pressed", "false");
  }
  pressFrom() {
    return this.log.length;
  }
  async decide(now) {
    const { down, failure } = this;
    const d = down ? await this.gone[failure].limit("you", { now }) : this.rl.limit("you", { now });
    this.log.push({ at: now, down, failure, allowed: d.allowed, remaining: d.remaining, retryAfter: d.retryAfter, degraded: d.degraded ?? null });
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
    const refused = down.filter((h) => !h.allowed).at(-1);
    const retry = refused ? ` (429, try again in ${secs1(refused.retryAfter)})` : "";
    return `Store up: ${n(up, true)} admitted, ${n(up, false)} refused by the limit. Store down: ${n(down, true)} admitted uncounted, ${n(down, false)} refused by failure "${this.failure}"${retry}. The store counts ${counted} in the last 4 s.`;
  }
  tape() {
    return { options: this.options, log: this.log.map((h) => ({ ...h })) };
  }
}
