// Node CommonJS, `require("tollgate/fastify")`: esbuild bundles lib/fastify.js from this file
// (the wasm glue stays the separate module every CommonJS bundle requires, instantiated once).
// As @fastify/rate-limit exports it: the plugin itself, with `default`, `fastifyRateLimit` and
// `normalizeIP` on it.
const { fastifyRateLimit, normalizeIP } = require("./fastify.js");

module.exports = fastifyRateLimit;
module.exports.default = fastifyRateLimit;
module.exports.fastifyRateLimit = fastifyRateLimit;
module.exports.normalizeIP = normalizeIP;
