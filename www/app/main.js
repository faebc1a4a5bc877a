// The playground page: reads its state from the URL, wires the form to the simulation (or to
// the live Worker), and draws once per animation frame when something changed.
//
// Test hook: `window.playground` exposes the tape (what was played) and the current state,
// so the browser tests can replay the same hits through the Node build of the package.

import { ALGORITHMS, DEFAULTS, fromSearch, toSearch, limiterOptions } from "./params.js";
import { ALGORITHM_DOCS } from "./algorithm-docs.js";
import { PROSE } from "./prose.js";
import { StateReader } from "./state-reader.js";
import { describeHit, countedOf } from "./readout.js";
import { npmSnippet, tomlSnippet, rustSnippet } from "./snippets.js";
import { Player, START } from "./player.js";
import { drawTimeline } from "./timeline.js";
import { maxInWindow, disagreements } from "./measure.js";
import { setupCalendar } from "./calendar.js";
import { LiveSession, loadPolicies, apiToken, setApiToken, quickestPolicy } from "./live.js";

const $ = (id) => document.getElementById(id);
const form = $("controls");

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
}
function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
}

const fmtTime = (ms) => (Math.abs(ms) >= 1000 ? `${(ms / 1000).toFixed(3)} s` : `${ms.toFixed(1)} ms`);

// ---- state <-> form ------------------------------------------------------------------------

function writeForm(s) {
  $("algorithm").value = s.algorithm;
  $("limit").value = s.limit;
  $("window").value = s.window;
  $("burst").value = s.burst ?? "";
  $("precision").value = s.precision ?? "";
  $("traffic").value = s.traffic;
  $("hits").value = String(s.hits);
  $("seed").value = s.seed;
  $("speed").value = String(s.speed);
  $(s.view === "compare" ? "view-compare" : "view-single").checked = true;
  $("span").value = String(s.span);
  $("live").checked = s.live;
  $("standardHeaders").value = String(s.standardHeaders);
  $("legacyHeaders").checked = s.legacyHeaders;
}

/** The form as a state. Numbers go to the core as typed; it names what it refuses. */
function readForm() {
  const num = (id) => ($(id).value.trim() === "" ? null : Number($(id).value));
  return {
    algorithm: $("algorithm").value,
    limit: num("limit") ?? NaN,
    window: num("window") ?? NaN,
    burst: num("burst"),
    precision: num("precision"),
    traffic: $("traffic").value,
    hits: Number($("hits").value),
    seed: num("seed") ?? DEFAULTS.seed,
    speed: Number($("speed").value),
    view: $("view-compare").checked ? "compare" : "single",
    span: Number($("span").value),
    live: $("live").checked,
    policy: $("policy").value || state.policy,
    standardHeaders: $("standardHeaders").value === "false" ? false : $("standardHeaders").value,
    legacyHeaders: $("legacyHeaders").checked,
    // The calendar panel's settings change through its own callback (setupCalendar).
    quota: state?.quota ?? DEFAULTS.quota,
    offset: state?.offset ?? DEFAULTS.offset,
  };
}

const SIM_FIELDS = ["limit", "window", "burst", "precision", "traffic", "hits", "seed"];

// ---- the page ------------------------------------------------------------------------------

let state;
let player;
let live = null; // a LiveSession while live mode is on
let policies = null;
let selected = -1; // the hit whose headers are shown; -1: the latest
let geometry = null;
let drawn = "";
let lastCompare = 0;
let lastMax = 0;
let lastAnnounce = 0;
let lastTs = performance.now();
let describeState = null; // the playground module's export (www-wasm/)
const readers = new WeakMap(); // Run -> StateReader
let readoutFields = null; // the fields the readout words (for the tests' hook)

function source() {
  return live ?? player.run(state.algorithm);
}

function boundariesOf(run, x0, x1) {
  if (!run.clockWindows) return run.track.boundaries;
  const w = player.windowMs;
  if ((x1 - x0) / w > 400) return [];
  const out = [];
  for (let b = Math.ceil((START + x0) / w) * w - START; b <= x1; b += w) out.push(b);
  return out;
}

/** The time shown: the whole trace, or the last `span` windows up to the clock. */
function range() {
  const d = live ?? player;
  if (state.span > 0) {
    const width = state.span * d.windowMs;
    const x1 = Math.max(d.clock, width);
    return [x1 - width, x1];
  }
  // Live: up to now (real time grows); simulation: the whole trace, or further after Hit.
  return live ? [0, Math.max(live.clock, live.windowMs)] : [0, Math.max(d.traceEnd, d.clock)];
}

