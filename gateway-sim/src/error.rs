//! The one error type of the HTTP surface, and its `{"code","message"}` body.
//!
//! Clients of a payment gateway branch on a machine-readable `code`, so every
//! failure — axum's own extractor rejections and unknown routes included — is
//! answered here as an HTTP status and `{"code":"UPPER_SNAKE","message":"..."}`,
//! as Toss does. The Toss API's refusals carry Toss's codes ([`crate::codes`]),
//! but for the capacity's 429 `TOO_MANY_REQUESTS`: Toss documents no rate-limit
//! status, so that code is the simulator's own, as are those of its controls
//! (`/admin`, the settlement export).

use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::capacity::LineFull;
use crate::codes::{self, TossCode};
use crate::routes::Answer;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A Toss refusal, answered with the code's own message.
    #[error("{}", .0.message)]
    Toss(TossCode),
    /// A Toss refusal with a message saying what in particular was wrong.
    #[error("{detail}")]
    TossDetailed { code: TossCode, detail: String },
    /// The `capacity` fault's line was full: refused at once, before anything was
    /// recorded, so nothing was processed or charged.
    #[error(
        "the gateway is at capacity ({} confirms processing, {} waiting): \
         nothing was processed; try again later",
        .0.limits.slots,
        .0.limits.line
    )]
    AtCapacity(LineFull),
    /// What `TossPayments-Test-Code` or the `testCode` fault asked for.
    #[error("TossPayments-Test-Code {0}: a test error; nothing was charged")]
    TestCode(String),
    /// No route for the path.
    #[error("{0}")]
    NotFound(String),
    #[error("method not allowed for this path")]
    MethodNotAllowed,
    /// A simulator control's query that is not valid.
    #[error("{0}")]
    BadRequest(String),
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
}

impl ApiError {
    /// `INVALID_REQUEST`, saying what was wrong.
    pub fn invalid_request(detail: impl Into<String>) -> Self {
        Self::detailed(codes::INVALID_REQUEST, detail)
    }

    pub fn detailed(code: TossCode, detail: impl Into<String>) -> Self {
        Self::TossDetailed {
            code,
            detail: detail.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Toss(code) | Self::TossDetailed { code, .. } => code.status,
            Self::TestCode(code) => codes::test_code_status(code),
            Self::AtCapacity(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::BadRequest(_)
            | Self::InvalidFaults(_)
            | Self::InvalidDate(_)
            | Self::InvalidEncoding(_) => StatusCode::BAD_REQUEST,
            Self::RefusalUnavailable => StatusCode::CONFLICT,
        }
    }

    pub fn code(&self) -> &str {
        match self {
            Self::Toss(code) | Self::TossDetailed { code, .. } => code.code,
            Self::TestCode(code) => code,
            Self::AtCapacity(_) => "TOO_MANY_REQUESTS",
            Self::NotFound(_) => "NOT_FOUND",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::BadRequest(_) => "BAD_REQUEST",
            Self::InvalidFaults(_) => "INVALID_FAULTS",
            Self::RefusalUnavailable => "REFUSAL_UNAVAILABLE",
            Self::InvalidDate(_) => "INVALID_DATE",
            Self::InvalidEncoding(_) => "INVALID_ENCODING",
        }
    }

    /// The answer as the wire carries it, so it can be kept under an
    /// Idempotency-Key and replayed byte for byte.
    pub fn answer(&self) -> Answer {
        let body = serde_json::json!({ "code": self.code(), "message": self.to_string() });
        Answer::json(self.status(), &body)
    }
}

impl From<TossCode> for ApiError {
    fn from(code: TossCode) -> Self {
        Self::Toss(code)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.answer().into_response()
    }
}

/// A Toss API body that is not the JSON expected is `INVALID_REQUEST`,
/// an oversized one included (axum would answer 413).
impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return Self::invalid_request(format!(
                "request body exceeds {} bytes",
                crate::routes::BODY_LIMIT_BYTES
            ));
        }
        Self::invalid_request(rejection.body_text())
    }
}
