// express-rate-limit's start-up and first-request checks, under its codes (`ERR_ERL_*`,
// `WRN_ERL_*`), so that an app moving over keeps the warnings it knows. As in express-rate-limit
// each check runs at most once per middleware, reports through `logger` (default: the console)
// and never throws: a misconfiguration is pointed out, the request goes on. `validate: false`
// turns them all off, `validate: { name: false }` one of them.
import { fail } from "../contract/options.js";
import { HEADER_DRAFTS } from "../contract/contract.generated.js";

/**
 * A check's finding, with express-rate-limit's code and help page. Its `name` is written out,
 * as every error class of the package writes its own: a minifier may rename a class.
 */
export class ValidationError extends Error {
  constructor(code, message, name = "ValidationError") {
    const help = `https://express-rate-limit.github.io/${code}/`;
    super(`${message} See ${help} for more information.`);
    this.name = name;
    this.code = code;
    this.help = help;
  }
}

/** A finding about a setting whose meaning changed between express-rate-limit versions (logged as a warning). */
export class ChangeWarning extends ValidationError {
  constructor(code, message) {
    super(code, message, "ChangeWarning");
  }
}

/** express-rate-limit's default logger: the console, message first. */
export const consoleLogger = {
  warn: (...args) => console.warn(...args.reverse()),
  error: (...args) => console.error(...args.reverse()),
};

/** ERL-store instances in use by some middleware (one must not serve two). */
const usedStores = new WeakSet();
/** Per request: the keys each store (or limiter) counted, to catch a request counted twice. */
const countedKeys = new WeakMap();

const isIPv4 = (s) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s);
const isIPv6 = (s) => s.includes(":") && /^[0-9a-fA-F:.]+(%.+)?$/.test(s);
const appSetting = (req, name) => (typeof req.app?.get === "function" ? req.app.get(name) : undefined);