function renderSingle() {
  const src = source();
  const [x0, x1] = range();
  const t = src.track;
  geometry = drawTimeline($("timeline"), {
    track: t,
    keys: src.keys,
    x0,
    x1,
    boundaries: live ? [] : boundariesOf(src, x0, x1),
    level: true,
    levelMax: Math.max(t.levelMax, t.limit, live ? live.limit : state.limit),
    selected: selected < 0 ? t.n - 1 : selected,
    state: readoutFields,
    start: START,
    windowMs: live ? live.windowMs : player.windowMs,
  });
  $("timeline").dataset.hits = String(t.n);
  // What is drawn, for the tests: the lanes' height, and the state over the chosen hit's lane.
  $("timeline").dataset.lane = String(geometry.laneHeight);
  $("timeline").dataset.state = readoutFields ? JSON.stringify(readoutFields) : "";
  $("timeline").dataset.stateHit = readoutFields ? $("state-readout").dataset.hit : "";
  $("single-title").textContent = live
    ? `Live: the Worker's answers (policy "${live.policy}")`
    : `Timeline: ${ALGORITHMS.find((a) => a.id === state.algorithm).label}`;
}

/** The counts line, for the chosen algorithm (or the live Worker) in either view. */
function renderCounts(force) {
  const src = source();
  const t = src.track;
  const windowMs = live ? live.windowMs : player.windowMs;
  $("allowed-count").value = t.allowedCount;
  $("blocked-count").value = t.blockedCount;
  $("total-count").value = t.n;
  // A pass over every hit: while hits stream in, at most four times a second.
  const now = performance.now();
  if (force || now - lastMax > 250 || !(live ?? player).auto || (live ?? player).paused || player.ended) {
    lastMax = now;
    $("max-in-window").value = maxInWindow(t, windowMs, src.keys.length);
  }
  $("window-label").value = fmtTime(windowMs);
  $("limit-label").value = live ? live.limit : state.limit;
  $("sim-time").value = live ? `${fmtTime(live.clock)} of real time, policy "${live.policy}"` : `${fmtTime(player.clock)} simulated`;
  if (live && live.lastError) showError(`Live: ${live.failures} failed (${live.lastError})`);
}

function buildCompareRows() {
  const body = $("compare-table").tBodies[0];
  body.textContent = "";
  for (const a of ALGORITHMS) {
    const tr = document.createElement("tr");
    tr.dataset.algorithm = a.id;
    tr.innerHTML = `<th scope="row"></th><td><canvas class="strip" height="48" role="img"></canvas></td>
      <td class="allowed"></td><td class="blocked"></td><td class="max"></td>`;
    const th = tr.querySelector("th");
    th.textContent = a.label;
    const doc = ALGORITHM_DOCS[a.id];
    const about = document.createElement("details");
    about.innerHTML = "<summary>about</summary><p></p><p></p><p></p>";
    const [pros, cons, pick] = about.querySelectorAll("p");
    pros.textContent = `Pros: ${doc.pros.replaceAll("`", "")}`;
    cons.textContent = `Cons: ${doc.cons.replaceAll("`", "")}`;
    pick.textContent = `Pick it when: ${doc.pick.replaceAll("`", "")}`;
    th.append(about);
    const strip = tr.querySelector("canvas");
    strip.setAttribute("aria-label", `${a.label}: allowed and blocked hits over time; click a hit for its headers`);
    // A click picks this algorithm and the nearest hit, whose headers the panel then shows.
    strip.addEventListener("click", (e) => {
      if (!tr.geometry) return;
      const t = tr.geometry.toTime(e.offsetX);
      $("algorithm").value = a.id;
      onChange();
      selected = player.run(a.id).track.nearest(t);
      render(true);
    });
    body.append(tr);
  }
}

