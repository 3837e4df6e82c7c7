//! `POST /gateway/callback`: the PG tells us what it decided, signed with
//! `GATEWAY_CALLBACK_SECRET` (`rules::callback`). A verified callback converges its
//! payment at once, by the same rules as the recovery job; the job stays the safety
//! net for callbacks that never come. Unsigned, stale or forged callbacks are refused
//! and change nothing. The PG retries callbacks, so each one is idempotent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use rules::callback::{self, CallbackBody, CallbackStatus, SIGNATURE_HEADER, TIMESTAMP_HEADER};

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::gateway::GatewayStatus;
use crate::recovery::Applied;
use crate::state::AppState;

pub async fn receive(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    let secret = state
        .callback_secret
        .as_deref()
        .ok_or(ApiError::CallbacksDisabled)?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let verified = callback::verify(
        secret,
        header(TIMESTAMP_HEADER),
        header(SIGNATURE_HEADER),
        &body,
        now_ms(),
    );
    if let Err(rejection) = verified {
        tracing::warn!(%rejection, "gateway callback refused");
        state.metrics.callback_received("refused");
        return Err(ApiError::CallbackSignatureInvalid);
    }
    let callback: CallbackBody =
        serde_json::from_slice(&body).map_err(|err| ApiError::BadRequest {
            code: "INVALID_REQUEST",
            message: format!("not a callback body: {err}"),
        })?;
    let view = match callback.status {
        CallbackStatus::Approved => GatewayStatus::Approved {
            approved_at: callback.approved_at,
            amount: callback.amount,
        },
        CallbackStatus::Declined => GatewayStatus::Declined,
        CallbackStatus::Cancelled => GatewayStatus::Cancelled,
    };
    let payment = state
        .store
        .payment_by_order_id(&callback.order_id)
        .await?
        .ok_or(ApiError::NotFound {
            code: "PAYMENT_NOT_FOUND",
            message: "no payment has this orderId",
        })?;
    let applied = state.recovery.apply(payment, view).await?;
    let (payment, outcome) = match applied {
        Applied::Recorded { payment, .. } => (payment, "converged"),
        Applied::AlreadySettled(payment) => (payment, "already_settled"),
        Applied::Disagrees { payment, .. } => (payment, "disagrees"),
        Applied::Refunded(payment) => (payment, "refunded"),
        Applied::RefundPending(payment) => (payment, "refund_pending"),
    };
    state.metrics.callback_received(outcome);
    Ok(Json(serde_json::json!({
        "orderId": payment.order_id,
        "status": payment.status,
    })))
}
