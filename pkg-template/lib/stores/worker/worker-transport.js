// How the Worker store reaches the Worker: over HTTP (`url`, with `fetch`) or a service binding
// (`binding.fetch`, no public hop), with the bearer token, one JSON request per call and a
// timeout. Classifies what came back: a JSON answer (any status) or an outage (no answer in
// time, a refused connection, a body that is not JSON), thrown as `WorkerUnavailableError`.
import { WorkerUnavailableError } from "./worker-errors.js";
import { Deadline } from "../deadline.js";

/** The origin a service binding's requests are addressed to (a binding ignores the host). */
const BINDING_ORIGIN = "https://tollgate.binding";

export class WorkerTransport {
  #base;
  #fetch;
  #auth;

  /** `target`: `{ url, fetch }` or `{ binding }`; `token`: the Worker's `API_TOKEN`, if it has one. */
  constructor({ url, binding, fetch, token }) {
    if (binding !== undefined) {
      this.#base = BINDING_ORIGIN;
      this.#fetch = (u, init) => binding.fetch(u, init);
    } else {
      this.#base = url.replace(/\/+$/, "");
      this.#fetch = fetch;
    }
    this.#auth = token === undefined ? null : `Bearer ${token}`;
  }

  /**
   * Sends one request and resolves to `{ status, body }` (the parsed JSON), or rejects with
   * `WorkerUnavailableError` when nothing usable came back within `timeoutMs` (of this
   * process's own time, the answer already received read first: deadline.js).
   */
  async send(method, path, body, timeoutMs) {
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#auth !== null) headers.authorization = this.#auth;
    const abort = new AbortController();
    const deadline = new Deadline(timeoutMs, () => abort.abort());
    try {
      const res = await this.#fetch(this.#base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: abort.signal,
      });
      const text = await res.text();
      let json;
      try {
        json = JSON.parse(text);
      } catch {
        throw new WorkerUnavailableError(`the Worker answered ${res.status} without JSON`);
      }
      return { status: res.status, body: json };
    } catch (e) {
      if (e instanceof WorkerUnavailableError) throw e;
      if (abort.signal.aborted) throw new WorkerUnavailableError(`the Worker did not answer within ${timeoutMs} ms`, e);
      throw new WorkerUnavailableError(`the Worker could not be reached: ${e?.message ?? e}`, e);
    } finally {
      deadline.clear();
    }
  }
}