function renderCompare() {
  const [x0, x1] = range();
  const log = player.run("sliding-log").track;
  const counter = player.run("sliding-window").track;
  const diff = disagreements(log, counter);
  for (const tr of $("compare-table").tBodies[0].rows) {
    const run = player.run(tr.dataset.algorithm);
    const t = run.track;
    tr.geometry = drawTimeline(tr.querySelector("canvas"), {
      track: t,
      keys: run.keys,
      collapse: true,
      level: false,
      x0,
      x1,
      boundaries: boundariesOf(run, x0, x1),
      mark: run.id === "sliding-log" || run.id === "sliding-window" ? diff.mask : null,
      selected: -1,
    });
    const max = maxInWindow(t, player.windowMs, run.keys.length);
    tr.querySelector(".allowed").textContent = t.allowedCount;
    tr.querySelector(".blocked").textContent = t.blockedCount;
    tr.querySelector(".max").textContent = `${max}${max > state.limit ? ` (${(max / state.limit).toFixed(2)} x limit)` : ""}`;
    tr.dataset.max = String(max);
    tr.dataset.allowed = String(t.allowedCount);
  }
  $("disagreements").value = diff.count;
}

function renderHeaders() {
  const src = source();
  const t = src.track;
  const i = selected < 0 ? t.n - 1 : Math.min(selected, t.n - 1);
  if (i < 0) {
    $("hit-label").value = "no hit yet";
    $("headers").textContent = "";
    return;
  }
  const h = live ? src.headers(i) : src.headers(i, { standardHeaders: state.standardHeaders, legacyHeaders: state.legacyHeaders });
  const who = live ? `the Worker, policy "${live.policy}"` : ALGORITHMS.find((a) => a.id === state.algorithm).label;
  $("hit-label").value = `${who}, hit ${i + 1} of ${t.n}: key "${src.keys[t.key[i]]}" at ${fmtTime(t.t[i])}, ${t.allowed[i] ? "allowed" : "blocked"}${selected < 0 ? " (following the latest)" : ""}`;
  $("headers").textContent = Object.entries(h)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");
  $("headers").dataset.hit = String(i);
  renderReadout(src, i);
}

/** The state that decided hit i, as the core describes it, in words (simulation only). */
function renderReadout(src, i) {
  const out = $("state-readout");
  if (live || !describeState) {
    out.textContent = live ? "Live mode: the Worker keeps the state; its answers and headers are shown." : "";
    delete out.dataset.kind;
    readoutFields = null;
    return;
  }
  let reader = readers.get(src);
  if (!reader) {
    reader = new StateReader(player.RateLimiter, describeState, limiterOptions(src.id, state), START, src.keys);
    readers.set(src, reader);
  }
  const f = reader.before(src.track, i);
  const d = src.track.decision(i);
  out.textContent = describeHit(f, d, START);
  out.dataset.kind = f.kind;
  out.dataset.hit = String(i);
  out.dataset.counted = String(countedOf(f));
  readoutFields = f;
}

/** Module-doc text into `el`: `code` spans as <code>, the rest as text (never as HTML). */
function fillDoc(el, text) {
  el.textContent = "";
  text.split("`").forEach((part, i) => {
    if (i % 2 === 0) el.append(part);
    else el.append(Object.assign(document.createElement("code"), { textContent: part }));
  });
}

/** The explanation beside the chart (the compare rows carry theirs in an "about"). */
function renderExplanation() {
  if ($("explain").dataset.algorithm === state.algorithm) return;
  const doc = ALGORITHM_DOCS[state.algorithm];
  $("explain-title").textContent = doc.title;
  $("explain-what").textContent = "";
  $("explain-what").append(Object.assign(document.createElement("p"), { textContent: PROSE[state.algorithm] }));
  // The module docs' own wording, with its formulas, behind a fold.
  $("explain-formulas").textContent = "";
  for (const p of doc.what) {
    const code = p.includes("\n");
    const el = document.createElement(code ? "pre" : "p");
    if (code) el.textContent = p;
    else fillDoc(el, p);
    $("explain-formulas").append(el);
  }
  for (const k of ["guarantee", "pros", "cons", "pick"]) fillDoc($(`explain-${k}`), doc[k]);
  $("explain-source").textContent = doc.source;
  $("explain").dataset.algorithm = state.algorithm;
}

let snippetsFor = "";
function renderSnippets() {
  const key = JSON.stringify([state.algorithm, state.limit, state.window, state.burst, state.precision, state.standardHeaders, state.legacyHeaders]);
  if (key === snippetsFor) return;
  snippetsFor = key;
  $("code-npm").textContent = npmSnippet(state.algorithm, state);
  $("code-toml").textContent = tomlSnippet(state.algorithm, state);
  $("code-rust").textContent = rustSnippet(state.algorithm, state);
}

/** A short spoken summary, at most every two seconds (and after each Hit). */
function announce(force) {
  const now = performance.now();
  if (!force && now - lastAnnounce < 2000) return;
  lastAnnounce = now;
  const t = source().track;
  $("announce").textContent = `${t.allowedCount} allowed, ${t.blockedCount} blocked`;
}

