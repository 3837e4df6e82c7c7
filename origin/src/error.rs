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
    Conflict {
        code: &'static str,
        message: &'static str,
    },
    MethodNotAllowed,
    /// Username and password do not match a user.
    InvalidCredentials,
    /// Too much work in flight; try again shortly.
    Busy,
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
            StoreError::DuplicateOrder => Self::Conflict {
                code: "ORDER_EXISTS",
                message: "a payment for this orderId already exists; read it with GET /payments/{orderId}",
            },
            other => Self::internal(other),
        }
    }
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
            Self::Conflict { code, message } => (StatusCode::CONFLICT, code, message.to_owned()),
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
                let body = Json(serde_json::json!({
                    "code": "BUSY",
                    "message": "the service is busy; try again shortly",
                }));
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [("retry-after", "1")],
                    body,
                )
                    .into_response();
            }
            Self::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    "the payment service could not handle the request".to_owned(),
                )
            }
        };
        (
            status,
            Json(serde_json::json!({ "code": code, "message": message })),
        )
            .into_response()
    }
}
