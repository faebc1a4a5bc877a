// `rateLimit`: HTTP middleware for Express, Connect and plain node:http, and `rateLimitFetch`,
// its twin for fetch handlers (see the npm README,
// "HTTP middleware"). What the middleware needs of a request and a response is structural, so
// the package needs neither @types/node nor @types/express: Node's IncomingMessage/ServerResponse
// and Express's Request/Response all fit. The functions of `rateLimit`'s options get Express's
// `Request` and `Response` by default where the project has @types/express (as express-rate-limit
// types them: `res.status()` in a `handler`), and `any` where it has not (no missing module is
// reported); `rateLimit<IncomingMessage, ServerResponse>` types them for node:http.
import type { AsyncRateLimiter, ControlOptions, Decision, HeaderFields, Keys, LimitOptions, LimiterOptions, MultiLimitOptions, QueueFields, RateLimiter, Store } from "./index.js";
// @ts-ignore -- Express's types where the project has them (@types/express); without them, `any`
import type { Request as ExpressRequest, Response as ExpressResponse } from "express";

/** The request `rateLimit`'s functions get by default: Express's `Request` (`any` without @types/express). */
export type DefaultRequest = ExpressRequest;
/** The response `rateLimit`'s functions get by default: Express's `Response` (`any` without @types/express). */
export type DefaultResponse = ExpressResponse;

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
  once(event: "finish" | "close" | "error", listener: () => void): unknown;
  readonly writableFinished?: boolean;
}

type Maybe<T> = T | Promise<T>;

/** A value of the request, as express-rate-limit's options take them (`limit`, `message`, `identifier`, ...). */
export type ValueDeterminingMiddleware<T, Req = MiddlewareRequest, Res = MiddlewareResponse> = (req: Req, res: Res) => Maybe<T>;

/** express-rate-limit's Logger: where the checks (`validate`) and store errors are reported. */
export interface Logger {
  error(error: unknown, message?: string): void;
  warn(error: unknown, message?: string): void;
}

/** express-rate-limit's checks by name (`default`: the rest); see the npm README, "Moving from express-rate-limit". */
export type EnabledValidations = {
  [check in
    | "default" | "ip" | "trustProxy" | "xForwardedForHeader" | "forwardedHeader" | "positiveHits" | "unsharedStore"
    | "singleCount" | "limit" | "draftPolliHeaders" | "onLimitReached" | "knownOptions" | "validationsConfig"
    | "creationStack" | "ipv6Subnet" | "ipv6SubnetOrKeyGenerator" | "keyGeneratorIpFallback"
    | "headersDraftVersion" | "headersResetTime"]?: boolean;
};

/** A client's count in an express-rate-limit Store. */
export interface ClientRateLimitInfo {
  totalHits: number;
  resetTime: Date | undefined;
}

/**
 * An express-rate-limit Store (rate-limit-redis, rate-limit-memcached, ...): it counts hits
 * itself, with its own guarantees; a hit is allowed while its total is at most the limit.
 */
