// The peers' option names for tollgate's (docs/vocabulary.md): one table per peer the adapters
// claim drop-in for, peer name -> the spec's name. Only names are mapped here; what an option
// means is read where the spec's name is (the core's parser, options.js, http-options.js).
//   express-rate-limit (`rateLimit`) and hono-rate-limiter (`tollgate/hono`, whose names are
//   express-rate-limit's); @fastify/rate-limit (`tollgate/fastify`), whose `max` and
//   `timeWindow` stand for `limit` and `window` when tollgate's limits are given beside them.
export const PEER_NAMES = Object.freeze({
  "express-rate-limit": Object.freeze({ windowMs: "window", max: "limit", keyGenerator: "key", identifier: "name" }),
  "@fastify/rate-limit": Object.freeze({ max: "limit", timeWindow: "window", cache: "maxKeys", keyGenerator: "key" }),
});
