// `KeyHandle`: an interned key (`limiter.key("user:42")`), for the hot paths of batch.js. In a
// module of its own, without wasm, so that every limiter class can recognise one.

/** An interned key of one limiter: `limiter.key("user:42")`. Pass it wherever a key goes. */
export class KeyHandle {
  /** The key string. */
  key;
  /** The number the wasm layer knows the key by (internal). */
  id;
  /** The limiter it belongs to (a handle is only valid there). */
  owner;
  constructor(key, id, owner) {
    this.key = key;
    this.id = id;
    this.owner = owner;
    Object.freeze(this);
  }
}
