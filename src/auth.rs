//! The caller of a request: its bearer token, verified locally with no I/O.

use rules::token::{AccessClaims, KeySet};
use worker::Request;

use crate::error::ApiError;

/// Verifies the request's `Authorization: Bearer` token at `now_secs`.
/// The reason for a refusal is logged; the client learns only that it was refused.
pub fn authenticate(req: &Request, keys: &KeySet, now_secs: i64) -> Result<AccessClaims, ApiError> {
    let header = req.headers().get("authorization")?.ok_or_else(|| {
        ApiError::new(
            401,
            "TOKEN_MISSING",
            "an Authorization: Bearer token is required",
        )
    })?;
    let token = bearer_token(&header)
        .ok_or_else(|| ApiError::new(401, "TOKEN_INVALID", "the access token is not valid"))?;
    keys.verify(token, now_secs).map_err(|rejection| {
        worker::console_log!("token refused: {rejection}");
        ApiError::new(401, "TOKEN_INVALID", "the access token is not valid")
    })
}

/// The token of an `Authorization` header value; the scheme is case-insensitive.
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer "), None);
    }
}
