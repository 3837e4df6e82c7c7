//! Operator routes, behind `Authorization: Bearer $OPERATOR_TOKEN`. With no token
//! configured they are off, never open.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use axum::Json;

use crate::app::AppState;
use crate::error::ApiError;
use crate::guard::GuardView;

/// Lets a request through only with the operator's bearer token.
pub async fn require_operator(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let expected = state
        .operator_token
        .as_deref()
        .ok_or(ApiError::OperatorRoutesDisabled)?;
    let given = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !same_secret(given.as_bytes(), expected.as_bytes()) {
        tracing::warn!(path = %request.uri().path(), "operator route refused");
        return Err(ApiError::OperatorTokenInvalid);
    }
    Ok(next.run(request).await)
}

/// Compares in time that depends on the lengths only, not on where they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// `GET /admin/guard`: breaker state and transitions, calls in flight, bulkhead and
/// limiter, refusals so far.
pub async fn guard(State(state): State<AppState>) -> Json<GuardView> {
    Json(state.guard.view())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_bytes_are_the_same_secret() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }
}
