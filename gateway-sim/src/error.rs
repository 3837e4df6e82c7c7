//! The one error type of the HTTP surface.
//!
//! Clients of a payment gateway branch on a machine-readable `code`, so every
//! failure — including axum's own extractor rejections and unknown routes —
//! is turned into `{"code":"UPPER_SNAKE","message":"..."}` here, never plain
//! text.

use std::num::NonZeroU32;

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("orderId {order_id:?} was already confirmed with a different paymentKey or amount")]
    OrderConflict { order_id: String },
    #[error("orderId {order_id:?} was declined: no money was taken, nothing to cancel")]
    NotCancellable { order_id: String },
    #[error("orderId {order_id:?} is not decided yet; cancel once it is")]
    PaymentPending { order_id: String },
    #[error("method not allowed for this path")]
    MethodNotAllowed,
    /// A `PUT /admin/faults` body that is not a valid setting.
    #[error("{0}")]
    InvalidFaults(String),
    /// `REFUSE_CONNECTIONS` asked of a simulator whose socket is owned by
    /// someone else's server.
    #[error(
        "REFUSE_CONNECTIONS needs the simulator's own server (gateway_sim::serve), \
         which owns the listening socket; this one is served by another"
    )]
    RefusalUnavailable,
    /// A settlement `date` that is missing or not a `YYYY-MM-DD` calendar date.
    #[error("{0}")]
    InvalidDate(String),
    /// A settlement `encoding` other than `utf-8` and `cp949`, or a file
    /// CP949 cannot hold.
    #[error("{0}")]
    InvalidEncoding(String),
    #[error("more than {max_per_second} confirms within one second")]
    RateLimited { max_per_second: NonZeroU32 },
    /// An injected failure (`ERROR_500`) or a task of ours that died.
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::OrderConflict { .. } => StatusCode::CONFLICT,
            Self::NotCancellable { .. } | Self::PaymentPending { .. } => StatusCode::CONFLICT,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::InvalidFaults(_) | Self::InvalidDate(_) | Self::InvalidEncoding(_) => {
                StatusCode::BAD_REQUEST
            }
            Self::RefusalUnavailable => StatusCode::CONFLICT,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "BAD_REQUEST",
            Self::NotFound(_) => "NOT_FOUND",
            Self::OrderConflict { .. } => "ORDER_CONFLICT",
            Self::NotCancellable { .. } => "NOT_CANCELLABLE",
            Self::PaymentPending { .. } => "PAYMENT_PENDING",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::InvalidFaults(_) => "INVALID_FAULTS",
            Self::InvalidDate(_) => "INVALID_DATE",
            Self::InvalidEncoding(_) => "INVALID_ENCODING",
            Self::RefusalUnavailable => "REFUSAL_UNAVAILABLE",
            Self::RateLimited { .. } => "RATE_LIMITED",
            Self::Internal(_) => "INTERNAL",
        }
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            code: self.code(),
            message: self.to_string(),
        };
        (self.status(), Json(body)).into_response()
    }
}

/// Every JSON rejection is the caller's fault, so all become 400 — including
/// an oversized body, which axum would otherwise answer with 413.
impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return Self::BadRequest(format!(
                "request body exceeds {} bytes",
                crate::routes::BODY_LIMIT_BYTES
            ));
        }
        Self::BadRequest(rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::BadRequest(rejection.body_text())
    }
}