export interface ErlStore {
  init?(options: RateLimitOptionsUsed): void | Promise<void>;
  get?(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
  increment(key: string): Promise<ClientRateLimitInfo> | ClientRateLimitInfo;
  decrement(key: string): Promise<void> | void;
  resetKey(key: string): Promise<void> | void;
  resetAll?(): Promise<void> | void;
  shutdown?(): Promise<void> | void;
  /** True when each instance holds its own counts (a memory store). */
  localKeys?: boolean;
  prefix?: string;
}

/** express-rate-limit's store before v7: `incr` with a callback. */
export interface LegacyErlStore {
  incr(key: string, callback: (error: Error | undefined, totalHits: number, resetTime: Date | undefined) => void): void;
  decrement(key: string): void;
  resetKey(key: string): void;
  resetAll?(): void;
}

/** `req.rateLimit`: the decision, with express-rate-limit's fields. */
export interface RateLimitInfo extends Decision {
  /** Hits counted in the window, this one included (a denied one too). */
  used: number;
  /** When the window resets (an express-rate-limit Store may not say). */
  resetTime: Date | undefined;
  /** The key the request was counted under. */
  key: Keys;
  /** express-rate-limit's older name of `used` (not enumerable). */
  readonly current: number;
}

/** The options `handler` and an express-rate-limit Store's `init` receive: those given, defaults filled in. */
export interface RateLimitOptionsUsed extends Required<Pick<MiddlewareOptions, UsedFlags>> {
  windowMs: number;
  limit: number | ((req: any, res: any) => Maybe<number>) | undefined;
  message: unknown;
  ipv6Subnet: number | false | ((req: any, res: any) => Maybe<number | false>);
  [option: string]: unknown;
}

/** The options `RateLimitOptionsUsed` holds as given to `rateLimit`, or their defaults. */
type UsedFlags = "statusCode" | "requestPropertyName" | "skipFailedRequests" | "skipSuccessfulRequests" | "passOnStoreError" | "validate" | "logger";

/**
 * The limits of `rateLimit`: tollgate's (`algorithm`, `quota`, `limits`, ...) or
 * express-rate-limit's (`windowMs`, `limit`/`max`, `identifier`). Without `algorithm`, `quota` or
 * `limits`, express-rate-limit's MemoryStore behaviour: a fixed window per client opened at its
 * first hit, `limit` (default 5) per `windowMs` (default 60000).
 */
export interface MiddlewareLimitOptions<Req, Res>
  extends Partial<Pick<LimitOptions, "algorithm" | "window" | "quota" | "burst" | "align" | "precision">>,
    Partial<Pick<MultiLimitOptions, "limits" | "maxKeys">>, Pick<ControlOptions, "onDecision"> {
  /** Hits per window; a function of the request gets a limiter per value it returns. 0 denies every request. */
  limit?: number | ValueDeterminingMiddleware<number, Req, Res>;
  /** express-rate-limit's older name of `limit` (`limit` wins when both are given). */
  max?: number | ValueDeterminingMiddleware<number, Req, Res>;
  /** express-rate-limit's name of `window`: milliseconds. */
  windowMs?: number;
  /** The limit's name in the headers and `blockedBy`. Default: `"default"`; without `algorithm`, express-rate-limit's `"<limit>-in-<window>"`. */
  name?: string | ValueDeterminingMiddleware<string, Req, Res>;
  /** express-rate-limit's name of `name`. */
  identifier?: string | ValueDeterminingMiddleware<string, Req, Res>;
}

/** What `rateLimit` and `rateLimitFetch` answer with: the header options of `headers()`, a denial's status. */
export interface HttpAnswerOptions extends HeaderFields {
  /** Status of a denial (default 429; 400 to 599). */
  statusCode?: number;
  /** Give back the hits of requests that succeeded. */
  skipSuccessfulRequests?: boolean;
}

/** The options `rateLimit`, `rateLimitFetch` and `tollgate/hono` share; `Args` are what their functions of a request receive. */
export interface HttpRequestOptions<Args extends any[]> extends HttpAnswerOptions, QueueFields {
  /** An existing limiter to decide by (instead of the limit options alongside). */
  limiter?: RateLimiter | AsyncRateLimiter;
  /** Units a request costs (default 1; not with an express-rate-limit Store). */
  cost?: (...args: Args) => Maybe<number>;
  /** The cost reserved on the way in when the actual cost is known after the answer (with `actualCost`, not `cost`). */
  estimatedCost?: number | ((...args: Args) => Maybe<number>);
  /** Requests for which this returns true are neither decided nor counted. */
  skip?: (...args: Args) => Maybe<boolean>;
  /** Give back the hits of requests that failed (`requestWasSuccessful` false, a request never finished, or a fetch handler that threw). */
  skipFailedRequests?: boolean;
}

export interface MiddlewareOptions<Req extends MiddlewareRequest = MiddlewareRequest, Res extends MiddlewareResponse = MiddlewareResponse>
  extends MiddlewareLimitOptions<Req, Res>, HttpRequestOptions<[req: Req, res: Res]> {
  /** Decide over a tollgate store (e.g. `new RedisStore(client)`), or count in an express-rate-limit Store. */
  store?: Store | ErlStore | LegacyErlStore;
  /** The key(s) of a request; default: the client IP, IPv6 addresses by their `ipv6Subnet` prefix. */
  key?: (req: Req, res: Res) => Maybe<Keys>;
  /** express-rate-limit's name of `key`. */
  keyGenerator?: (req: Req, res: Res) => Maybe<Keys>;
  /** Prefix length IPv6 clients are keyed by (default 56), or a function of the request; false keys whole addresses. */
  ipv6Subnet?: number | false | ValueDeterminingMiddleware<number | false, Req, Res>;
  /** The actual cost, read once the answer is sent or the connection closed (e.g. from `res.locals`); settles the reservation of `estimatedCost`. */
  actualCost?: (req: Req, res: Res) => Maybe<number | undefined>;
  /** @deprecated express-rate-limit's name (before its v6) of `legacyHeaders`; only with options written for express-rate-limit. */
  headers?: boolean;
  /**
   * Body of a denial, sent by Express's `res.send` (else a string as text/plain, a value as
   * JSON), or a function of `(req, res, decision)`. Default: "Too many requests, please try again later."
   */
  message?: string | Record<string, unknown> | unknown[] | ((req: Req, res: Res, decision: RateLimitInfo) => unknown);
  /** Answers a denial instead of `statusCode` and `message` (the headers are already set). */
  handler?: (req: Req, res: Res, next: (err?: unknown) => void, options: RateLimitOptionsUsed, decision: RateLimitInfo) => unknown;
  /** Default: `res.statusCode < 400`. */
  requestWasSuccessful?: (req: Req, res: Res) => Maybe<boolean>;
  /** Where the decision is put on the request (default "rateLimit"); false: nowhere. */
  requestPropertyName?: string | false;
  /** With a store: let requests through (logged) when the store fails, instead of `next(err)` (default false). */
  passOnStoreError?: boolean;
  /** express-rate-limit's checks, reported through `logger` (default true: all). */
  validate?: boolean | EnabledValidations;
  /** Where checks and store errors are reported (default: the console). */
  logger?: Logger;
}

export interface RateLimitMiddleware<Req extends MiddlewareRequest = DefaultRequest, Res extends MiddlewareResponse = DefaultResponse> {
  /** An Express `RequestHandler`, and callable with any node:http request and response. */
  (req: MiddlewareRequest, res: MiddlewareResponse, next: (err?: unknown) => void): Promise<void>;
  /** The limiter it decides by (to `reset` a key, `peek`, ...); null when `limit` or `identifier` is a function (a limiter per value). */
  readonly limiter: RateLimiter | AsyncRateLimiter | null;
  /** Forgets a key's count (express-rate-limit's `resetKey`). */
  resetKey(key: string): Promise<void>;
  /** A key's count (express-rate-limit's `getKey`); undefined when it has none. Throws when an express-rate-limit Store has no `get`. */
  getKey(key: string): Promise<ClientRateLimitInfo | undefined>;
}

/** Middleware deciding each request, answering 429 when denied: a drop-in for express-rate-limit v8 (see the npm README). */
export declare function rateLimit<Req extends MiddlewareRequest = DefaultRequest, Res extends MiddlewareResponse = DefaultResponse>(
  options?: MiddlewareOptions<Req, Res>,
): RateLimitMiddleware<Req, Res>;

/** The rate-limit key of a client address: IPv4 as is, IPv6 as its `/subnet` prefix (default 56), `false`: whole. */
export declare function ipKey(address: string, subnet?: number | false): string;

/** express-rate-limit's `ipKeyGenerator`: `ipKey` for an IP address, any other string as it is. */
export declare function ipKeyGenerator(ip: string, ipv6Subnet?: number | false): string;

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
export interface FetchRateLimitOptions<Req extends FetchRequest = FetchRequest, A extends any[] = any[]>
  extends HttpRequestOptions<[request: Req, ...rest: A]> {
  /** Decide over a store (e.g. `new RedisStore(client)`), as `new RateLimiter({ ..., store })`. */
  store?: Store;
  /**
   * The key(s) of a request; required, as a fetch handler has no portable client address.
   * Workers: `request.headers.get("CF-Connecting-IP")`; Deno: `info.remoteAddr.hostname`;
   * Bun: `server.requestIP(request)?.address`; `ipKey` groups IPv6 clients by prefix.
   */
  key: (request: Req, ...rest: A) => Maybe<Keys>;
  /** The actual cost, from a copy of the handler's answer whose body it may read (e.g. its `usage.total_tokens`); settles the reservation of `estimatedCost`. */
  actualCost?: (request: Req, response: Response, ...rest: A) => Maybe<number | undefined>;
  /** Body of a denial: a string (text/plain), a value sent as JSON, or a function of the decision. Default: `{"error":{"code":"rate_limited","message":...}}`. */
  message?: string | object | ((decision: Decision, request: Req) => Maybe<string | object>);
  /** Answers a denial instead of `statusCode` and `message`; the rate-limit headers are added to its answer. */
  handler?: (request: Req, decision: Decision, ...rest: A) => Maybe<FetchResponse>;
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
