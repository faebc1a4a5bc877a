// Node CommonJS, `require("tollgate/fastify")`: dist/lib/fastify.js, loaded by `require` (as
// cjs-index.js says). As @fastify/rate-limit exports it, the plugin itself, with `default`,
// `fastifyRateLimit` and `normalizeIP` on it (the plugin function is the ES module's, so the
// properties fastify-plugin set on it are kept).
const fastify = require("../lib/fastify.js");

module.exports = fastify.fastifyRateLimit;
module.exports.default = fastify.fastifyRateLimit;
module.exports.fastifyRateLimit = fastify.fastifyRateLimit;
module.exports.normalizeIP = fastify.normalizeIP;