/** The checks; `this` is the set of them (see `validations`). */
const CHECKS = {
  ip(ip) {
    if (ip === undefined) {
      throw new ValidationError("ERR_ERL_UNDEFINED_IP_ADDRESS", "An undefined 'request.ip' was detected. This might indicate a misconfiguration or the connection being destroyed prematurely.");
    }
    if (!isIPv4(ip) && !isIPv6(ip)) {
      throw new ValidationError("ERR_ERL_INVALID_IP_ADDRESS", `An invalid 'request.ip' (${ip}) was detected. Consider passing a custom 'keyGenerator' function to the rate limiter.`);
    }
  },
  trustProxy(req) {
    if (appSetting(req, "trust proxy") === true) {
      throw new ValidationError("ERR_ERL_PERMISSIVE_TRUST_PROXY", "The Express 'trust proxy' setting is true, which allows anyone to trivially bypass IP-based rate limiting.");
    }
  },
  xForwardedForHeader(req) {
    if (req.headers?.["x-forwarded-for"] && appSetting(req, "trust proxy") === false) {
      throw new ValidationError("ERR_ERL_UNEXPECTED_X_FORWARDED_FOR", "The 'X-Forwarded-For' header is set but the Express 'trust proxy' setting is false (default). This could indicate a misconfiguration which would prevent the rate limiter from accurately identifying users.");
    }
  },
  forwardedHeader(req) {
    if (req.headers?.forwarded && req.ip === req.socket?.remoteAddress) {
      throw new ValidationError("ERR_ERL_FORWARDED_HEADER", "The 'Forwarded' header (standardized X-Forwarded-For) is set but currently being ignored. Add a custom keyGenerator to use a value from this header.");
    }
  },
  positiveHits(hits) {
    if (typeof hits !== "number" || hits < 1 || hits !== Math.round(hits)) {
      throw new ValidationError("ERR_ERL_INVALID_HITS", `The totalHits value returned from the store must be a positive integer, got ${hits}`);
    }
  },
  unsharedStore(store) {
    if (usedStores.has(store)) {
      const prefix = store.localKeys ? "" : " (with a unique prefix)";
      throw new ValidationError("ERR_ERL_STORE_REUSE", `A Store instance must not be shared across multiple rate limiters. Create a new instance of ${store.constructor.name}${prefix} for each limiter instead.`);
    }
    usedStores.add(store);
  },
  /** `counter`: what counted (a store with local keys, a store's class name for shared ones, or a limiter). */
  singleCount(req, counter, key) {
    if (req === null || typeof req !== "object") return;
    let perCounter = countedKeys.get(req);
    if (perCounter === undefined) countedKeys.set(req, (perCounter = new Map()));
    let keys = perCounter.get(counter);
    if (keys === undefined) perCounter.set(counter, (keys = []));
    if (keys.includes(key)) {
      throw new ValidationError("ERR_ERL_DOUBLE_COUNT", `The hit count for ${key} was incremented more than once for a single request.`);
    }
    keys.push(key);
  },
  limit(limit) {
    if (limit === 0) {
      throw new ChangeWarning("WRN_ERL_MAX_ZERO", "Setting limit or max to 0 disables rate limiting in express-rate-limit v6 and older, but will cause all requests to be blocked in v7 and later (and in tollgate)");
    }
  },
  draftPolliHeaders(value) {
    if (value) {
      throw new ChangeWarning("WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS", "The draft_polli_ratelimit_headers configuration option is deprecated and has been removed in express-rate-limit v7, please set standardHeaders: 'draft-6' instead.");
    }
  },
  onLimitReached(value) {
    if (value) {
      throw new ChangeWarning("WRN_ERL_DEPRECATED_ON_LIMIT_REACHED", "The onLimitReached configuration option is deprecated and has been removed in express-rate-limit v7.");
    }
  },
  headersDraftVersion(version) {
    if (!HEADER_DRAFTS.includes(version)) {
      throw new ValidationError("ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION", `standardHeaders: only the following versions of the IETF draft specification are supported: ${HEADER_DRAFTS.join(", ")}; got ${JSON.stringify(version)}.`);
    }
  },
  headersResetTime(resetTime) {
    if (!resetTime) {
      throw new ValidationError("ERR_ERL_HEADERS_NO_RESET", "standardHeaders: 'draft-7' requires a 'resetTime', but the store did not provide one. The 'windowMs' value will be used instead, which may cause clients to wait longer than necessary.");
    }
  },
  knownOptions(options, known) {
    for (const name of Object.keys(options)) {
      if (!known.includes(name)) throw new ValidationError("ERR_ERL_UNKNOWN_OPTION", `Unexpected configuration option: ${name}`);
    }
  },
  validationsConfig() {
    const supported = [...Object.keys(CHECKS), "default"];
    for (const name of Object.keys(this.enabled)) {
      if (!supported.includes(name)) {
        throw new ValidationError("ERR_ERL_UNKNOWN_VALIDATION", `options.validate.${name} is not recognized. Supported validate options are: ${supported.join(", ")}.`);
      }
    }
  },
  creationStack(localKeys) {
    const { stack } = new Error("tollgate validation check (set options.validate.creationStack=false to disable)");
    if (stack?.includes("Layer.handle [as handle_request]") || stack?.includes("Layer.handleRequest")) {
      const usually = localKeys ? "" : " *usually*";
      throw new ValidationError("ERR_ERL_CREATED_IN_REQUEST_HANDLER", `A rate limiter should${usually} be created at app initialization, not when responding to a request.`);
    }
  },
  ipv6Subnet(subnet) {
    if (subnet === false) return;
    if (!Number.isInteger(subnet) || subnet < 32 || subnet > 64) {
      throw new ValidationError("ERR_ERL_IPV6_SUBNET", `Unexpected ipv6Subnet value: ${subnet}. Expected an integer between 32 and 64 (usually 48-64).`);
    }
  },
  ipv6SubnetOrKeyGenerator(options) {
    if (options.ipv6Subnet !== undefined && options.keyGenerator) {
      throw new ValidationError("ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR", "Incompatible options: the 'ipv6Subnet' option is ignored when a custom 'keyGenerator' function is also set.");
    }
  },
  keyGeneratorIpFallback(keyGenerator) {
    if (typeof keyGenerator !== "function") return;
    const src = keyGenerator.toString();
    if ((src.includes("req.ip") || src.includes("request.ip")) && !src.includes("ipKeyGenerator") && !src.includes("ipKey(")) {
      throw new ValidationError("ERR_ERL_KEY_GEN_IPV6", "Custom keyGenerator appears to use request IP without calling the ipKeyGenerator helper function for IPv6 addresses. This could allow IPv6 users to bypass limits.");
    }
  },
};

/**
 * The checks of one middleware. `enabled`: the `validate` option (true, false, or per check
 * name, `default` for the rest). Each check runs once, then turns itself off; what it finds goes
 * to `logger.warn` (a ChangeWarning) or `logger.error`.
 */
export function validations(enabled, logger) {
  const on = typeof enabled === "boolean" ? { default: enabled } : { default: true, ...enabled };
  const v = { enabled: on };
  for (const [name, check] of Object.entries(CHECKS)) {
    v[name] = (...args) => {
      if (!(on[name] ?? on.default)) return;
      on[name] = false;
      try {
        check.apply(v, args);
      } catch (e) {
        if (e instanceof ChangeWarning) logger.warn(e);
        else logger.error(e);
      }
    };
  }
  return v;
}

/** Throws unless `logger` has express-rate-limit's Logger shape (`error`, `warn`). */
export function checkLogger(logger) {
  if (logger === null || typeof logger !== "object" || typeof logger.error !== "function" || typeof logger.warn !== "function") {
    throw fail("logger", logger, "an object with error(...) and warn(...) methods (express-rate-limit's Logger)");
  }
}
