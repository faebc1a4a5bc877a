// A node:http server with the rate limiter, bundled by esbuild for Node (ESM and CommonJS);
// the port is the first argument.
import { createServer } from "node:http";
import { RateLimiter } from "tollgate";

const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1h" });

createServer((req, res) => {
  const d = limiter.limit("client");
  res.writeHead(d.allowed ? 200 : 429, limiter.headers(d)).end(d.allowed ? "ok\n" : "Too many requests\n");
}).listen(Number(process.argv.at(-1)), "127.0.0.1");
