//! Payments: confirm (TX 1, the gateway call, TX 2) and read-back.
//!
//! No transaction or database connection is held across the gateway call: TX 1
//! commits the PENDING payment before the call, so a crash during the call leaves a
//! record to converge, and a slow gateway cannot hold the database.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use rules::confirm::{check_idempotency_key, check_order_id, ConfirmRequest};
use rules::signing::IDEMPOTENCY_KEY_HEADER;

use crate::app::AppState;
use crate::clock::now_ms;
use crate::edge_signature::EdgeCaller;
use crate::error::ApiError;
use crate::gateway::GatewayAnswer;
use crate::store::{NewPayment, Outcome, Payment, PaymentStatus};

/// How many payments `GET /payments` lists.
const RECENT_LIMIT: u32 = 50;

/// `POST /payments/confirm`: 201 APPROVED or FAILED, 202 UNKNOWN.
pub async fn confirm(
    State(state): State<AppState>,
    Extension(caller): Extension<EdgeCaller>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let key = headers
        .get(IDEMPOTENCY_KEY_HEADER)
        .and_then(|v| v.to_str().ok());
    check_idempotency_key(key)?;
    let request = ConfirmRequest::parse(&body)?;
    let pending = state
        .store
        .insert_pending(NewPayment {
            order_id: request.order_id,
            user_id: caller.user_id,
            payment_key: request.payment_key,
            amount: request.amount,
            event_id: request.event_id,
            now_ms: now_ms(),
        })
        .await?;

    let answer = {
        let _in_flight = state.metrics.gateway_call_started();
        state
            .gateway
            .confirm(&pending.order_id, &pending.payment_key, pending.amount)
            .await
    };
    let outcome = outcome_of(&answer);
    if let GatewayAnswer::Unknown { cause } = &answer {
        tracing::warn!(order_id = %pending.order_id, %cause, "payment outcome unknown");
    }
    let payment = state
        .store
        .record_outcome(pending.payment_id, outcome, now_ms())
        .await?;
    state.metrics.payment_settled(payment.status);
    tracing::info!(order_id = %payment.order_id, status = payment.status.as_str(), "payment confirmed");
    Ok(payment_response(payment))
}

/// `GET /payments/{orderId}`: the caller's payment as it stands now.
pub async fn get(
    State(state): State<AppState>,
    Extension(caller): Extension<EdgeCaller>,
    Path(order_id): Path<String>,
) -> Result<Json<Payment>, ApiError> {
    check_order_id(&order_id)?;
    state
        .store
        .payment_by_order(&caller.user_id, &order_id)
        .await?
        .map(Json)
        .ok_or(ApiError::NotFound {
            code: "PAYMENT_NOT_FOUND",
            message: "no payment of yours has this orderId",
        })
}

/// `GET /payments`: the caller's recent payments, from the database only.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<EdgeCaller>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let payments = state
        .store
        .recent_payments(&caller.user_id, RECENT_LIMIT)
        .await?;
    Ok(Json(serde_json::json!({ "payments": payments })))
}

/// What a gateway answer makes of a pending payment. What was not sent is not unknown.
fn outcome_of(answer: &GatewayAnswer) -> Outcome {
    match answer {
        GatewayAnswer::Approved { approved_at } => Outcome::Approved {
            approved_at: *approved_at,
        },
        GatewayAnswer::Declined => Outcome::Failed {
            reason: "DECLINED".into(),
        },
        GatewayAnswer::Rejected { .. } => Outcome::Failed {
            reason: "GATEWAY_REJECTED".into(),
        },
        GatewayAnswer::NotSent => Outcome::Failed {
            reason: "GATEWAY_UNREACHABLE".into(),
        },
        GatewayAnswer::Unknown { .. } => Outcome::Unknown,
    }
}

fn payment_response(payment: Payment) -> Response {
    let status = match payment.status {
        PaymentStatus::Approved | PaymentStatus::Failed => StatusCode::CREATED,
        PaymentStatus::Unknown | PaymentStatus::Pending => StatusCode::ACCEPTED,
    };
    (status, Json(payment)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answer_that_may_have_charged_is_unknown() {
        let cases = [
            (
                GatewayAnswer::Approved { approved_at: 5 },
                Outcome::Approved { approved_at: 5 },
            ),
            (
                GatewayAnswer::Declined,
                Outcome::Failed {
                    reason: "DECLINED".into(),
                },
            ),
            (
                GatewayAnswer::Rejected { status: 409 },
                Outcome::Failed {
                    reason: "GATEWAY_REJECTED".into(),
                },
            ),
            (
                GatewayAnswer::NotSent,
                Outcome::Failed {
                    reason: "GATEWAY_UNREACHABLE".into(),
                },
            ),
            (
                GatewayAnswer::Unknown {
                    cause: "timeout".into(),
                },
                Outcome::Unknown,
            ),
        ];
        for (answer, outcome) in cases {
            assert_eq!(outcome_of(&answer), outcome, "{answer:?}");
        }
    }
}
