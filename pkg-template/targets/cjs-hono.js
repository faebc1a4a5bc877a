// Node CommonJS, `require("tollgate/hono")`: dist/lib/hono.js, loaded by `require` (as
// cjs-index.js says), the same limiter classes as `require("tollgate")`.
module.exports = require("../lib/hono.js");
