// Node CommonJS, `require("tollgate/hono")`: the Hono middleware of the one CommonJS bundle,
// dist/cjs/tollgate.js (the same limiter classes as `require("tollgate")`).
const { hono } = require("./tollgate.js");

module.exports = { ...hono };
