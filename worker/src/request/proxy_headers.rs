//! Which of a client's request headers proxy mode forwards to the origin.
//!
//! Dropped: `Host` (the origin's own is sent); the hop-by-hop headers of RFC 9110 section 7.6.1
//! (`Connection` and every header it names, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`,
//! `Transfer-Encoding`, `Upgrade`: proxy mode passes requests, not WebSocket or other upgraded
//! connections); and the headers the limiter itself speaks, so a client cannot pose as it to
//! the origin: `Tollgate-*` (among them the origin secret's header, which the Worker sets
//! itself), `RateLimit` and `RateLimit-*` (the standard headers), `X-RateLimit-*` (the legacy
//! ones). The origin sees the limiter's own rate-limit headers, added after this filter.

/// Whether a client's request header `name` (any case) is forwarded, given the value of the
/// request's `Connection` header (the names it lists are hop-by-hop too).
pub fn forwarded(name: &str, connection: Option<&str>) -> bool {
    let n = name.to_ascii_lowercase();
    let hop_by_hop =
        matches!(n.as_str(), "connection" | "keep-alive" | "te" | "trailer" | "transfer-encoding" | "upgrade")
            || n.starts_with("proxy-");
    let limiters =
        n.starts_with("tollgate-") || n == "ratelimit" || n.starts_with("ratelimit-") || n.starts_with("x-ratelimit-");
    let listed = connection.is_some_and(|c| c.split(',').any(|t| t.trim().eq_ignore_ascii_case(&n)));
    n != "host" && !hop_by_hop && !limiters && !listed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_and_the_limiters_own_headers_stay_behind() {
        for dropped in [
            "Host",
            "Connection",
            "Keep-Alive",
            "Proxy-Authorization",
            "proxy-connection",
            "TE",
            "Trailer",
            "Transfer-Encoding",
            "Upgrade",
            "Tollgate-Test-Fault",
            "tollgate-origin-secret",
            "RateLimit",
            "RateLimit-Policy",
            "ratelimit-remaining",
            "X-RateLimit-Remaining",
        ] {
            assert!(!forwarded(dropped, None), "{dropped}");
        }
        for kept in ["Authorization", "Content-Type", "X-Api-Key", "Cookie", "Accept", "X-Forwarded-For", "Retry-After"]
        {
            assert!(forwarded(kept, None), "{kept}");
        }
    }

    #[test]
    fn the_headers_connection_names_are_hop_by_hop() {
        let connection = Some("keep-alive, X-Session-Hop ,close");
        assert!(!forwarded("x-session-hop", connection));
        assert!(!forwarded("X-Session-Hop", connection));
        assert!(forwarded("x-session", connection));
        assert!(forwarded("close-enough", connection));
    }
}
