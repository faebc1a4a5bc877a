// Node CommonJS, `require("tollgate/limiter")`: dist/lib/limiter.js, loaded by `require` (as
// cjs-index.js says), the same classes as `require("tollgate")` and `import "tollgate"`.
module.exports = require("../lib/limiter.js");
