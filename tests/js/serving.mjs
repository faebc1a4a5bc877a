// An HTTP server for one test: the middleware tests' harness.
import { createServer } from "node:http";

/** Listens on 127.0.0.1 with `handler`, runs `body(url)`, closes. */
export async function serving(handler, body) {
  const server = createServer(handler);
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  try {
    return await body(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
}
