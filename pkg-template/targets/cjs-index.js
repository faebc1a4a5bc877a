// Node CommonJS, `require("tollgate")`: as express-rate-limit's CommonJS export, the middleware
// itself, callable (`const rateLimit = require("tollgate"); app.use(rateLimit({...}))`), with
// every named export on it, `default` included (what a transpiled `import rateLimit from` reads).
// The classes and functions are those of the one bundle, dist/cjs/tollgate.js.
const { main } = require("./tollgate.js");

module.exports = Object.assign(main.rateLimit, main);
