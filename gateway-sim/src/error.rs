//! The one error type of the HTTP surface.
//!
//! Clients of a payment gateway branch on a machine-readable `code`, so every
//! failure — including axum's own extractor rejections and unknown routes —
//! is turned into `{"code":"UPPER_SNAKE","message":"..."}` here, never plain
//! text.

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
    #[error("method not allowed for this path")]
    MethodNotAllowed,
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::OrderConflict { .. } => StatusCode::CONFLICT,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "BAD_REQUEST",
            Self::NotFound(_) => "NOT_FOUND",
            Self::OrderConflict { .. } => "ORDER_CONFLICT",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
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
