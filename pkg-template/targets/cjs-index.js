// Node CommonJS, `require("tollgate")`: a CommonJS build, so that runtimes that cannot require
// ES modules (Jest's CommonJS mode) load it. As express-rate-limit's CommonJS export, the
// middleware itself, callable (`const rateLimit = require("tollgate"); app.use(rateLimit({...}))`),
// with every named export on it, `default` included (what a transpiled `import rateLimit from`
// reads). The classes and functions are those of lib/ converted to CommonJS, dist/cjs/lib/ (its
// own copy: `import "tollgate"` gives other classes and another instance of the module).
const main = require("./lib/index.js");

function rateLimit(options) {
  return main.rateLimit(options);
}
module.exports = Object.assign(rateLimit, main, { rateLimit, default: rateLimit });
