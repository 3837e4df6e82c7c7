//! Payments: confirm (TX 1, the guarded gateway call, TX 2) and read-back.
//!
//! No transaction or database connection is held across the gateway call: TX 1
//! commits the PENDING payment before the call, so a crash during the call leaves a
//! record to converge, and a slow gateway cannot hold the database. The call goes
//! through the [`crate::guard`]: a refusal is a known failure, never UNKNOWN, and
//! approvals are never retried. Database steps are retried on transient errors: each
//! is a whole transaction, so running it again is starting over.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use rules::confirm::{check_idempotency_key, check_order_id, ConfirmRequest};
use rules::paused;
use rules::signing::IDEMPOTENCY_KEY_HEADER;

use crate::clock::now_ms;
use crate::edge_signature::EdgeCaller;
use crate::error::{error_body, ApiError};
use crate::gateway::{self, Confirmed, GatewayAnswer, GatewayStatus, Order};
use crate::guard::Refusal;
use crate::idempotency::{self, Answer};
use crate::recovery::Applied;
use crate::state::AppState;
use crate::store::transient::retry_transient;
use crate::store::{Claimed, GatewayKeys, NewPayment, Outcome, Payment, PaymentStatus, StoreError};

/// How many payments `GET /payments` lists.
const RECENT_LIMIT: u32 = 50;

/// `POST /payments/confirm`: 201 APPROVED or FAILED, 202 UNKNOWN, under the
/// Idempotency-Key rules of [`crate::idempotency`].
pub async fn confirm(
    State(state): State<AppState>,
    Extension(caller): Extension<EdgeCaller>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let key = headers
        .get(IDEMPOTENCY_KEY_HEADER)
        .and_then(|v| v.to_str().ok());
    let key = check_idempotency_key(key)?.to_owned();
    let request = ConfirmRequest::parse(&body)?;
    if let Some(problem) = state.gateway.order_id_problem(&request.order_id) {
        return Err(ApiError::BadRequest {
            code: "INVALID_REQUEST",
            message: problem,
        });
    }
    let claim = idempotency::claim(&caller.user_id, &key, &body);
    let claimed = retry_transient(&state.metrics, "claim_idempotency_key", || {
        state.store.claim_idempotency_key(&claim, now_ms())
    })
    .await?;
    let resumed = match claimed {
        Claimed::Started => false,
        Claimed::Resumed => true,
        Claimed::InFlight { .. } => {
            state.metrics.idempotency_answer("IN_FLIGHT");
            return Err(ApiError::IdempotencyInFlight);
        }
        Claimed::Mismatch => {
            state.metrics.idempotency_answer("KEY_REUSED");
            return Err(ApiError::IdempotencyKeyReused);
        }
        Claimed::Done(stored) => {
            state.metrics.idempotency_answer("REPLAYED");
            return Ok(Answer::replay(stored));
        }
    };

    // The payment runs in a task of its own: a client that goes away must not cut it
    // short between the gateway call and TX 2.
    let task = tokio::spawn(settle(
        state.clone(),
        caller.user_id.clone(),
        request,
        resumed,
    ));
    let (answer, paused_for_ms) = match task.await {
        Ok(Ok(settled)) => settled,
        Ok(Err(err)) => {
            // Nothing was committed: let a retry with this key run afresh.
            if let Err(release) = state
                .store
                .release_idempotency_key(&caller.user_id, &key)
                .await
            {
                tracing::warn!(error = %release, "could not release an idempotency key; it frees itself after its lease");
            }
            return Err(err);
        }
        // The key stays in flight until its lease ends; a retry then finds the payment,
        // and recovery converges it if it was left PENDING.
        Err(ended) => {
            if ended.is_panic() {
                state.metrics.task_panicked("payment");
            }
            return Err(ApiError::internal(ended));
        }
    };
    let stored = answer.stored();
    let finished = retry_transient(&state.metrics, "finish_idempotency_key", || {
        state
            .store
            .finish_idempotency_key(&caller.user_id, &key, &stored)
    })
    .await;
    if let Err(err) = finished {
        tracing::error!(error = %err, "could not store the response of an idempotency key; a retry after its lease reads the payment");
    }
    let mut response = answer.into_response();
    if let Some(for_ms) = paused_for_ms {
        // Not stored with the key: a replay later says nothing about the breaker then.
        if let Ok(value) = HeaderValue::from_str(&paused::header_value(for_ms)) {
            response
                .headers_mut()
                .insert(paused::PAYMENTS_PAUSED_HEADER, value);
        }
    }
    Ok(response)
}

