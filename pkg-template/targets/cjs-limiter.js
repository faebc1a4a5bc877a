// Node CommonJS, `require("tollgate/limiter")`: the same classes as `require("tollgate")`
// (one bundle, so `instanceof` and key handles agree across the two). CommonJS loads the
// extras module only on first use anyway, so this entry saves no download there; it exists
// so that one import line works in every runtime.
const { main } = require("./tollgate.js");
module.exports = { RateLimiter: main.RateLimiter, KeyHandle: main.KeyHandle };
