// A fetch handler served by node:http: the request as a fetch `Request`, the `Response`
// written back as it streams; a client that goes away cancels the response's body (so a
// streamed answer stops, and the gateway settles it). `handler(request, waitUntil)`.
import http from "node:http";
import { Readable } from "node:stream";

export function serve(handler, { port = 0, host = "127.0.0.1" } = {}) {
  const pending = new Set();
  const waitUntil = (p) => {
    pending.add(p);
    p.finally(() => pending.delete(p));
  };
  const server = http.createServer(async (req, res) => {
    const url = `http://${req.headers.host ?? host}${req.url}`;
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(url, { method: req.method, headers: req.headers, body: hasBody ? Readable.toWeb(req) : undefined, duplex: "half" });
    let response;
    try {
      response = await handler(request, waitUntil);
    } catch (e) {
      console.error(e);
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "internal", message: "internal error" } }));
      return;
    }
    res.writeHead(response.status, [...response.headers].flat());
    if (response.body === null) return void res.end();
    const reader = response.body.getReader();
    res.on("close", () => {
      if (!res.writableFinished) reader.cancel(new Error("the client went away")).catch(() => {});
    });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise((r) => res.once("drain", r).once("close", r));
        if (res.destroyed) break;
      }
      res.end();
    } catch {
      res.destroy();
    }
  });
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      resolve({
        server,
        port: server.address().port,
        /** Stops serving and waits for the settlements still under way. */
        close: async () => {
          server.closeAllConnections?.();
          await new Promise((r) => server.close(r));
          await Promise.allSettled([...pending]);
        },
      });
    });
  });
}
