// Node CommonJS, `require("tollgate/hono")`: the Hono middleware of lib/ converted to CommonJS,
// dist/cjs/lib/ (the same limiter classes as `require("tollgate")`).
const hono = require("./lib/hono.js");

module.exports = { ...hono };
