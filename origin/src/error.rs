//! Every refusal the origin gives, and its one mapping to HTTP.
//!
//! Bodies are always `{"code": "...", "message": "..."}`; internal causes are logged
//! and never sent.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rules::confirm::InvalidConfirm;

use crate::store::StoreError;

#[derive(Debug)]
pub enum ApiError {
    /// The request does not carry a valid, fresh, first-seen edge signature.
    SignatureInvalid,
    /// The request is malformed; the message says how.
    BadRequest {
        code: &'static str,
        message: String,
    },
    NotFound {
        code: &'static str,
        message: &'static str,
    },
    MethodNotAllowed,
    /// Refused for a reason the message gives, with its own status.
    Refused {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// Username and password do not match a user.
    InvalidCredentials,
    /// Too much work in flight; try again shortly.
    Busy,
    /// The request took longer than the API allows any request.
    RequestTimeout,
    /// A request with this Idempotency-Key is still running.
    IdempotencyInFlight,
    /// This Idempotency-Key was first used for a different request body.
    IdempotencyKeyReused,
    /// An operator route without the operator's token.
    OperatorTokenInvalid,
    /// Operator routes are off: `OPERATOR_TOKEN` is not set.
    OperatorRoutesDisabled,
    /// This client has failed too often lately; it may try again after a while.
    TooManyAttempts {
        retry_after_secs: i64,
    },
    /// Our fault; the cause is logged.
    Internal(String),
}

impl ApiError {
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::Internal(cause.to_string())
    }
}

impl From<InvalidConfirm> for ApiError {
    fn from(err: InvalidConfirm) -> Self {
        Self::BadRequest {
            code: err.code(),
            message: err.to_string(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Busy => Self::Busy,
            other => Self::internal(other),
        }
    }
}

/// The one error body: `{"code": "...", "message": "..."}`.
pub fn error_body(code: &str, message: &str) -> serde_json::Value {
    serde_json::json!({ "code": code, "message": message })
}

/// A 503 (or 409) the client should retry after a second.
fn retry_soon(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        [("retry-after", "1")],
        Json(error_body(code, message)),
    )
        .into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            Self::SignatureInvalid => (
                StatusCode::UNAUTHORIZED,
                "SIGNATURE_INVALID",
                "the request is not signed by the edge".to_owned(),
            ),
            Self::BadRequest { code, message } => (StatusCode::BAD_REQUEST, code, message),
            Self::NotFound { code, message } => (StatusCode::NOT_FOUND, code, message.to_owned()),
            Self::Refused {
                status,
                code,
                message,
            } => (status, code, message),
            Self::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "METHOD_NOT_ALLOWED",
                "this route does not accept that method".to_owned(),
            ),
            Self::InvalidCredentials => (
                StatusCode::UNAUTHORIZED,
                "INVALID_CREDENTIALS",
                "the username or password is not right".to_owned(),
            ),
            Self::Busy => {
                return retry_soon(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "BUSY",
                    "the service is busy; try again shortly",
                )
            }
            Self::IdempotencyInFlight => {
                return retry_soon(
                    StatusCode::CONFLICT,
                    "IDEMPOTENCY_IN_FLIGHT",
                    "a request with this Idempotency-Key is still being processed; retry shortly",
                )
            }
            Self::RequestTimeout => (
                StatusCode::REQUEST_TIMEOUT,
                "REQUEST_TIMEOUT",
                "the request took too long; a payment it started still completes — read it back"
                    .to_owned(),
            ),
            Self::IdempotencyKeyReused => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "IDEMPOTENCY_KEY_REUSED",
                "this Idempotency-Key was already used for a different request".to_owned(),
            ),
            Self::TooManyAttempts { retry_after_secs } => {
                return (
                    StatusCode::TOO_MANY_REQUESTS,
                    [("retry-after", retry_after_secs.max(1).to_string())],
                    Json(error_body(
                        "RATE_LIMITED",
                        "too many failed attempts from this address; try again after Retry-After seconds",
                    )),
                )
                    .into_response()
            }
            Self::OperatorTokenInvalid => (
                StatusCode::UNAUTHORIZED,
                "OPERATOR_TOKEN_INVALID",
                "operator routes need Authorization: Bearer <OPERATOR_TOKEN>".to_owned(),
            ),
            Self::OperatorRoutesDisabled => (
                StatusCode::FORBIDDEN,
                "OPERATOR_ROUTES_DISABLED",
                "operator routes are off because OPERATOR_TOKEN is not set".to_owned(),
            ),
            Self::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    "the payment service could not handle the request".to_owned(),
                )
            }
        };
        (status, Json(error_body(code, &message))).into_response()
    }
}
