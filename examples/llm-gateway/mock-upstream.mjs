// A local stand-in for an OpenAI-compatible API: `POST /v1/chat/completions` answers a JSON
// completion, or with `stream: true` a server-sent event stream of one word per chunk, ending
// with a chunk that carries `usage` when `stream_options.include_usage` is set, then
// `data: [DONE]`. Its counts are deterministic: prompt tokens are the messages' characters / 4
// (rounded up), completion tokens are `mock_completion_tokens` (default 16), never more than
// `max_tokens`, plus `mock_extra_tokens` (default 0) that it counts without sending them, as a
// model's hidden reasoning: with them a usage exceeds the gateway's estimate. A fetch handler,
// served by node.mjs on Node and usable in any runtime.
// `served`, when given, is a Map from each API key (the Authorization header's bearer token)
// to the tokens the mock served it: an answer's usage, or for a stream the consumer cancelled,
// the prompt and the words sent before (what an upstream bills): the truth a test holds the
// gateway's limits to.

const WORDS = ["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog."];
const encoder = new TextEncoder();

/** The prompt's tokens as this mock counts them (and the gateway estimates them). */
export function promptTokens(messages) {
  const text = Array.isArray(messages) ? messages.map((m) => (typeof m?.content === "string" ? m.content : "")).join("") : "";
  return Math.ceil(text.length / 4);
}

const error = (status, code, message) => Response.json({ error: { code, message, type: "invalid_request_error" } }, { status });

/** The mock's fetch handler. `delayMs` is the pause between two streamed chunks. */
export function mockUpstream({ delayMs = 2, served } = {}) {
  return async (request) => {
    const key = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    const serve = (tokens) => served?.set(key, (served.get(key) ?? 0) + tokens);
    const { pathname } = new URL(request.url);
    if (request.method !== "POST" || pathname !== "/v1/chat/completions") return error(404, "not_found", `no route ${request.method} ${pathname}`);
    let body;
    try {
      body = await request.json();
    } catch {
      return error(400, "invalid_json", "the body is not JSON");
    }
    const prompt = promptTokens(body.messages);
    const max = body.max_tokens ?? body.max_completion_tokens ?? 4096;
    const completion = Math.min(max, body.mock_completion_tokens ?? 16);
    const extra = Number.isInteger(body.mock_extra_tokens) && body.mock_extra_tokens > 0 ? body.mock_extra_tokens : 0;
    const usage = { prompt_tokens: prompt, completion_tokens: completion + extra, total_tokens: prompt + completion + extra };
    const id = `chatcmpl-mock-${crypto.randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? "mock-1";
    const words = Array.from({ length: completion }, (_, i) => WORDS[i % WORDS.length]);
    if (body.stream !== true) {
      serve(usage.total_tokens);
      return Response.json({
        id, object: "chat.completion", created, model,
        choices: [{ index: 0, message: { role: "assistant", content: words.join(" ") }, finish_reason: completion === max ? "length" : "stop" }],
        usage,
      });
    }
    const chunk = (fields) => encoder.encode(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, ...fields })}\n\n`);
    let i = 0;
    const stream = new ReadableStream({
      async pull(controller) {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        if (i < words.length) {
          controller.enqueue(chunk({ choices: [{ index: 0, delta: { content: (i ? " " : "") + words[i] }, finish_reason: null }] }));
        } else if (i === words.length) {
          controller.enqueue(chunk({ choices: [{ index: 0, delta: {}, finish_reason: completion === max ? "length" : "stop" }] }));
        } else {
          if (body.stream_options?.include_usage === true) controller.enqueue(chunk({ choices: [], usage }));
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          controller.close();
          serve(usage.total_tokens);
        }
        i += 1;
      },
      cancel() {
        serve(prompt + Math.min(i, words.length));
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  };
}