function render(force = false) {
  const src = source();
  // Live: also ten times a second, as real time moves the chart on between answers.
  const key = `${live ? `live${live.version}:${Math.floor(live.clock / 100)}` : player.version}|${state.view}|${selected}|${state.algorithm}|${state.span}|${state.standardHeaders}|${state.legacyHeaders}`;
  if (!force && key === drawn) return;
  drawn = key;
  const compare = state.view === "compare" && !live;
  $("compare-view").hidden = !compare;
  $("single-view").hidden = compare;
  if (compare) {
    const now = performance.now();
    if (force || now - lastCompare > 150 || player.ended || player.paused) {
      lastCompare = now;
      renderCompare();
    } else {
      drawn = ""; // draw again next frame
    }
  } else {
    renderHeaders(); // first: the chart draws the state the readout found
    renderSingle();
  }
  renderCounts(force);
  renderExplanation();
  renderSnippets();
  if (compare) renderHeaders();
  announce(false);
  $("timeline").dataset.version = String(live ? live.version : player.version);
  document.body.dataset.hits = String(src.track.n);
}

function frame() {
  const now = performance.now();
  const dt = Math.min(now - lastTs, 250);
  lastTs = now;
  if (live) {
    live.advance(dt);
    live.process();
  } else {
    player.advance(dt);
    player.process(8);
  }
  render();
  requestAnimationFrame(frame);
}

/** Catches the clock up to this instant (between frames), then returns the active driver. */
function driverNow() {
  const now = performance.now();
  const dt = Math.min(now - lastTs, 250);
  lastTs = now;
  const d = live ?? player;
  d.advance(dt);
  return d;
}

function updateUrl() {
  history.replaceState(null, "", `${location.pathname}${toSearch(state)}`);
}

function syncButtons() {
  const d = live ?? player;
  // The label says what the button does next (a stable label with aria-pressed would too).
  $("pause").textContent = d.paused ? "Play" : "Pause";
  $("resume-traffic").disabled = d.auto;
  $("to-end").disabled = !!live;
  $("view-compare").disabled = !!live;
  $("speed").disabled = !!live;
  $("policy").disabled = !live;
  // The Worker's policy decides in live mode; the page's own limit does not apply.
  $("limit-fields").disabled = !!live;
}

async function startLive() {
  try {
    policies ??= await loadPolicies();
  } catch (e) {
    $("live").checked = false;
    state.live = false;
    updateUrl();
    syncButtons();
    if (e.status === 401) {
      showError(`Live mode: the Worker needs its API token; type it in "Worker API token" and turn Live on again (${e.message})`);
    } else {
      showError(`Live mode needs the Worker serving this page (make run, then http://127.0.0.1:8787/): ${e.message}`);
    }
    return;
  }
  const names = Object.keys(policies);
  const sel = $("policy");
  if (sel.options.length !== names.length) {
    sel.textContent = "";
    for (const n of names) {
      const l = policies[n].limits[0];
      sel.append(new Option(`${n} (${l.algorithm}, ${l.limit} per ${fmtTime(l.windowMs)}${policies[n].limits.length > 1 ? ", ..." : ""})`, n));
    }
  }
  // None named: the policy that shows denials soonest; an unknown name: the first policy.
  if (state.policy === "") state.policy = quickestPolicy(policies);
  else if (!names.includes(state.policy)) state.policy = names[0];
  sel.value = state.policy;
  live = new LiveSession(state.policy, policies[state.policy], state);
  selected = -1;
  clearError();
  syncButtons();
  updateUrl();
  render(true);
}

function stopLive() {
  live = null;
  selected = -1;
  syncButtons();
  render(true);
}

function onChange() {
  const next = readForm();
  // Every algorithm already decides every hit, so picking another one only redraws.
  const simChanged = SIM_FIELDS.some((f) => next[f] !== state[f]);
  try {
    if (simChanged) player.configure(next);
  } catch (e) {
    showError(e.message);
    return; // nothing changed: the simulation keeps its last good settings, the URL too
  }
  clearError();
  const liveChanged = next.live !== state.live || (next.live && next.policy !== state.policy) || (next.live && simChanged);
  player.speed = next.speed;
  state = next;
  updateUrl();
  syncButtons();
  if (liveChanged) {
    if (state.live) startLive();
    else stopLive();
  }
  render(true);
}

