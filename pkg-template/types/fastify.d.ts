// `tollgate/fastify`: a Fastify 5 plugin taking @fastify/rate-limit v11's options (see the npm
// README, "Fastify"). Types from `fastify` (an optional peer dependency) describe the plugin,
// its decorators and the route option `config.rateLimit`.
import type { ContextConfigDefault, FastifyPluginAsync, FastifyRequest, FastifySchema, preHandlerAsyncHookHandler, RouteGenericInterface } from "fastify";
import type { ControlOptions, LimitOptions, MultiLimitOptions, Store } from "./index.js";
import type { HttpRequestOptions } from "./middleware.js";

/** tollgate's limits beside @fastify/rate-limit's options (any of `algorithm`, `quota`, `limits`, `limit`, `window` makes them tollgate's). */
export interface TollgateLimitOptions
  extends Partial<LimitOptions>, Omit<ControlOptions, "allowList">, Partial<Pick<MultiLimitOptions, "limits" | "maxKeys">>,
    Pick<HttpRequestOptions<[request: FastifyRequest]>, "cost" | "maxQueue" | "maxWait" | "estimatedCost"> {
  /** The actual cost, read once the response was sent or its connection closed; settles the reservation of `estimatedCost`. */
  actualCost?: (request: FastifyRequest, reply: any) => Maybe<number | undefined>;
}

type Maybe<T> = T | Promise<T>;

/** What `errorResponseBuilder` is given about a denial. */
export interface RateLimitErrorContext {
  /** 429, or 403 once `ban` is reached. */
  statusCode: number;
  ban: boolean;
  /** The limit (`max`, or the deciding tollgate limit's). */
  max: number;
  /** Milliseconds until the window resets. */
  ttl: number;
  /** That wait in words: "1 second", "5 minutes". */
  after: string;
}

/** Which response headers are sent (all by default); the keys are the header names in lower case. */
export interface RateLimitHeaderSwitches {
  "x-ratelimit-limit"?: boolean;
  "x-ratelimit-remaining"?: boolean;
  "x-ratelimit-reset"?: boolean;
  "retry-after"?: boolean;
  "ratelimit-limit"?: boolean;
  "ratelimit-remaining"?: boolean;
  "ratelimit-reset"?: boolean;
}

/** A @fastify/rate-limit custom store: it counts hits itself (`incr`), and `read` peeks. */
export interface FastifyRateLimitStore {
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void;
  read?(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void;
  child?(routeOptions: RateLimitOptions & { routeInfo: unknown }): FastifyRateLimitStore;
}

/** The options of a route (`config.rateLimit`) and of `fastify.rateLimit()`/`createRateLimit()`. */
export interface RateLimitOptions extends TollgateLimitOptions {
  /** Requests per `timeWindow` (default 1000), or a function of the request and its key. */
  max?: number | ((request: FastifyRequest, key: string) => Maybe<number>);
  /** The window: ms, an `ms` string ("1 minute"), or a function (default 60000). */
  timeWindow?: number | string | ((request: FastifyRequest, key: string) => Maybe<number>);
  /** Denials (429) per window before the next are 403; 0: the first denial is 403; default -1 (never). */
  ban?: number;
  /** The Fastify hook that decides (default "onRequest"). */
  hook?: "onRequest" | "preParsing" | "preValidation" | "preHandler";
  /** Keys never limited, or a function of the request and its key. */
  allowList?: readonly string[] | ((request: FastifyRequest, key: string) => Maybe<boolean>);
  /** The key of a request (default: its IP, IPv6 addresses by their `/ipv6Subnet`). */
  keyGenerator?: (request: FastifyRequest) => Maybe<string | number>;
  /** IPv6 prefix length of the default key (default 64). */
  ipv6Subnet?: number;
  /** Appended to the key, as in @fastify/rate-limit; each route counts apart. */
  groupId?: string;
  /** The error (or object) thrown on a denial, answered by Fastify's error handler. */
  errorResponseBuilder?: (request: FastifyRequest, context: RateLimitErrorContext) => object;
  /** `RateLimit-Limit`, `-Remaining`, `-Reset` instead of the `X-RateLimit-` ones. */
  enableDraftSpec?: boolean;
  addHeaders?: RateLimitHeaderSwitches;
  addHeadersOnExceeding?: RateLimitHeaderSwitches;
  onExceeding?: (request: FastifyRequest, key: string) => void;
  onExceeded?: (request: FastifyRequest, key: string) => void;
  onBanReach?: (request: FastifyRequest, key: string) => void;
  /** A store error lets the request through instead of failing it. */
  skipOnError?: boolean;
  /** In-memory keys kept (default 5000). */
  cache?: number;
}

/** The plugin's options: a route's, and where the state lives. */
export interface FastifyRateLimitOptions extends RateLimitOptions {
  /** Limit every route (default true); false: only routes with `config.rateLimit`. */
  global?: boolean;
  /** A tollgate store (`RedisStore`, `WorkerStore`), or a @fastify/rate-limit store's constructor. */
  store?: Store | (new (options: FastifyRateLimitOptions) => FastifyRateLimitStore);
  /** An ioredis client: the state in Redis through tollgate's `RedisStore`. */
  redis?: unknown;
  /** The prefix of the Redis keys (default "fastify-rate-limit-"). */
  nameSpace?: string;
}

/** What `createRateLimit()`'s check answers. */
export type RateLimitResult =
  | { isAllowed: true; key: string }
  | {
      isAllowed: false;
      key: string;
      max: number;
      timeWindow: number;
      remaining: number;
      ttl: number;
      ttlInSeconds: number;
      isExceeded: boolean;
      isBanned: boolean;
    };

declare module "fastify" {
  interface FastifyInstance<RawServer, RawRequest, RawReply, Logger, TypeProvider> {
    /** A hook deciding requests by the plugin's options with `options` over them. */
    rateLimit<
      RouteGeneric extends RouteGenericInterface = RouteGenericInterface,
      ContextConfig = ContextConfigDefault,
      SchemaCompiler extends FastifySchema = FastifySchema,
    >(options?: RateLimitOptions): preHandlerAsyncHookHandler<RawServer, RawRequest, RawReply, RouteGeneric, ContextConfig, SchemaCompiler, TypeProvider, Logger>;
    /** A check by hand; `{ increment: false }` peeks without counting. */
    createRateLimit(options?: RateLimitOptions): (request: FastifyRequest, options?: { increment?: boolean }) => Promise<RateLimitResult>;
  }
  interface FastifyContextConfig {
    rateLimit?: RateLimitOptions | false;
  }
}

/** @fastify/rate-limit's `normalizeIP`: IPv4 as it is, IPv6 as the first address of its `/ipv6Subnet` (default 64). */
export declare function normalizeIP(ip: string, ipv6Subnet?: number): string;

export declare const fastifyRateLimit: FastifyPluginAsync<FastifyRateLimitOptions>;
export default fastifyRateLimit;
