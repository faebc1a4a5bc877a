// Node CommonJS, `require("tollgate/limiter")`: the same classes as `require("tollgate")` (one
// CommonJS bundle, so `instanceof` and key handles agree across the two); it exists so that one
// import line works in every runtime.
const { main } = require("./tollgate.js");
module.exports = { RateLimiter: main.RateLimiter, KeyHandle: main.KeyHandle };
