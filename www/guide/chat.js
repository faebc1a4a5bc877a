// The story the guide opens with: a chat room with a crowd and one spammer. Every message
// passes a token bucket per sender (the core: 3 messages at once, then one every 2 s). A
// switch turns rate limiting off and on; the room shows what the others see: with the
// limiter off, the spammer's flood pushes everyone else's messages out; with it on, the
// spammer gets 3 in and then one every 2 s, and the crowd never notices the limit. Refused
// messages never reach the room; they are only counted. Posting runs only while the chat is
// on screen, and not at all under reduced motion until the reader asks ("Post a round").
import { START } from "./core.js";

export const CHAT_OPTIONS = { algorithm: "token-bucket", limit: 1, window: 2000, burst: 3 };
const SPAM = ["BUY CHEAP TOKENS!!!", "click here >>> free stuff", "FOLLOW ME", "!!!!!!!!", "best deals, DM me", "FREE GIFT CARDS"];
const CROWD = [
  ["Ana", ["anyone up for the 7pm game?", "brb, coffee", "that was close!", "gg everyone"]],
  ["Bo", ["I'm in", "who's hosting?", "lol", "same time tomorrow?"]],
  ["Chen", ["new patch notes are out", "did they fix the lag?", "works for me now", "nice"]],
];
/** Messages the room shows (its height is fixed in the CSS, so nothing below it moves). */
const SHOWN = 6;

export class ChatDemo {
  constructor(root, core, t0) {
    this.root = root;
    this.core = core;
    this.t0 = t0;
    this.rl = new core.RateLimiter(CHAT_OPTIONS);
    this.log = root.querySelector(".chat-log");
    this.form = root.querySelector("form");
    this.input = root.querySelector("input");
    this.switch = root.querySelector("[role=switch]");
    this.tally = root.querySelector(".chat-tally");
    this.roundButton = root.querySelector("button.round");
    this.on = true;
    this.visible = false;
    this.still = matchMedia("(prefers-reduced-motion: reduce)").matches;
    this.entries = { times: [], keys: [], allowed: [] };
    this.counts = { sent: 0, shown: 0, refused: 0 };
    this.timers = [];
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.post("you", this.input.value.trim() || "hello!");
      this.input.value = "";
    });
    this.switch.addEventListener("click", () => this.setOn(!this.on));
    this.roundButton.addEventListener("click", () => this.round());
    this.setOn(true);
  }

  now() {
    return START + (performance.now() - this.t0);
  }

  setOn(on) {
    this.on = on;
    this.switch.setAttribute("aria-checked", String(on));
    this.switch.querySelector(".state").textContent = on ? "on" : "off";
    this.root.dataset.limiting = on ? "on" : "off";
    this.counts = { sent: 0, shown: 0, refused: 0 };
    this.sayTally();
  }

  /** Posting runs only while the chat is on screen. */
  setVisible(on) {
    this.visible = on;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    if (on && !this.still) this.run();
  }

  run() {
    const spam = () => {
      this.post("spammer", SPAM[this.counts.sent % SPAM.length]);
      this.timers[0] = setTimeout(spam, 250 + 200 * Math.random());
    };
    this.timers[0] = setTimeout(spam, 300);
    CROWD.forEach(([name, lines], i) => {
      let n = 0;
      const talk = () => {
        this.post(name, lines[n++ % lines.length]);
        this.timers[i + 1] = setTimeout(talk, 2500 + 3500 * Math.random());
      };
      this.timers[i + 1] = setTimeout(talk, 400 + 900 * i);
    });
  }

  /** Stepped (reduced motion): one round, the spammer's four messages and one from each of the crowd. */
  round() {
    for (let i = 0; i < 4; i++) this.post("spammer", SPAM[this.counts.sent % SPAM.length]);
    for (const [name, lines] of CROWD) this.post(name, lines[this.entries.times.length % lines.length]);
  }

  /** One message from `who`: with limiting on, the core decides whether the room sees it. */
  post(who, text) {
    const now = this.now();
    // Limiting off: nothing decides, every message reaches the room. On: the core's decision.
    const d = this.on ? this.rl.limit(who, { now }) : null;
    if (d) {
      this.entries.times.push(now);
      this.entries.keys.push(who);
      this.entries.allowed.push(d.allowed);
    }
    const refused = d !== null && !d.allowed;
    if (who === "spammer") {
      this.counts.sent++;
      if (refused) this.counts.refused++;
      else this.counts.shown++;
      this.sayTally();
    }
    this.root.dataset.messages = String(this.entries.times.length);
    if (refused) return;
    const li = document.createElement("li");
    li.className = who === "spammer" ? "spammer" : who === "you" ? "you" : "crowd";
    const by = Object.assign(document.createElement("b"), { textContent: `${who}: ` });
    const msg = Object.assign(document.createElement("span"), { textContent: text });
    li.append(by, msg);
    this.log.append(li);
    while (this.log.children.length > SHOWN) this.log.firstElementChild.remove();
    const spam = [...this.log.children].filter((l) => l.classList.contains("spammer")).length;
    this.root.dataset.spamShown = String(spam);
  }

  sayTally() {
    const { sent, shown, refused } = this.counts;
    this.tally.textContent = this.on
      ? `Limiter on: the spammer sent ${sent}, the room saw ${shown}, ${refused} refused (429).`
      : `Limiter off: the spammer sent ${sent}, the room saw all ${shown}.`;
  }

  tape() {
    return { options: CHAT_OPTIONS, times: [...this.entries.times], keys: [...this.entries.keys], allowed: [...this.entries.allowed] };
  }
}
