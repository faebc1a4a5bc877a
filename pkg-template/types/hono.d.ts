// `tollgate/hono`: Hono middleware, a drop-in for hono-rate-limiter 0.5 (see the npm README,
// "Hono"). The context type is structural (what the middleware calls of Hono's `Context`), so
// the package's types need no `hono` import: Hono's own `Context` fits, and the middleware is
// assignable to its `MiddlewareHandler`.
import type { AsyncRateLimiter, ControlOptions, HeaderFields, Keys, LimitOptions, MultiLimitOptions, RateLimiter, Store } from "./index.js";
import type { ClientRateLimitInfo, ErlStore, HttpRequestOptions, RateLimitInfo as ErlRateLimitInfo } from "./middleware.js";

type Maybe<T> = T | Promise<T>;

/** What the middleware uses of Hono's `Context`. */
export interface HonoContext {
  set(key: any, value: any): void;
  get(key: any): any;
  header(name: string, value: string | undefined, options?: any): void;
  status(status: any): void;
  text(text: string, ...rest: any[]): any;
  json(object: any, ...rest: any[]): any;
  readonly res: { readonly status: number };
  readonly finalized: boolean;
}

/** `c.get("rateLimit")`: the decision, with hono-rate-limiter's fields. */
export type HonoRateLimitInfo = Omit<ErlRateLimitInfo, "current">;

/** `c.get("rateLimitStore")`: hono-rate-limiter's store methods, over the middleware's limiters. */
export interface HonoRateLimitStore {
  getKey?: (key: string) => Promise<ClientRateLimitInfo | undefined>;
  resetKey: (key: string) => Promise<void>;
}

/** The options `handler` and a store's `init` receive: those given, defaults filled in. */
export interface HonoRateLimitOptionsUsed {
  windowMs: number;
  limit: number | ((c: any) => Maybe<number>) | undefined;
  message: unknown;
  statusCode: number;
  requestPropertyName: string;
  requestStorePropertyName: string;
  skipFailedRequests: boolean;
  skipSuccessfulRequests: boolean;
  [option: string]: unknown;
}

/**
 * hono-rate-limiter's options, and tollgate's beside them. Without `algorithm`, `quota`,
 * `limits` or `limiter`: hono-rate-limiter's behaviour, a fixed window per key opened at its
 * first hit, `limit` (default 5) per `windowMs` (default 60000), draft-6 headers.
 */
export interface HonoLimitOptions<C>
  extends Partial<Omit<LimitOptions, "limit" | "name">>, Partial<Pick<MultiLimitOptions, "limits" | "maxKeys">>, ControlOptions,
    Omit<HttpRequestOptions<[c: C]>, "skip" | "statusCode" | keyof HeaderFields> {
  /** The key(s) of a request (required). */
  keyGenerator: (c: C) => Maybe<Keys>;
  /** Hits per window; a function of the context gets a limiter per value it returns. 0 denies every request. */
  limit?: number | ((c: C) => Maybe<number>);
  /** The window in milliseconds (hono-rate-limiter's name). */
  windowMs?: number;
  name?: string | ((c: C) => Maybe<string>);
  /** A tollgate store (`RedisStore`, `WorkerStore`), or a hono-rate-limiter / express-rate-limit Store. */
  store?: Store | ErlStore;
  /** The actual cost, from a copy of the route's answer whose body it may read; settles the reservation of `estimatedCost`. */
  actualCost?: (c: C, response: Response) => Maybe<number | undefined>;
  /** Where the decision is put on the context (default "rateLimit"). */
  requestPropertyName?: string;
  /** Where `getKey` and `resetKey` are put on the context (default "rateLimitStore"). */
  requestStorePropertyName?: string;
}

export interface HonoRateLimiterOptions<C extends HonoContext = HonoContext> extends HonoLimitOptions<C>, HttpRequestOptions<[c: C]> {
  /** Default: `c.res.status < 400`. */
  requestWasSuccessful?: (c: C) => Maybe<boolean>;
  /** Body of a denial: a string as text, a value as JSON, or a function of `c`. Default: "Too many requests, please try again later." */
  message?: string | Record<string, unknown> | unknown[] | ((c: C) => unknown);
  /** Answers a denial instead of `statusCode` and `message` (the headers are already set). */
  handler?: (c: C, next: () => Promise<void>, options: HonoRateLimitOptionsUsed) => unknown;
}

export interface HonoRateLimitMiddleware<C extends HonoContext = HonoContext> {
  (c: C, next: () => Promise<void>): Promise<any>;
  /** The limiter it decides by; null when `limit` or `name` is a function (a limiter per value). */
  readonly limiter: RateLimiter | AsyncRateLimiter | null;
}

/** Hono middleware deciding each request, answering 429 when denied: a drop-in for hono-rate-limiter's `rateLimiter`. */
export declare function rateLimiter<C extends HonoContext = any>(options: HonoRateLimiterOptions<C>): HonoRateLimitMiddleware<C>;

/** What `webSocketLimiter` uses of a socket: `close` (the default handler's). */
export interface HonoWebSocket {
  close(code?: number, reason?: string): void;
}

/** The events of Hono's `upgradeWebSocket` (`hono/ws`'s WSEvents). */
export interface HonoWSEvents<W = any> {
  onOpen?: (event: any, ws: W) => void;
  onMessage?: (event: any, ws: W) => void;
  onClose?: (event: any, ws: W) => void;
  onError?: (event: any, ws: W) => void;
}

export interface HonoWebSocketLimiterOptions<C extends HonoContext = HonoContext> extends HonoLimitOptions<C> {
  /** Messages for which this returns true are neither decided nor counted. */
  skip?: (event: any, ws: any) => Maybe<boolean>;
  /** The close code of the default handler (default 1008, policy violation; 1000 to 4999). */
  statusCode?: number;
  /** The close reason of the default handler. */
  message?: string | ((event: any, ws: any) => unknown);
  /** Answers a denied message instead of closing the socket. */
  handler?: (event: any, ws: any, options: HonoRateLimitOptionsUsed) => unknown;
}

/** Limits WebSocket messages by the key of their connection's upgrade context: hono-rate-limiter's `webSocketLimiter`. */
export declare function webSocketLimiter<C extends HonoContext = any>(
  options: HonoWebSocketLimiterOptions<C>,
): {
  <E extends HonoWSEvents>(createEvents: (c: C) => E | Promise<E>): (c: C) => Promise<E>;
  readonly limiter: RateLimiter | AsyncRateLimiter | null;
};
