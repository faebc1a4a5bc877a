// Time for decisions over Redis: the caller's clock (default), or the Redis server's TIME, so
// that nodes whose clocks disagree still decide on one time line (time
// from one authority). Asking TIME before every decision would double the round trips, so the
// offset between the two clocks is measured (half the round trip corrects for latency) and
// measured again once it is older than `refreshMs`.

export class RedisClock {
  #client;
  #local;
  #refreshMs;
  #offset = 0;
  #sampledAt = -Infinity;
  #sampling = null;

  /** @param client adapted client @param local () => epoch ms @param refreshMs re-measure age */
  constructor(client, local, refreshMs) {
    this.#client = client;
    this.#local = local;
    this.#refreshMs = refreshMs;
  }

  /** Epoch ms on the Redis server's clock (may ask Redis's TIME first). */
  async now() {
    const t = this.#local();
    if (t - this.#sampledAt >= this.#refreshMs || t < this.#sampledAt) await this.#sample();
    return this.#local() + this.#offset;
  }

  /** The last measured offset, in ms (Redis minus local). */
  get offset() {
    return this.#offset;
  }

  #sample() {
    this.#sampling ??= (async () => {
      try {
        const t0 = this.#local();
        const [secs, micros] = await this.#client.send(["TIME"]);
        const t1 = this.#local();
        this.#offset = Number(secs) * 1000 + Number(micros) / 1000 - (t0 + t1) / 2;
        this.#sampledAt = t1;
      } finally {
        this.#sampling = null;
      }
    })();
    return this.#sampling;
  }
}
