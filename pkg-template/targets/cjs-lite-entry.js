// Node CommonJS, `require("tollgate/lite")` (dist/cjs/lite.js): lib/lite.js converted to
// CommonJS, over the lite module alone (dist/cjs/lib/lite-wasm.js, from targets/cjs-lite.js).
module.exports = require("./lib/lite.js");
