// Node CommonJS, `require("tollgate")`: the package's one copy of its JavaScript, the ES modules
// of dist/lib/, loaded by `require` (Node 20.19 and 22.12 load an ES module graph without
// top-level await synchronously; the node loader has none), so `require` and `import` share
// every class and key handle. As express-rate-limit's CommonJS export, the middleware itself,
// callable (`const rateLimit = require("tollgate"); app.use(rateLimit({...}))`), with every
// named export on it, `default` included (what a transpiled `import rateLimit from` reads).
const tollgate = require("../lib/index.js");

function rateLimit(options) {
  return tollgate.rateLimit(options);
}
module.exports = Object.assign(rateLimit, tollgate, { rateLimit, default: rateLimit });
