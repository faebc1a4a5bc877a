// Node CommonJS, `require("tollgate/lite")`: dist/lib/lite.js, loaded by `require` (as
// cjs-index.js says); it imports the lite module only.
module.exports = require("../lib/lite.js");
