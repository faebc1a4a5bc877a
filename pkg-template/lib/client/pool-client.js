// The HTTP side of capacity leases: one holder's calls to the tollgate Worker's pool
// endpoints (`POST /v1/pools/{pool}/leases`, `DELETE .../leases/{holder}`), their answers
// checked and their failures as `LeaseError`s. What an answer means for the holder's pacing
// is decided elsewhere (lib/client/lease.js and the core's `LeaseHolder`).
import { bad } from "./pacer.js";

/**
 * A lease request failed. `code` is the Worker's error code (`unknown_pool`, `unauthorized`,
 * `invalid_partitions`, `invalid_ttl`, `unavailable`, ...) or the client's own: `network` (the
 * Worker could not be reached), `bad_answer` (the answer was not a lease), `closed`.
 * `status` is the HTTP status (0 when there was none).
 */
export class LeaseError extends Error {
  constructor(message, { code, status = 0, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "LeaseError";
    this.code = code;
    this.status = status;
  }

  /** Whether asking again may help: no answer, a 5xx, 408 or 429. */
  get transient() {
    return this.status === 0 ? this.code === "network" : this.status >= 500 || this.status === 408 || this.status === 429;
  }
}

/** The Worker's base URL, without a trailing slash. */
export function baseUrl(url) {
  if (typeof url !== "string" && !(url instanceof URL)) {
    throw bad("invalid_type", "url", url, "the Worker's base URL as a string");
  }
  let u;
  try {
    u = new URL(String(url));
  } catch {
    throw bad("invalid_value", "url", String(url), 'an absolute http(s) URL such as "https://limits.example.com"');
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw bad("invalid_value", "url", String(url), "http or https");
  return u.href.replace(/\/+$/, "");
}

/** A grant's answer, checked: what the holder needs of it. */
function leaseAnswer(json) {
  const ok =
    json !== null &&
    typeof json === "object" &&
    Array.isArray(json.partitions) &&
    json.partitions.every((p) => Number.isInteger(p) && p >= 0) &&
    [json.rate, json.window, json.ttlMs].every((n) => Number.isInteger(n) && n >= 0);
  if (!ok) throw new LeaseError(`the pool's answer is not a lease: ${JSON.stringify(json)?.slice(0, 200)}`, { code: "bad_answer", status: 200 });
  return json;
}

/** One holder of one pool, as the Worker's API sees it. */
export class PoolClient {
  #base;
  #pool;
  #holderName;
  #token;
  #fetch;

  /** `base` checked by `baseUrl`; `token` optional; `fetch` a function. */
  constructor({ base, pool, holder, token, fetch }) {
    this.#base = base;
    this.#pool = pool;
    this.#holderName = holder;
    this.#token = token;
    this.#fetch = fetch;
  }

  /** Up to `partitions` in all until `ttlMs` from when the pool acts: the checked answer. */
  async grant(partitions, ttlMs) {
    return leaseAnswer(await this.#request("POST", "/leases", { holder: this.#holderName, partitions, ttlMs }));
  }

  /** Gives back everything held: how many partitions came back (0 when none was held). */
  async release() {
    try {
      const r = await this.#request("DELETE", `/leases/${encodeURIComponent(this.#holderName)}`);
      return Number(r?.released ?? 0);
    } catch (e) {
      if (e instanceof LeaseError && e.code === "lease_not_held") return 0;
      throw e;
    }
  }

  async #request(method, path, body) {
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    const url = `${this.#base}/v1/pools/${encodeURIComponent(this.#pool)}${path}`;
    let res;
    try {
      // Called as a plain function: a browser's fetch refuses another `this`.
      const fetchFn = this.#fetch;
      res = await fetchFn(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      throw new LeaseError(`could not reach the pool at ${url}: ${e?.message ?? e}`, { code: "network", cause: e });
    }
    let json;
    try {
      json = await res.json();
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const err = json?.error;
      const code = typeof err?.code === "string" ? err.code : `http_${res.status}`;
      const message = typeof err?.message === "string" ? err.message : `HTTP ${res.status}`;
      throw new LeaseError(`pool "${this.#pool}", holder "${this.#holderName}": ${message} (${code})`, { code, status: res.status });
    }
    return json;
  }
}
