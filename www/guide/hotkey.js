// Break it: a hot key. One key (an office behind one NAT'd address) sends four requests a round (Hit ×4's gaps),
// five cold keys one each; one RateLimiter (one store) decides every key on its own state. The
// hot key is refused at its limit while the cold keys pass, and every one of its requests is an
// update of the same key's state: the store's one object or row for it takes them in turn.
import { LiveLanes } from "./live-lanes.js";
import { BURST_GAP } from "./widget.js";

const HOT = "office NAT";
const COLD = ["alice", "bob", "carol", "dan", "erin"];

export class HotKeyLive extends LiveLanes {
  constructor(root, core, options, windowMs) {
    super(root, core, { windowMs, buttons: [["Send a round", "hit", 1]] });
    this.options = options;
    this.reset();
  }
  fresh() {
    this.rl?.free?.();
    this.rl = new this.core.RateLimiter(this.options);
    this.log = Object.fromEntries([HOT, ...COLD].map((k) => [k, []]));
  }
  async press() {
    if (this.busy) return;
    this.busy = true;
    const at = this.now();
    this.round = at;
    for (let i = 0; i < 4; i++) {
      if (i > 0) {
        if (this.stepped) this.step(BURST_GAP);
        else await new Promise((r) => setTimeout(r, BURST_GAP));
      }
      const now = this.now();
      this.log[HOT].push({ at: now, allowed: this.rl.limit(HOT, { now }).allowed });
      const cold = COLD[i] ?? null;
      if (cold) this.log[cold].push({ at: now, allowed: this.rl.limit(cold, { now }).allowed });
      if (i === 3) this.log[COLD[4]].push({ at: now, allowed: this.rl.limit(COLD[4], { now }).allowed });
      this.last = now;
      this.root.dataset.fresh = "0";
      this.render(now);
    }
    this.busy = false;
    this.said.textContent = this.say();
  }
  lanes() {
    return [HOT, ...COLD].map((k) => ({ name: k, hits: this.log[k] }));
  }
  say() {
    const hot = this.log[HOT];
    const cold = COLD.flatMap((k) => this.log[k]);
    const ok = (hs) => hs.filter((h) => h.allowed).length;
    const most = Math.max(...COLD.map((k) => this.log[k].length));
    return `${HOT}: ${ok(hot)} admitted, ${hot.length - ok(hot)} refused, ${hot.length} updates of its one key. The ${COLD.length} cold keys: ${ok(cold)} admitted, ${cold.length - ok(cold)} refused, ${most} ${most === 1 ? "update" : "updates"} each at most.`;
  }
  tape() {
    return { options: this.options, log: structuredClone(this.log) };
  }
}