/// TX 1, the guarded call, TX 2. An error means nothing was committed; once TX 1 has
/// committed every path ends in an answer — with, when the breaker refused the call, how
/// long it is expected to go on refusing.
async fn settle(
    state: AppState,
    user_id: String,
    request: ConfirmRequest,
    resumed: bool,
) -> Result<(Answer, Option<u64>), ApiError> {
    let mut paused_for_ms = None;
    let answer = settle_payment(&state, user_id, request, resumed, &mut paused_for_ms).await?;
    Ok((answer, paused_for_ms))
}

async fn settle_payment(
    state: &AppState,
    user_id: String,
    request: ConfirmRequest,
    resumed: bool,
    paused_for_ms: &mut Option<u64>,
) -> Result<Answer, ApiError> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(ApiError::internal)?;
    let new = NewPayment {
        confirm_key: GatewayKeys::new(&request.order_id, random).confirm_key,
        order_id: request.order_id,
        user_id,
        payment_key: request.payment_key,
        amount: request.amount,
        event_id: request.event_id,
        now_ms: now_ms(),
    };
    let inserted = retry_transient(&state.metrics, "insert_pending", || {
        state.store.insert_pending(NewPayment {
            now_ms: now_ms(),
            ..new.clone()
        })
    })
    .await;
    let pending = match inserted {
        Ok(pending) => pending,
        Err(StoreError::DuplicateOrder) if resumed => {
            // The request that first held this key got this far before it died.
            let existing = state
                .store
                .payment_by_order(&new.user_id, &new.order_id)
                .await?;
            return Ok(existing.map_or_else(order_exists, |p| payment_answer(&p)));
        }
        Err(StoreError::DuplicateOrder) => return Ok(order_exists()),
        Err(StoreError::SoldOut) => {
            tracing::info!(event_id = new.event_id.as_deref(), order_id = %new.order_id, "sold out");
            return Ok(Answer::json(
                StatusCode::CONFLICT,
                &error_body("SOLD_OUT", "no unit of this event is left"),
            ));
        }
        Err(StoreError::UnknownEvent) => {
            return Ok(Answer::json(
                StatusCode::NOT_FOUND,
                &error_body(
                    "EVENT_NOT_FOUND",
                    "no such event here; an operator creates it (POST /admin/events)",
                ),
            ))
        }
        Err(StoreError::WrongAmount { price }) => {
            return Ok(Answer::json(
                StatusCode::BAD_REQUEST,
                &error_body(
                    "AMOUNT_MISMATCH",
                    &format!("the amount must be the event's price, {price}"),
                ),
            ))
        }
        Err(err) => return Err(err.into()),
    };

    let order = Order::of(&pending);
    let mut approval = None;
    let outcome = match state.guard.call(state.gateway.confirm(&order)).await {
        Ok(Confirmed { answer, reference }) => {
            if let Some(reference) = reference {
                keep_reference(state, pending.payment_id, &reference).await;
            }
            match &answer {
                GatewayAnswer::Rejected { .. } => state.metrics.gateway_needs_operator("not_sent"),
                GatewayAnswer::Throttled { .. } => {
                    state.metrics.gateway_needs_operator("throttled")
                }
                _ => {}
            }
            let outcome = outcome_of(&answer, gateway::expected(&order, state.gateway.currency()));
            if let Outcome::Flagged { flag } = &outcome {
                tracing::error!(order_id = %pending.order_id, %flag, "the PG approved something other than the order: kept UNKNOWN for an operator");
                state.metrics.gateway_needs_operator("approval_mismatch");
            }
            if let (Outcome::Approved { .. }, GatewayAnswer::Approved(approved)) =
                (&outcome, answer)
            {
                approval = Some(approved);
            }
            outcome
        }
        Err(refusal) => {
            if refusal == Refusal::CircuitOpen {
                *paused_for_ms = state.guard.refusing_for_ms();
            }
            Outcome::Failed {
                reason: refusal.reason().into(),
            }
        }
    };
    let recorded = retry_transient(&state.metrics, "record_outcome", || {
        state
            .store
            .record_outcome(pending.payment_id, outcome.clone(), now_ms())
    })
    .await;
    match recorded {
        Ok(payment) => {
            if let (PaymentStatus::Failed, Some(approved)) = (payment.status, approval) {
                return Ok(refund_late_approval(state, payment, approved).await);
            }
            state.metrics.payment_settled(payment.status.as_str());
            tracing::info!(order_id = %payment.order_id, status = payment.status.as_str(), reason = payment.failure_reason.as_deref(), "payment confirmed");
            Ok(payment_answer(&payment))
        }
        Err(err) => {
            tracing::error!(order_id = %pending.order_id, ?outcome, error = %err, "could not record the outcome; the payment stays PENDING until recovery");
            Ok(payment_answer(&pending))
        }
    }
}

