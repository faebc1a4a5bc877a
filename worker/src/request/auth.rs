//! Bearer-token authentication for `/v1`. Secure by default: without the `API_TOKEN` secret
//! `/v1` serves nothing (503 `auth_not_configured`, saying what to set) unless the `PUBLIC`
//! var opens it explicitly, for local development. A set token always applies, `PUBLIC` or not.

use crate::base::errors::ApiError;

/// Compares two byte strings in time that depends only on `expected`'s length, never on
/// where they differ (so response timing does not reveal how much of a guess was right).
pub fn constant_time_eq(expected: &[u8], given: &[u8]) -> bool {
    let mut diff = (expected.len() ^ given.len()) as u64;
    for (i, &e) in expected.iter().enumerate() {
        // Out-of-range reads compare against 0; the length difference already failed them.
        let g = given.get(i).copied().unwrap_or(0);
        diff |= u64::from(e ^ g);
    }
    diff == 0
}

/// The code of the answer to `/v1` when neither `API_TOKEN` nor `PUBLIC` is set.
pub const NOT_CONFIGURED: &str = "auth_not_configured";

/// Checks `Authorization: Bearer <token>` against the configured token. No token: open only
/// when `public`, otherwise 503 (the deployment is incomplete, not the caller wrong). No
/// message ever holds the token or what the caller sent.
pub fn check(token: Option<&str>, public: bool, authorization: Option<&str>) -> Result<(), ApiError> {
    let Some(token) = token else {
        if public {
            return Ok(());
        }
        return Err(ApiError::new(
            503,
            NOT_CONFIGURED,
            "this API serves nothing until it is secured: set the API_TOKEN secret \
             (npx wrangler secret put API_TOKEN), or set the var PUBLIC = \"true\" to serve it to anyone \
             (local development only)",
        ));
    };
    let unauthorized = |msg: &str| {
        ApiError::new(401, "unauthorized", msg).with_header("WWW-Authenticate", "Bearer realm=\"tollgate\"")
    };
    let Some(value) = authorization else {
        return Err(unauthorized("this API needs an Authorization: Bearer <token> header"));
    };
    let given = value.trim().strip_prefix("Bearer ").or_else(|| value.trim().strip_prefix("bearer ")).unwrap_or("");
    if constant_time_eq(token.as_bytes(), given.trim().as_bytes()) {
        Ok(())
    } else {
        Err(unauthorized("the bearer token is not valid"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_passes() {
        assert!(check(Some("s3cret"), false, Some("Bearer s3cret")).is_ok());
        assert!(check(Some("s3cret"), true, Some("bearer s3cret")).is_ok());
        for bad in
            [None, Some("s3cret"), Some("Bearer s3cre"), Some("Bearer s3cret2"), Some("Basic s3cret"), Some("Bearer ")]
        {
            for public in [false, true] {
                let e = check(Some("s3cret"), public, bad).unwrap_err();
                assert_eq!((e.status, e.code), (401, "unauthorized"), "{bad:?}, a token applies even when public");
                assert!(!e.message.contains("s3cre"), "never echoes a secret");
            }
        }
    }

    #[test]
    fn without_a_token_only_public_opens_the_api() {
        assert!(check(None, true, None).is_ok());
        let e = check(None, false, Some("Bearer anything")).unwrap_err();
        assert_eq!((e.status, e.code), (503, NOT_CONFIGURED));
        assert!(e.message.contains("API_TOKEN") && e.message.contains("PUBLIC"), "{}", e.message);
    }

    #[test]
    fn comparison_handles_every_length() {
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"a", b""));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(!constant_time_eq(b"ab", b"ab\0"));
    }
}
