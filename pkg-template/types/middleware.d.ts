// `rateLimit`: HTTP middleware for Express, Connect and plain node:http, and `rateLimitFetch`,
// its twin for fetch handlers (see the npm README,
// "HTTP middleware"). The request and response types are structural, so the package needs
// neither @types/node nor @types/express: Node's IncomingMessage/ServerResponse and Express's
// Request/Response all fit.
import type { AsyncRateLimiter, Decision, Keys, LimiterOptions, RateLimiter, Store } from "./index.js";

/** What the middleware reads of a request: Express's `ip` (honouring `trust proxy`), else the socket's address. */
export interface MiddlewareRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
}

/** What the middleware uses of a response (Node's `ServerResponse` and Express's `Response` have it). */
export interface MiddlewareResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
  once(event: "finish" | "close", listener: () => void): unknown;
  readonly writableFinished?: boolean;
}

type Maybe<T> = T | Promise<T>;

export interface MiddlewareOptions<Req extends MiddlewareRequest = MiddlewareRequest, Res extends MiddlewareResponse = MiddlewareResponse> {
  /** An existing limiter to decide by (instead of the limiter options alongside). */
  limiter?: RateLimiter | AsyncRateLimiter;
  /** Decide over a store (e.g. `new RedisStore(client)`), as `new RateLimiter({ ..., store })`. */
  store?: Store;
  /** The key(s) of a request; default: the client IP, IPv6 addresses by their `ipv6Subnet` prefix. */
  key?: (req: Req, res: Res) => Maybe<Keys>;
  /** Prefix length IPv6 clients are keyed by (default 56); false keys whole addresses. */
  ipv6Subnet?: number | false;
  /** Units a request costs (default 1). */
  cost?: (req: Req, res: Res) => Maybe<number>;
  /** Requests for which this returns true are neither decided nor counted. */
  skip?: (req: Req, res: Res) => Maybe<boolean>;
  /** The RateLimit draft (default "draft-10"; true is "draft-6", as in express-rate-limit); `Retry-After` is sent on every denial. */
  standardHeaders?: "draft-6" | "draft-7" | "draft-8" | "draft-10" | boolean;
  /** X-RateLimit-* (default true). */
  legacyHeaders?: boolean;
  /** Send the key, hashed, as `pk` (draft-8, draft-10; default false). */
  partitionKey?: boolean;
  /** Spreads Retry-After and `t` of denials by up to half the wait: true (Math.random) or a draw in [0, 1). */
  jitter?: boolean | (() => number);
  /** Status of a denial (default 429; 400 to 599). */
  statusCode?: number;
  /** Body of a denial: a string (text/plain), a value sent as JSON, or a function of the decision. Default: `{"error":{"code":"rate_limited","message":...}}`. */
  message?: string | object | ((decision: Decision, req: Req, res: Res) => Maybe<string | object>);
  /** Answers a denial instead of `statusCode` and `message` (the headers are already set). */
  handler?: (req: Req, res: Res, next: (err?: unknown) => void, decision: Decision) => Maybe<unknown>;
  /** Give back the hits of requests that failed (`requestWasSuccessful` false, or never finished). */
  skipFailedRequests?: boolean;
  /** Give back the hits of requests that succeeded. */
  skipSuccessfulRequests?: boolean;
  /** Default: `res.statusCode < 400`. */
  requestWasSuccessful?: (req: Req, res: Res) => boolean;
  /** Where the decision is put on the request (default "rateLimit"); false: nowhere. */
  requestPropertyName?: string | false;
}

export interface RateLimitMiddleware<Req extends MiddlewareRequest = MiddlewareRequest, Res extends MiddlewareResponse = MiddlewareResponse> {
  (req: Req, res: Res, next: (err?: unknown) => void): Promise<void>;
  /** The limiter it decides by (to `reset` a key, `peek`, ...). */
  readonly limiter: RateLimiter | AsyncRateLimiter;
}

/** Middleware deciding each request by a RateLimiter made of the same options (or `limiter`), answering 429 when denied. */
export declare function rateLimit<Req extends MiddlewareRequest = MiddlewareRequest, Res extends MiddlewareResponse = MiddlewareResponse>(
  options: MiddlewareOptions<Req, Res> & Partial<LimiterOptions>,
): RateLimitMiddleware<Req, Res>;