/// A payment a look-up settled FAILED while its confirm's call waited, and which the PG
/// then approved: no money is kept without a sale, so it is refunded as any late approval
/// is (`Recovery::apply`), and answered as it then stands.
async fn refund_late_approval(
    state: &AppState,
    payment: Payment,
    approved: gateway::Approval,
) -> Answer {
    tracing::error!(order_id = %payment.order_id, "approved after it was recorded FAILED; refunding");
    match state
        .recovery
        .apply(payment.clone(), GatewayStatus::Approved(approved))
        .await
    {
        Ok(Applied::Refunded(now) | Applied::RefundPending(now)) => payment_answer(&now),
        Ok(_) => payment_answer(&payment),
        Err(err) => {
            tracing::error!(order_id = %payment.order_id, error = %err, "could not mark the late approval for refund: money is held without a sale; an operator must look");
            state.metrics.gateway_needs_operator("pg_disagrees");
            payment_answer(&payment)
        }
    }
}

/// Keeps the PG's id for the payment before TX 2, so that even a crash between the two
/// leaves recovery what it needs to look the payment up.
async fn keep_reference(state: &AppState, payment_id: i64, reference: &str) {
    let kept = retry_transient(&state.metrics, "record_reference", || {
        state.store.record_reference(payment_id, reference)
    })
    .await;
    if let Err(err) = kept {
        tracing::error!(payment_id, reference, error = %err, "could not keep the PG's id for a payment");
    }
}

fn order_exists() -> Answer {
    Answer::json(
        StatusCode::CONFLICT,
        &error_body(
            "ORDER_EXISTS",
            "a payment for this orderId already exists; read it with GET /payments/{orderId}",
        ),
    )
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

/// What a gateway answer makes of a pending payment. What was not sent is not unknown,
/// and an approval counts only for the order it was asked for.
fn outcome_of(answer: &GatewayAnswer, expected: gateway::Expected<'_>) -> Outcome {
    match answer {
        GatewayAnswer::Approved(approval) => match approval.mismatch(expected) {
            None => Outcome::Approved {
                approved_at: approval.approved_at.unwrap_or_else(now_ms),
            },
            Some(flag) => Outcome::Flagged { flag },
        },
        GatewayAnswer::Declined { .. } => Outcome::Failed {
            reason: "DECLINED".into(),
        },
        GatewayAnswer::Rejected { .. } | GatewayAnswer::Throttled { .. } => Outcome::Failed {
            reason: "GATEWAY_REJECTED".into(),
        },
        GatewayAnswer::NotSent => Outcome::Failed {
            reason: "GATEWAY_UNREACHABLE".into(),
        },
        GatewayAnswer::Unknown { .. } => Outcome::Unknown,
    }
}

/// 201 for a settled payment, 202 while its outcome is not known.
fn payment_answer(payment: &Payment) -> Answer {
    let status = match payment.status {
        PaymentStatus::Approved | PaymentStatus::Failed | PaymentStatus::Refunded => {
            StatusCode::CREATED
        }
        PaymentStatus::Unknown | PaymentStatus::Pending => StatusCode::ACCEPTED,
    };
    Answer::json(status, payment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answer_that_may_have_charged_is_unknown() {
        let expected = gateway::Expected {
            order_id: "order-1",
            amount: 15_000,
            currency: "KRW",
        };
        let approval = |amount| {
            GatewayAnswer::Approved(gateway::Approval {
                order_id: "order-1".into(),
                amount,
                currency: "KRW".into(),
                approved_at: Some(5),
                reference: None,
            })
        };
        let failed = |reason: &str| Outcome::Failed {
            reason: reason.into(),
        };
        let cases = [
            (approval(15_000), Outcome::Approved { approved_at: 5 }),
            (
                approval(15_100),
                Outcome::Flagged {
                    flag: "the PG approved 15100 KRW, the payment was for 15000 KRW".into(),
                },
            ),
            (
                GatewayAnswer::Declined {
                    code: "REJECT_CARD_PAYMENT".into(),
                },
                failed("DECLINED"),
            ),
            (
                GatewayAnswer::Rejected {
                    status: 401,
                    code: "UNAUTHORIZED_KEY".into(),
                },
                failed("GATEWAY_REJECTED"),
            ),
            (GatewayAnswer::NotSent, failed("GATEWAY_UNREACHABLE")),
            (
                GatewayAnswer::Unknown {
                    cause: "timeout".into(),
                },
                Outcome::Unknown,
            ),
        ];
        for (answer, outcome) in cases {
            assert_eq!(outcome_of(&answer, expected), outcome, "{answer:?}");
        }
    }
}
