//! A concurrency limit's fields (`{ algorithm: "concurrency", limit: 4, leaseTtl: "30s" }`,
//! docs/concurrency.md): `limit` slots, each lease lasting `leaseTtl` (default
//! [`DEFAULT_LEASE_TTL`]); no window, quota or rate options.

use alloc::string::String;

use crate::algorithms::{AnyAlgorithm, Concurrency, Kind, LimitSpec, MAX_CONCURRENCY, MAX_LEASE_TTL};
use crate::policy::Limit;
use crate::text::Msg;
use crate::time::Nanos;

use super::{code, duration, limit_name, named, path, unsupported, whole, Input, SpecError, Value, LIMIT_FIELDS};

/// The algorithm's name in a configuration.
pub const CONCURRENCY: &str = "concurrency";

/// The field of a concurrency limit that the rate limits do not have: how long a lease lasts
/// unless renewed or released (the same name and parser as the Worker's leased mode, whose
/// `leaseTtl` is a policy's field, beside its limits).
pub const LEASE_TTL_FIELD: &str = super::LEASE_FIELD;

/// A lease's time to live when `leaseTtl` is not given: 30 seconds.
pub const DEFAULT_LEASE_TTL: Nanos = Nanos::from_secs(30);

/// Never used: [`parse_concurrency`] builds only limits `Concurrency::new` accepts.
const DEFAULT: Concurrency = Concurrency::from_parts(1, DEFAULT_LEASE_TTL);

/// Whether the limit object `o` is a concurrency limit.
pub(crate) fn is_concurrency<I: Input>(o: &I) -> bool {
    matches!(o.get("algorithm"), Value::Text(a) if a == CONCURRENCY)
}

/// One concurrency limit at `at` (`limits[1]`, or empty at the top).
pub(crate) fn parse_concurrency<I: Input>(
    o: &I,
    at: &str,
    default_name: &str,
) -> Result<(String, LimitSpec, Limit), SpecError> {
    let f = |name: &str| path(at, name);
    for field in LIMIT_FIELDS.iter().filter(|n| !matches!(**n, "algorithm" | "limit" | "name")) {
        if !matches!(o.get(field), Value::Missing) {
            return Err(unsupported(&f(field), Kind::Concurrency));
        }
    }
    let limit_field = f("limit");
    let Some(limit) = whole(o, &limit_field, 1, MAX_CONCURRENCY, "")? else {
        let m = Msg::new(&limit_field).s(" is required: how many at once (1 to ").n(MAX_CONCURRENCY).s(")");
        return Err(SpecError::new(code::MISSING_FIELD, &limit_field, m));
    };
    let ttl_field = f(LEASE_TTL_FIELD);
    let ttl = duration(o, &ttl_field, 1)?.unwrap_or(DEFAULT_LEASE_TTL);
    if ttl > MAX_LEASE_TTL {
        let m = Msg::new(&ttl_field).s(" is longer than the maximum ").n(MAX_LEASE_TTL.as_nanos() / 1_000_000).s(" ms");
        return Err(SpecError::new(code::OUT_OF_RANGE, &ttl_field, m));
    }
    let name = limit_name(o, at, default_name)?;
    let spec = LimitSpec::new(Kind::Concurrency, limit, ttl);
    // In range: `limit` and the TTL were checked above.
    let c = Concurrency::new(limit, ttl).unwrap_or(DEFAULT);
    let limit = named(at, &name, AnyAlgorithm::Concurrency(c))?;
    Ok((name, spec, limit))
}