/** The rate-limit key of a client address: IPv4 as is, IPv6 as its `/subnet` prefix (default 56), `false`: whole. */
export declare function ipKey(address: string, subnet?: number | false): string;

/** What `rateLimitFetch` uses of a request: the fetch API's `Request` (any runtime's) fits. */
export interface FetchRequest {
  readonly url: string;
  readonly headers: { get(name: string): string | null };
}

/** What `rateLimitFetch` uses of a handler's answer: the fetch API's `Response` fits. */
export interface FetchResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null; set(name: string, value: string): void };
}

/**
 * Options of `rateLimitFetch`. `Req` is the request type `key` and the others see; `A` the
 * handler's arguments after the request (a Worker's `env` and `ctx`, Deno's `info`, Bun's
 * `server`).
 */
export interface FetchRateLimitOptions<Req extends FetchRequest = FetchRequest, A extends any[] = any[]> {
  /** An existing limiter to decide by (instead of the limiter options alongside). */
  limiter?: RateLimiter | AsyncRateLimiter;
  /** Decide over a store (e.g. `new RedisStore(client)`), as `new RateLimiter({ ..., store })`. */
  store?: Store;
  /**
   * The key(s) of a request; required, as a fetch handler has no portable client address.
   * Workers: `request.headers.get("CF-Connecting-IP")`; Deno: `info.remoteAddr.hostname`;
   * Bun: `server.requestIP(request)?.address`; `ipKey` groups IPv6 clients by prefix.
   */
  key: (request: Req, ...rest: A) => Maybe<Keys>;
  /** Units a request costs (default 1). */
  cost?: (request: Req, ...rest: A) => Maybe<number>;
  /** Requests for which this returns true go to the handler neither decided nor counted. */
  skip?: (request: Req, ...rest: A) => Maybe<boolean>;
  /** The RateLimit draft (default "draft-10"; true is "draft-6", as in express-rate-limit); `Retry-After` is sent on every denial. */
  standardHeaders?: "draft-6" | "draft-7" | "draft-8" | "draft-10" | boolean;
  /** X-RateLimit-* (default true). */
  legacyHeaders?: boolean;
  /** Send the key, hashed, as `pk` (draft-8, draft-10; default false). */
  partitionKey?: boolean;
  /** Spreads Retry-After and `t` of denials by up to half the wait: true (Math.random) or a draw in [0, 1). */
  jitter?: boolean | (() => number);
  /** Status of a denial (default 429; 400 to 599). */
  statusCode?: number;
  /** Body of a denial: a string (text/plain), a value sent as JSON, or a function of the decision. Default: `{"error":{"code":"rate_limited","message":...}}`. */
  message?: string | object | ((decision: Decision, request: Req) => Maybe<string | object>);
  /** Answers a denial instead of `statusCode` and `message`; the rate-limit headers are added to its answer. */
  handler?: (request: Req, decision: Decision, ...rest: A) => Maybe<FetchResponse>;
  /** Give back the hits of requests that failed (`requestWasSuccessful` false, or a handler that threw). */
  skipFailedRequests?: boolean;
  /** Give back the hits of requests that succeeded. */
  skipSuccessfulRequests?: boolean;
  /** Default: `response.status < 400`. */
  requestWasSuccessful?: (request: Req, response: FetchResponse) => boolean;
}

/** Wraps a fetch handler: the result decides each request first and adds the rate-limit headers to the answer. */
export interface RateLimitFetch<Req extends FetchRequest = FetchRequest, A extends any[] = any[]> {
  <R extends Req, B extends [...A, ...any[]], Res extends FetchResponse>(
    handler: (request: R, ...rest: B) => Maybe<Res>,
  ): (request: R, ...rest: B) => Promise<Res>;
  /** The limiter it decides by (to `reset` a key, `peek`, ...). */
  readonly limiter: RateLimiter | AsyncRateLimiter;
}

/** The fetch-API twin of `rateLimit`: `rateLimitFetch(options)(handler)` for Workers, Deno, Bun and service workers. */
export declare function rateLimitFetch<Req extends FetchRequest = FetchRequest, A extends any[] = any[]>(
  options: FetchRateLimitOptions<Req, A> & Partial<LimiterOptions>,
): RateLimitFetch<Req, A>;
