// `rateLimit`: HTTP middleware for Express, Connect and plain node:http (see the npm README,
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
  /** Which rate-limit headers to send (default "both"); `Retry-After` is sent on every denial. */
  headers?: "both" | "draft-10" | "legacy" | false;
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
