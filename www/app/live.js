// Live mode: the same traffic, sent in real time to the Worker serving this page
// (POST /v1/limit, same origin under `make run`), and its real answers charted. The Worker
// decides on its own clock (its `now` is only accepted in TEST_MODE), so live mode always
// runs at 1x on real time; keys get a random per-session prefix so every session starts fresh.
//
// A deployed Worker answers /v1 only with its API token: the page sends the token typed into
// it as `Authorization: Bearer`, and keeps it in sessionStorage, so it lasts for this tab
// only (never in the URL, never in localStorage).

import { makeTrace } from "./traffic.js";
import { Track } from "./track.js";

const TOKEN_KEY = "tollgate.apiToken";

/** The API token typed for this tab ("" when none). */
export function apiToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? "";
  } catch {
    return "";
  }
}

/** Keeps `token` for this tab (an empty one forgets it). */
export function setApiToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage refused (a sandboxed frame): the token then lasts as long as the page's field.
  }
}

/** Request headers for the Worker's API, with the tab's token when there is one. */
function apiHeaders(extra = {}) {
  const token = apiToken();
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

/** A failed call to the Worker's API: its HTTP status and error code. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The Worker's policies (GET /v1/policies): { name: { limits: [{ limit, windowMs, ... }] } }. */
export async function loadPolicies(fetchImpl = fetch) {
  const res = await fetchImpl("/v1/policies", { headers: apiHeaders({ accept: "application/json" }) });
  const body = await res.json().catch(() => null);
  if (!res.ok || !body || typeof body.policies !== "object") {
    const why = body?.error?.message ?? `HTTP ${res.status}`;
    throw new ApiError(res.status, body?.error?.code ?? "", `GET /v1/policies failed: ${why}`);
  }
  return body.policies;
}

const HEADER_NAMES = ["ratelimit-policy", "ratelimit", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"];
const MAX_IN_FLIGHT = 64;
/** The longest span the live traffic spreads one limit's worth of hits over. */
const PACE_MS = 5000;

/**
 * The policy live mode starts with when the link names none: the one whose first limit is
 * the smallest, so denials show within seconds (`login`, 5 a minute, of the Worker's
 * examples).
 */
export function quickestPolicy(policies) {
  const names = Object.keys(policies);
  return names.reduce((best, n) => (policies[n].limits[0].limit < policies[best].limits[0].limit ? n : best), names[0]);
}

export class LiveSession {
  /**
   * @param policyName the Worker policy to send hits under
   * @param policy its description from /v1/policies (the first limit scales the traffic)
   * @param s the page state (traffic, hits, seed)
   */
  constructor(policyName, policy, s) {
    const first = policy.limits[0];
    this.policy = policyName;
    this.windowMs = first.windowMs;
    this.limit = first.limit;
    this.prefix = `playground-${Math.random().toString(36).slice(2, 10)}-`;
    // The traffic reaches the limit within seconds: scaled to the policy's limit over its
    // window, or over PACE_MS when the window is longer (5 a minute is sent as 5 per 5 s).
    this.trace = makeTrace({ pattern: s.traffic, n: s.hits, seed: s.seed, limit: first.limit, windowMs: Math.min(first.windowMs, PACE_MS) });
    this.keys = this.trace.keys;
    this.focus = this.trace.focus;
    this.track = new Track();
    this.headerSets = [];
    this.clock = 0; // real ms since the session started, not counting pauses
    this.next = 0;
    this.auto = true;
    this.paused = false;
    this.inFlight = 0;
    this.sent = 0;
    this.failures = 0;
    this.lastError = "";
    this.version = 0;
  }

  get traceEnd() {
    const ts = this.trace.times;
    return (ts.length ? ts[ts.length - 1] : 0) + this.windowMs;
  }

  advance(realMs) {
    if (!this.paused) this.clock += realMs;
  }

  /** Sends the trace's hits that are due (at most MAX_IN_FLIGHT outstanding; the rest wait). */
  process() {
    const { times, keyIdx } = this.trace;
    while (this.auto && this.next < times.length && times[this.next] <= this.clock && this.inFlight < MAX_IN_FLIGHT) {
      this.send(keyIdx[this.next]);
      this.next++;
    }
  }

  /** The Hit button: stops the automatic traffic and sends one hit of the focus key. */
  hit() {
    this.auto = false;
    return this.send(this.focus);
  }

  resumeTraffic() {
    const { times } = this.trace;
    while (this.next < times.length && times[this.next] <= this.clock) this.next++;
    this.auto = true;
  }

  async send(k) {
    this.inFlight++;
    this.sent++;
    try {
      const res = await fetch("/v1/limit", {
        method: "POST",
        headers: apiHeaders({ "content-type": "application/json" }),
        body: JSON.stringify({ key: this.prefix + this.keys[k], policy: this.policy }),
      });
      const body = await res.json();
      // A denial is an answer (200, "allowed": false), or a 429 for a policy that asks for it.
      if (res.status !== 200 && res.status !== 429) {
        throw new Error(body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`);
      }
      // Charted when the answer arrives (the Worker decided between send and arrival), so
      // the track's times stay ascending.
      const i = this.track.push(this.clock, k, body);
      if (k === this.focus) this.track.level(this.clock, body.remaining);
      const h = {};
      for (const name of HEADER_NAMES) {
        const v = res.headers.get(name);
        if (v !== null) h[name] = v;
      }
      this.headerSets[i] = h;
    } catch (e) {
      this.failures++;
      this.lastError = e.message;
    } finally {
      this.inFlight--;
      this.version++;
    }
  }

  /** The headers the Worker sent with hit i. */
  headers(i) {
    return this.headerSets[i] ?? {};
  }
}
