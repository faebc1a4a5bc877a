//! Every error the HTTP API answers: a status, a stable machine-readable code and a message
//! for people, always as `{"error":{"code":"...","message":"..."}}`.
//!
//! Handlers return `Result<Response, ApiError>`; only the outermost layer turns an
//! `ApiError` into a response, so no path can answer an error as plain text or HTML.

use serde::Serialize;
use worker::Response;

/// An error with the HTTP status it is answered with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status (4xx for the caller's mistakes, 5xx for ours).
    pub status: u16,
    /// Stable code, documented in worker/README.md.
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
    /// Extra headers (`Allow` on a 405, `WWW-Authenticate` on a 401).
    pub headers: Vec<(&'static str, String)>,
    /// The field the mistake is in (`cost`, `key`), as the npm package's error `.field`
    /// names it for the same mistake; answered as `error.field` when known.
    pub field: Option<String>,
}

impl ApiError {
    /// An error of `status` with `code` and `message`.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), headers: Vec::new(), field: None }
    }

    /// 400 with `code`.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, code, message)
    }

    /// 404 for a path the API does not have. The answer does not repeat the path: it may hold
    /// a key (often a client's address) or anything a client sent.
    pub fn not_found() -> ApiError {
        ApiError::new(404, "not_found", "no route for this path (the API's routes: worker/README.md)")
    }

    /// 405 naming the methods the route takes (and not the path, as [`ApiError::not_found`]).
    pub fn method_not_allowed(method: &str, allow: &'static str) -> ApiError {
        ApiError::new(405, "method_not_allowed", format!("{method} is not allowed on this route; use {allow}"))
            .with_header("Allow", allow)
    }

    /// 500 for a failure of the runtime or of our own code (the message is logged, and
    /// also returned: it never holds a secret).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "internal", message)
    }

    /// The same error naming the field it is about.
    pub fn with_field(mut self, field: impl Into<String>) -> ApiError {
        self.field = Some(field.into());
        self
    }

    /// The same error with one more response header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> ApiError {
        self.headers.push((name, value.into()));
        self
    }

    /// The JSON body.
    pub fn body(&self) -> String {
        #[derive(Serialize)]
        struct Inner<'a> {
            code: &'a str,
            message: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            field: Option<&'a str>,
        }
        #[derive(Serialize)]
        struct Outer<'a> {
            error: Inner<'a>,
        }
        let field = self.field.as_deref();
        serde_json::to_string(&Outer { error: Inner { code: self.code, message: &self.message, field } })
            .unwrap_or_else(|_| r#"{"error":{"code":"internal","message":"could not encode the error"}}"#.into())
    }

    /// The response: JSON body, status, `no-store`, and the extra headers.
    pub fn to_response(&self) -> Response {
        crate::base::http::json_response(self.status, &self.headers, self.body())
    }
}

impl From<worker::Error> for ApiError {
    fn from(e: worker::Error) -> ApiError {
        ApiError::internal(e.to_string())
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_the_documented_shape_and_escapes_messages() {
        let e = ApiError::bad_request("invalid_json", "expected \"{\" at line 1");
        let v: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(v["error"]["code"], "invalid_json");
        assert_eq!(v["error"]["message"], "expected \"{\" at line 1");
    }
}
