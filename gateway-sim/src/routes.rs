//! HTTP surface of the simulated gateway.
//!
//! Handlers only translate between JSON and the [`Ledger`](crate::ledger::Ledger):
//! validation of the wire body happens here, decisions happen in the ledger,
//! and the system clock is read in exactly one place ([`now_ms`]).

use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{Method, Uri};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::ledger::{ConfirmOutcome, ConfirmRequest, Confirmation, LedgerSnapshot, PaymentView};
use crate::SimState;

/// Confirm bodies are a few short fields; anything near this is a client bug.
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

pub fn app(state: SimState) -> Router {
    Router::new()
        .route("/v1/payments/confirm", post(confirm))
        .route("/v1/payments/{order_id}", get(payment))
        .route("/admin/ledger", get(ledger))
        .route("/healthz", get(healthz))
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .with_state(state)
}

/// The confirm body as sent; [`ConfirmRequest`] is what survives validation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmBody {
    payment_key: String,
    order_id: String,
    // Signed so that a negative amount gets our message rather than serde's.
    amount: i64,
}

impl TryFrom<ConfirmBody> for ConfirmRequest {
    type Error = ApiError;

    fn try_from(body: ConfirmBody) -> Result<Self, ApiError> {
        if body.payment_key.is_empty() {
            return Err(ApiError::BadRequest("paymentKey must not be empty".into()));
        }
        if body.order_id.is_empty() {
            return Err(ApiError::BadRequest("orderId must not be empty".into()));
        }
        let amount = u64::try_from(body.amount)
            .ok()
            .filter(|&amount| amount > 0)
            .ok_or_else(|| {
                ApiError::BadRequest(format!("amount must be > 0, got {}", body.amount))
            })?;
        Ok(Self {
            payment_key: body.payment_key,
            order_id: body.order_id,
            amount,
        })
    }
}

async fn confirm(
    State(state): State<SimState>,
    body: Result<Json<ConfirmBody>, JsonRejection>,
) -> Result<Json<Confirmation>, ApiError> {
    let Json(body) = body?;
    let request = ConfirmRequest::try_from(body)?;
    let order_id = request.order_id.clone();
    let now = now_ms();
    match state.with_ledger(|ledger| ledger.confirm(request, now)) {
        ConfirmOutcome::First(confirmation) => {
            tracing::info!(order_id, status = ?confirmation.status, "confirm decided");
            Ok(Json(confirmation))
        }
        ConfirmOutcome::Repeat(confirmation) => {
            tracing::info!(order_id, "repeat confirm; replaying first result");
            Ok(Json(confirmation))
        }
        ConfirmOutcome::Conflict => {
            tracing::warn!(order_id, "confirm conflicts with the recorded payment");
            Err(ApiError::OrderConflict { order_id })
        }
    }
}

async fn payment(
    State(state): State<SimState>,
    order_id: Result<Path<String>, PathRejection>,
) -> Result<Json<PaymentView>, ApiError> {
    let Path(order_id) = order_id?;
    state
        .with_ledger(|ledger| ledger.payment(&order_id))
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("no payment for orderId {order_id:?}")))
}

async fn ledger(State(state): State<SimState>) -> Json<LedgerSnapshot> {
    Json(state.with_ledger(|ledger| ledger.snapshot()))
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn unknown_route(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound(format!("no route for {method} {}", uri.path()))
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// Epoch milliseconds. A clock before 1970 is a broken host, not a request
/// error, so it reads as 0 rather than failing the confirm.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
