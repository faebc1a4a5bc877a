// `make llm-gateway` (or `npm install && npm start` here, tollgate a file: dependency on ../../pkg): the mock upstream on
// UPSTREAM_PORT (default 8791) and the gateway in front of it on PORT (default 8790), with
// RPM and TPM per API key (default 60 and 10000). Ctrl-C stops both.
import { mockUpstream } from "./mock-upstream.mjs";
import { serve } from "./serve.mjs";
import { startGateway } from "./node.mjs";

const upstream = await serve(mockUpstream({ delayMs: 30 }), { port: Number(process.env.UPSTREAM_PORT ?? 8791) });
const upstreamUrl = process.env.UPSTREAM_URL ?? `http://127.0.0.1:${upstream.port}`;
const gw = await startGateway({ upstreamUrl, port: Number(process.env.PORT ?? 8790) });
const base = `http://127.0.0.1:${gw.port}`;
console.log(`mock upstream on http://127.0.0.1:${upstream.port}, the gateway on ${base} (RPM ${process.env.RPM ?? 60}, TPM ${process.env.TPM ?? 10000} per API key)
Try:
  curl -si ${base}/v1/chat/completions -H 'authorization: Bearer key-1' -d '{"model":"mock-1","max_tokens":100,"messages":[{"role":"user","content":"hello"}]}'
  curl -sN ${base}/v1/chat/completions -H 'authorization: Bearer key-1' -d '{"stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hello"}]}'`);
process.on("SIGINT", async () => {
  await gw.close();
  await upstream.close();
  process.exit(0);
});
