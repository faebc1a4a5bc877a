// A tiny static file server for www/ on a random 127.0.0.1 port: what the playground needs
// when no Worker runs (the simulation is all in the page). Serves application/wasm so the
// browser compiles the wasm while streaming, as any real host would.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const WWW = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../www");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".json": "application/json",
};

/** Starts the server; resolves to { url, close() }. */
export async function serveWww() {
  const server = createServer(async (req, res) => {
    const { pathname } = new URL(req.url, "http://x");
    const rel = decodeURIComponent(pathname.endsWith("/") ? `${pathname}index.html` : pathname);
    const file = path.join(WWW, path.normalize(rel));
    if (!file.startsWith(WWW + path.sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"code":"not_found","message":"no such file"}}');
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
