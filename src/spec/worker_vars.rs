//! The Worker's deployment vars that are not limits (`API_PREFIX`, `DENIAL_LOG_SAMPLE_RATE`,
//! the `PUBLIC` and `TEST_MODE` switches, `ORIGIN` and `PROXY.keyHeader`): read from text,
//! refused with a message that names the var, as the limits are (worker/src/config).

use alloc::format;
use alloc::string::{String, ToString};

use crate::headers::is_field_name;

/// The admin API's path prefix unless `API_PREFIX` says otherwise.
pub const DEFAULT_API_PREFIX: &str = "/v1";

/// The request header that carries `ORIGIN_SECRET` to the origin.
pub const ORIGIN_SECRET_HEADER: &str = "Tollgate-Origin-Secret";

/// One denial in a hundred is logged unless `DENIAL_LOG_SAMPLE_RATE` says otherwise: enough to
/// see who is limited, not a line per request of a client hammering a limit.
pub const DEFAULT_DENIAL_LOG_SAMPLE_RATE: f64 = 0.01;

/// The part of `path` after `prefix` (whole segments only), when `path` is under it.
pub fn api_route<'p>(prefix: &str, path: &'p str) -> Option<&'p str> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// Parses `API_PREFIX`: a path of one or more segments such as `/v1` or `/_tollgate/v1`
/// (letters, digits, `-`, `_`, `.`, `~`), without a trailing `/`. Unset or empty: `/v1`.
pub fn parse_api_prefix(v: Option<&str>) -> Result<String, String> {
    let p = match v.map(str::trim) {
        None | Some("") => return Ok(DEFAULT_API_PREFIX.to_string()),
        Some(p) => p,
    };
    let segments_ok = p.strip_prefix('/').is_some_and(|rest| {
        rest.split('/').all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
        })
    });
    if !segments_ok || p == "/healthz" {
        return Err(format!(
            "API_PREFIX must be a path such as \"/v1\" or \"/_tollgate/v1\" (segments of letters, digits,              -, _, ., ~; no trailing /; not /healthz), not {p:?}"
        ));
    }
    Ok(p.to_string())
}

/// Parses `DENIAL_LOG_SAMPLE_RATE`: a number from 0 (none) to 1 (every denial).
pub fn parse_sample_rate(v: Option<&str>) -> Result<f64, String> {
    match v.map(str::trim) {
        None | Some("") => Ok(DEFAULT_DENIAL_LOG_SAMPLE_RATE),
        Some(s) => s.parse::<f64>().ok().filter(|r| (0.0..=1.0).contains(r)).ok_or_else(|| {
            format!("DENIAL_LOG_SAMPLE_RATE must be a number from 0 (log no denial) to 1 (every denial), not {s:?}")
        }),
    }
}

/// Whether a switch var's value turns it on (only `true`, `"true"`, `"on"`, `"1"`): `PUBLIC`
/// opens `/v1` without a token, `TEST_MODE` the test switch.
pub fn switch_on(v: Option<&str>) -> bool {
    matches!(v.map(str::trim), Some("on" | "true" | "1"))
}

/// Parses `ORIGIN`, where proxy mode forwards (scheme, host, optional port and path prefix,
/// without a trailing `/`); unset or empty: no proxy mode.
pub fn parse_origin(v: Option<&str>) -> Result<Option<String>, String> {
    let origin = match v.map(str::trim) {
        None | Some("") => return Ok(None),
        Some(o) => o.trim_end_matches('/').to_string(),
    };
    if !(origin.starts_with("http://") || origin.starts_with("https://")) {
        return Err(format!("ORIGIN must be an http:// or https:// URL, not {origin:?}"));
    }
    Ok(Some(origin))
}

/// Parses `PROXY.keyHeader`, the request header whose value is a proxied request's key:
/// a header name, lowercased.
pub fn parse_key_header(v: Option<&str>) -> Result<Option<String>, String> {
    match v.map(|h| h.trim().to_ascii_lowercase()) {
        None => Ok(None),
        Some(h) if is_field_name(&h) => Ok(Some(h)),
        Some(h) => Err(format!("PROXY.keyHeader must be an HTTP header name, not {h:?}")),
    }
}
