//! Bearer-token authentication for `/v1`, when the `API_TOKEN` secret is set.

use crate::errors::ApiError;

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

/// Checks `Authorization: Bearer <token>` against the configured token (none: open).
pub fn check(token: Option<&str>, authorization: Option<&str>) -> Result<(), ApiError> {
    let Some(token) = token else { return Ok(()) };
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
        assert!(check(None, None).is_ok());
        assert!(check(Some("s3cret"), Some("Bearer s3cret")).is_ok());
        for bad in
            [None, Some("s3cret"), Some("Bearer s3cre"), Some("Bearer s3cret2"), Some("Basic s3cret"), Some("Bearer ")]
        {
            let e = check(Some("s3cret"), bad).unwrap_err();
            assert_eq!((e.status, e.code), (401, "unauthorized"), "{bad:?}");
        }
    }

    #[test]
    fn comparison_handles_every_length() {
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"a", b""));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(!constant_time_eq(b"ab", b"ab\0"));
    }
}
