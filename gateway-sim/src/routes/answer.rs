//! An answer as bytes: what an Idempotency-Key keeps and replays byte for
//! byte.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::ledger::StoredAnswer;

/// A JSON answer: the status and the body exactly as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: StatusCode,
    pub body: Vec<u8>,
}

/// Said if a body cannot be written, which the simulator's own types never
/// cause.
const UNWRITABLE: &[u8] =
    br#"{"code":"UNKNOWN_ERROR","message":"the answer could not be written"}"#;

impl Answer {
    pub fn json(status: StatusCode, body: &impl Serialize) -> Self {
        match serde_json::to_vec(body) {
            Ok(body) => Self { status, body },
            Err(err) => {
                tracing::error!("answer not serializable: {err}");
                Self {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    body: UNWRITABLE.to_vec(),
                }
            }
        }
    }

    pub(super) fn stored(&self) -> StoredAnswer {
        StoredAnswer {
            status: self.status.as_u16(),
            body: self.body.clone(),
        }
    }

    pub(super) fn from_stored(stored: StoredAnswer) -> Self {
        Self {
            status: StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK),
            body: stored.body,
        }
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            self.body,
        )
            .into_response()
    }
}