async function main() {
  let tollgate;
  try {
    // `tollgate/lite`'s entry: the page needs only `RateLimiter` with one limit and one key per
    // call (limit, peek, headers), so it fetches only the lite module (39 KB gzipped, not 51).
    tollgate = await import("../vendor/tollgate/web/lite.js");
    // The playground's own module (www-wasm/): the core's description of a key's state.
    const own = await import("../vendor/tollgate-www/tollgate_www.js");
    await own.default({ module_or_path: new URL("../vendor/tollgate-www/tollgate_www_bg.wasm", import.meta.url) });
    describeState = own.describeState;
  } catch (e) {
    showError(`The tollgate wasm build is missing from www/vendor/tollgate (${e.message}). Run "make www" (make run does it).`);
    return;
  }
  player = new Player(tollgate.RateLimiter);
  state = fromSearch(location.search);
  writeForm(state);
  try {
    player.configure(state);
  } catch (e) {
    showError(`The link's settings were refused, so the defaults are shown: ${e.message}`);
    state = { ...DEFAULTS };
    writeForm(state);
    player.configure(state);
  }
  player.speed = state.speed;
  setupCalendar(tollgate.RateLimiter, state, (c) => {
    state = { ...state, ...c };
    updateUrl();
  });
  // A reader who asked for less motion sees the whole trace at once, not dots streaming in.
  if (matchMedia("(prefers-reduced-motion: reduce)").matches) player.skipToEnd();
  buildCompareRows();
  for (const b of document.querySelectorAll("button.copy")) {
    b.addEventListener("click", async () => {
      const text = $(b.dataset.for).textContent;
      try {
        await navigator.clipboard.writeText(text);
        b.textContent = "Copied";
      } catch {
        // No clipboard (an insecure origin): select the text so Ctrl+C copies it.
        getSelection().selectAllChildren($(b.dataset.for));
        b.textContent = "Selected: Ctrl+C";
      }
      setTimeout(() => (b.textContent = "Copy"), 1500);
    });
  }

  form.addEventListener("change", onChange);
  // The token is no setting of the page: never in the URL, kept in this tab's sessionStorage.
  $("token").value = apiToken();
  $("token").addEventListener("change", () => {
    setApiToken($("token").value.trim());
    policies = null;
    if (state.live) startLive();
  });
  $("hit").addEventListener("click", async () => {
    const d = driverNow();
    selected = -1;
    if (d === player) d.hit();
    syncButtons();
    if (d === live) await live.hit();
    render(true);
    announce(true);
  });
  $("pause").addEventListener("click", () => {
    const d = driverNow();
    d.paused = !d.paused;
    syncButtons();
  });
  $("resume-traffic").addEventListener("click", () => {
    driverNow().resumeTraffic();
    syncButtons();
  });
  $("to-end").addEventListener("click", () => {
    if (!live) player.skipToEnd();
    syncButtons();
  });
  $("restart").addEventListener("click", () => {
    if (live) {
      startLive();
      return;
    }
    player.restart();
    player.configure(state);
    selected = -1;
    syncButtons();
    render(true);
  });
  const step = (delta) => {
    const n = source().track.n;
    if (n === 0) return;
    const cur = selected < 0 ? n - 1 : selected;
    const to = cur + delta;
    selected = to >= n - 1 && delta > 0 ? -1 : Math.max(0, Math.min(n - 1, to));
    render(true);
  };
  $("prev-hit").addEventListener("click", () => step(-1));
  $("next-hit").addEventListener("click", () => step(1));
  $("timeline").addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      step(e.key === "ArrowLeft" ? -1 : 1);
    }
  });
  $("timeline").addEventListener("click", (e) => {
    if (!geometry) return;
    const i = source().track.nearest(geometry.toTime(e.offsetX), geometry.toLane(e.offsetY));
    if (i >= 0) {
      selected = i;
      render(true);
    }
  });
  window.addEventListener("resize", () => render(true));

  window.playground = {
    START,
    state: () => ({ ...state }),
    tape: () => ({ times: [...player.tapeT], keyIdx: [...player.tapeK], keys: [...player.trace.keys], manual: player.manualHits }),
    readout: () => readoutFields,
    live: () => (live ? { prefix: live.prefix, policy: live.policy, sent: live.sent, answered: live.track.n, inFlight: live.inFlight } : null),
  };
  syncButtons();
  if (state.live) await startLive();
  render(true);
  document.body.dataset.ready = "1";
  requestAnimationFrame(frame);
}

main();
