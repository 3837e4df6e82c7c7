//! The origin's side of the waiting-room gate, and who holds an order, on
//! `POST /payments/confirm`.
//!
//! The edge signs its gate's word into every confirm (`rules::pass`), and the origin
//! holds confirms to it before the Idempotency-Key is claimed or anything is written:
//!
//! - `replay-only`: nothing is created. The key's record answers (replayed, reused,
//!   in flight), else the caller's payment for the order, else 403 `QUEUE_PASS_REQUIRED`.
//! - A confirm for a gated event — its stored room is gated, or no room is stored and
//!   `GATED_EVENTS` names it, as the edge decides — needs the pass claimed for that
//!   event and order, else 403 `QUEUE_PASS_REQUIRED`. So the origin refuses a gated
//!   event's confirm even before the edge was told of its room.
//!
//! An order is looked up before its price is checked: an orderId held by this user is
//! 409 `ORDER_EXISTS` (or its payment, for a request that takes over a dead one's key),
//! by another user 409 `ORDER_ID_TAKEN`; only a new order is held to its event's price,
//! so a 400 `AMOUNT_MISMATCH` says no payment exists for the order.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rules::confirm::ConfirmRequest;
use rules::pass::Gate;

use crate::clock::now_ms;
use crate::edge_signature::EdgeCaller;
use crate::error::{error_body, ApiError};
use crate::idempotency::Answer;
use crate::state::AppState;
use crate::store::transient::retry_transient;
use crate::store::{IdempotencyClaim, IdempotencyRecord, Payment, PaymentStatus};

/// What the gate leaves of a confirm: `Some` answer when it ends here (a replay-only
/// confirm always does), `None` when it may go on to claim its key. Refusals are errors.
pub(super) async fn admit(
    state: &AppState,
    caller: &EdgeCaller,
    request: &ConfirmRequest,
    claim: &IdempotencyClaim,
) -> Result<Option<Response>, ApiError> {
    if caller.gate == Gate::ReplayOnly {
        return replay_only(state, caller, request, claim).await.map(Some);
    }
    let Some(event_id) = request.event_id.as_deref() else {
        return Ok(None);
    };
    let room = retry_transient(&state.metrics, "event_room", || {
        state.store.event_room(event_id)
    })
    .await?;
    // A stored room says; without one, `GATED_EVENTS` does, as at the edge.
    let gated = room.map_or_else(
        || state.gated_events.contains(event_id),
        |room| room.settings.gated,
    );
    if gated && !caller.gate.admits(event_id, &request.order_id) {
        tracing::info!(event_id, order_id = %request.order_id, gate = %caller.gate.field(), "confirm for a gated event without its pass");
        return Err(pass_required());
    }
    Ok(None)
}

/// A confirm that may create nothing, answered from what exists.
async fn replay_only(
    state: &AppState,
    caller: &EdgeCaller,
    request: &ConfirmRequest,
    claim: &IdempotencyClaim,
) -> Result<Response, ApiError> {
    let record = retry_transient(&state.metrics, "idempotency_record", || {
        state.store.idempotency_record(claim, now_ms())
    })
    .await?;
    match record {
        Some(IdempotencyRecord::Done(stored)) => {
            state.metrics.idempotency_answer("REPLAYED");
            Ok(Answer::replay(stored))
        }
        Some(IdempotencyRecord::Mismatch) => {
            state.metrics.idempotency_answer("KEY_REUSED");
            Err(ApiError::IdempotencyKeyReused)
        }
        Some(IdempotencyRecord::InFlight { .. }) => {
            state.metrics.idempotency_answer("IN_FLIGHT");
            Err(ApiError::IdempotencyInFlight)
        }
        None => {
            let payment = retry_transient(&state.metrics, "payment_by_order", || {
                state
                    .store
                    .payment_by_order(&caller.user_id, &request.order_id)
            })
            .await?;
            payment
                .map(|payment| payment_answer(&payment).into_response())
                .ok_or_else(pass_required)
        }
    }
}

fn pass_required() -> ApiError {
    ApiError::Refused {
        status: StatusCode::FORBIDDEN,
        code: "QUEUE_PASS_REQUIRED",
        message:
            "this event needs an admission pass: wait in its queue, then confirm with the pass"
                .into(),
    }
}

/// The answer for an orderId some payment already holds, `None` when none does: this
/// user's — 409 `ORDER_EXISTS`, or the payment itself when `resumed` (the request that
/// first held the key got that far before it died) — or another user's, 409
/// `ORDER_ID_TAKEN`.
pub(super) async fn existing_order(
    state: &AppState,
    user_id: &str,
    order_id: &str,
    resumed: bool,
) -> Result<Option<Answer>, ApiError> {
    let existing = retry_transient(&state.metrics, "payment_by_order_id", || {
        state.store.payment_by_order_id(order_id)
    })
    .await?;
    Ok(
        existing.map(|payment| match (payment.user_id == user_id, resumed) {
            (false, _) => {
                tracing::info!(order_id, "orderId held by another user's payment");
                Answer::json(
                    StatusCode::CONFLICT,
                    &error_body(
                        "ORDER_ID_TAKEN",
                        "this orderId belongs to another payment; choose another",
                    ),
                )
            }
            (true, true) => payment_answer(&payment),
            (true, false) => order_exists(),
        }),
    )
}

pub(super) fn order_exists() -> Answer {
    Answer::json(
        StatusCode::CONFLICT,
        &error_body(
            "ORDER_EXISTS",
            "a payment for this orderId already exists; read it with GET /payments/{orderId}",
        ),
    )
}

/// 201 for a settled payment, 202 while its outcome is not known.
pub(super) fn payment_answer(payment: &Payment) -> Answer {
    let status = match payment.status {
        PaymentStatus::Approved | PaymentStatus::Failed | PaymentStatus::Refunded => {
            StatusCode::CREATED
        }
        PaymentStatus::Unknown | PaymentStatus::Pending => StatusCode::ACCEPTED,
    };
    Answer::json(status, payment)
}
