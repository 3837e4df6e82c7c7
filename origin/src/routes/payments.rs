//! Payments: confirm (TX 1, the guarded gateway call, TX 2) and read-back.
//!
//! No transaction or database connection is held across the gateway call: TX 1
//! commits the PENDING payment before the call, so a crash during the call leaves a
//! record to converge, and a slow gateway cannot hold the database. The call goes
//! through the [`crate::guard`]: a refusal is a known failure, never UNKNOWN, and
//! approvals are never retried. Database steps are retried on transient errors: each
//! is a whole transaction, so running it again is starting over.
//!
//! Before any of it, the edge's gate and the order's holder are checked (`gate.rs`);
//! what the call's answer makes of the payment is `outcome.rs`'s.

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
use crate::gateway::{self, Confirmed, GatewayAnswer, Order};
use crate::idempotency::{self, Answer};
use crate::state::AppState;
use crate::store::transient::retry_transient;
use crate::store::{Claimed, GatewayKeys, NewPayment, Outcome, Payment, PaymentStatus, StoreError};

use super::gate::{self, existing_order, order_exists, payment_answer};
use super::outcome::{keep_reference, outcome_of, refund_late_approval};

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
    let claim = idempotency::claim(&caller.user_id, &key, &body, state.idempotency_lease);
    if let Some(answer) = gate::admit(&state, &caller, &request, &claim).await? {
        return Ok(answer);
    }
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

    // The payment, and its key's record, run in a task of their own: a client that goes
    // away must cut neither short, so that its retry is replayed once the PG has answered.
    let task = tokio::spawn(settle_and_record(
        state.clone(),
        caller.user_id.clone(),
        key,
        request,
        resumed,
    ));
    let (answer, paused_for_ms) = match task.await {
        Ok(settled) => settled?,
        // The key stays in flight until its lease ends; a retry then finds the payment,
        // and recovery converges it if it was left PENDING.
        Err(ended) => {
            if ended.is_panic() {
                state.metrics.task_panicked("payment");
            }
            return Err(ApiError::internal(ended));
        }
    };
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

/// The payment settled, then its Idempotency-Key's record: the answer stored for replay,
/// or, when nothing was committed, the key released so that a retry runs afresh.
async fn settle_and_record(
    state: AppState,
    user_id: String,
    key: String,
    request: ConfirmRequest,
    resumed: bool,
) -> Result<(Answer, Option<u64>), ApiError> {
    let settled = settle(state.clone(), user_id.clone(), request, resumed).await;
    match &settled {
        Ok((answer, _)) => {
            let stored = answer.stored();
            let finished = retry_transient(&state.metrics, "finish_idempotency_key", || {
                state.store.finish_idempotency_key(&user_id, &key, &stored)
            })
            .await;
            if let Err(err) = finished {
                tracing::error!(error = %err, "could not store the response of an idempotency key; a retry after its lease reads the payment");
            }
        }
        Err(_) => {
            if let Err(release) = state.store.release_idempotency_key(&user_id, &key).await {
                tracing::warn!(error = %release, "could not release an idempotency key; it frees itself after its lease");
            }
        }
    }
    settled
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
    if let Some(answer) = existing_order(state, &user_id, &request.order_id, resumed).await? {
        return Ok(answer);
    }
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
        // Another confirm inserted this order since it was looked up.
        Err(StoreError::DuplicateOrder) => {
            let existing = existing_order(state, &new.user_id, &new.order_id, resumed).await?;
            return Ok(existing.unwrap_or_else(order_exists));
        }
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
            *paused_for_ms = state.guard.paused_for_ms(refusal);
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
            if let Some(event_id) = &payment.event_id {
                state.history.confirm_answered(event_id, payment.status);
            }
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
