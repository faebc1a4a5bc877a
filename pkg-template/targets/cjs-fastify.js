// Node CommonJS, `require("tollgate/fastify")`: as @fastify/rate-limit exports it, the plugin
// itself, with `default`, `fastifyRateLimit` and `normalizeIP` on it (of lib/ converted to CommonJS,
// dist/cjs/lib/, so the wasm glue is instantiated once whichever entry requires it first).
const fastify = require("./lib/fastify.js");

module.exports = fastify.fastifyRateLimit;
module.exports.default = fastify.fastifyRateLimit;
module.exports.fastifyRateLimit = fastify.fastifyRateLimit;
module.exports.normalizeIP = fastify.normalizeIP;
