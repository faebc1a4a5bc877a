// A simulated throttled service for the lease tests: an HTTP server on 127.0.0.1 (a free
// port) that takes `POST /send {holder, start, cost}` from any number of holders, in this
// process or others, and counts units per window of the pool's length.
//
// Sends are counted at the start the holder's pacer reserved for them (`acquire` resolves
// with it): that is the schedule the lease rules are about, and it does not depend on how
// late a busy test machine delivers a request. The arrival time is kept too, to check that no
// send arrived before its start. Like a real service it answers 429 with Retry-After when a
// send would put more than `capacity` units into the window ending at its start.
import http from "node:http";

/** Most units with starts in any closed interval of `windowMs`, over `sends` ({start, cost}). */
export function maxInWindow(sends, windowMs) {
  const s = [...sends].sort((a, b) => a.start - b.start);
  let max = 0;
  let sum = 0;
  let lo = 0;
  for (let hi = 0; hi < s.length; hi++) {
    sum += s[hi].cost;
    while (s[hi].start - s[lo].start > windowMs) sum -= s[lo++].cost;
    max = Math.max(max, sum);
  }
  return max;
}

export async function startService({ capacity, windowMs }) {
  const sends = [];
  let rejected = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const arrived = Date.now();
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const { holder, start, cost } = body;
      const inWindow = sends.filter((x) => x.start >= start - windowMs && x.start <= start).reduce((n, x) => n + x.cost, 0);
      if (inWindow + cost > capacity) {
        rejected += 1;
        res.writeHead(429, { "retry-after": "1", "content-type": "application/json" }).end('{"error":"over capacity"}');
        return;
      }
      sends.push({ holder, start, cost, arrived });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  // Idle kept-alive connections are left for the holders to close: a server closing one at its
  // keep-alive timeout races a holder sending on it, and that send fails (the holder with it).
  server.keepAliveTimeout = 0;
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    sends,
    get rejected() {
      return rejected;
    },
    /** Units per holder. */
    units(holder) {
      return sends.filter((x) => x.holder === holder).reduce((n, x) => n + x.cost, 0);
    },
    maxInWindow: () => maxInWindow(sends, windowMs),
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A send to the service, as a holder does it (a `Response`, whose headers `pace` reads). */
export function send(serviceUrl, holder, start, cost) {
  return fetch(`${serviceUrl}/send`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ holder, start, cost }),
  });
}
