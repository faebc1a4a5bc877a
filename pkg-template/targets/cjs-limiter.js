// Node CommonJS, `require("tollgate/limiter")`: the same classes as `require("tollgate")` (the
// modules of dist/cjs/lib/, so `instanceof` and key handles agree across the two); it exists so that one
// import line works in every runtime.
const main = require("./lib/index.js");
module.exports = { RateLimiter: main.RateLimiter, KeyHandle: main.KeyHandle };
