//! Look-ups (`GET /v1/payments/{paymentKey}`, `GET /v1/payments/orders/{orderId}`)
//! and the cancel (`POST /v1/payments/{paymentKey}/cancel`).
//!
//! A look-up answers the Payment object: `DONE`, `ABORTED` (declined, with
//! its `failure`), `CANCELED` (with `cancels`, no balance), or `IN_PROGRESS`
//! for a confirm received and promised but not decided yet — hidden, as
//! `404 NOT_FOUND_PAYMENT`, while `pendingVisible` is off. Each is counted as
//! it arrives and answered after `statusDelayMs`, in any mode.
//!
//! A cancel takes the payment back in full (`cancelReason` required; a
//! `cancelAmount`, if given, must be the whole balance: a smaller one is
//! `403 NOT_ALLOWED_PARTIAL_REFUND`, a larger `403 NOT_CANCELABLE_AMOUNT`),
//! under its Idempotency-Key like a confirm. Cancelled before:
//! `400 ALREADY_CANCELED_PAYMENT`; declined, or still `IN_PROGRESS` (nothing
//! to take back yet): `403 NOT_CANCELABLE_PAYMENT`; unknown:
//! `404 NOT_FOUND_PAYMENT`. Of the faults only `ERROR_500` acts here (500,
//! nothing done), besides `REFUSE_CONNECTIONS` closing the port; delays,
//! hangs, the rate cap, `ERROR_500_AFTER_PROCESSING` and test codes are for
//! confirms.

use std::time::Duration;

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::Json;
use serde::Deserialize;

use super::idempotency::{self, Keyed};
use super::Answer;
use crate::codes;
use crate::error::ApiError;
use crate::faults::FaultMode;
use crate::ledger::{
    CancelOutcome, CancelRequest, Cancelling, Ledger, PaymentRecord, PaymentStatus,
};
use crate::payment::Payment;
use crate::{now_ms, SimState};

const MAX_CANCEL_REASON_CHARS: usize = 200;

pub(super) async fn payment_by_key(
    State(state): State<SimState>,
    payment_key: Result<Path<String>, PathRejection>,
) -> Result<Answer, ApiError> {
    let Path(payment_key) = payment_key.map_err(path_rejected)?;
    look_up(&state, |ledger| ledger.payment_by_key(&payment_key)).await
}

pub(super) async fn payment_by_order(
    State(state): State<SimState>,
    order_id: Result<Path<String>, PathRejection>,
) -> Result<Answer, ApiError> {
    let Path(order_id) = order_id.map_err(path_rejected)?;
    look_up(&state, |ledger| ledger.payment_by_order(&order_id)).await
}

async fn look_up(
    state: &SimState,
    find: impl FnOnce(&Ledger) -> Option<PaymentRecord>,
) -> Result<Answer, ApiError> {
    let faults = state.faults();
    state.with_ledger(Ledger::count_status_query);
    if faults.status_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.status_delay_ms)).await;
    }
    state
        .with_ledger(|ledger| find(ledger))
        .filter(|payment| faults.pending_visible || payment.status != PaymentStatus::InProgress)
        .map(|payment| Answer::json(StatusCode::OK, &Payment::of(&payment)))
        .ok_or(ApiError::Toss(codes::NOT_FOUND_PAYMENT))
}

/// The cancel body as sent; Toss's other fields (`refundReceiveAccount`,
/// `taxFreeAmount`, `currency`) are accepted and ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CancelBody {
    cancel_reason: Option<String>,
    // Signed so that a negative amount gets our message rather than serde's.
    cancel_amount: Option<i64>,
}

fn cancel_request(payment_key: String, body: CancelBody) -> Result<CancelRequest, ApiError> {
    let reason = body.cancel_reason.unwrap_or_default();
    let reason_chars = reason.chars().count();
    if !(1..=MAX_CANCEL_REASON_CHARS).contains(&reason_chars) {
        return Err(ApiError::invalid_request(format!(
            "cancelReason is required, 1 to {MAX_CANCEL_REASON_CHARS} characters"
        )));
    }
    let amount = body
        .cancel_amount
        .map(|amount| {
            u64::try_from(amount)
                .ok()
                .filter(|&amount| amount > 0)
                .ok_or_else(|| {
                    ApiError::invalid_request(format!("cancelAmount must be > 0, got {amount}"))
                })
        })
        .transpose()?;
    Ok(CancelRequest {
        payment_key,
        reason,
        amount,
    })
}

pub(super) async fn cancel(
    State(state): State<SimState>,
    payment_key: Result<Path<String>, PathRejection>,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Json<CancelBody>, JsonRejection>,
) -> Result<Answer, ApiError> {
    let Path(payment_key) = payment_key.map_err(path_rejected)?;
    let key = idempotency::key(&headers)?;
    let Json(body) = body?;
    let request = cancel_request(payment_key, body)?;
    let faults = state.faults();
    let guard = match idempotency::claim(&state, uri.path(), key, faults.idempotent)? {
        Keyed::Replay(answer) => return Ok(answer),
        Keyed::Fresh(guard) => guard,
    };
    let payment_key = request.payment_key.as_str();
    if faults.mode == FaultMode::Error500 {
        tracing::info!(payment_key, "ERROR_500: cancel not processed");
        return Err(ApiError::detailed(
            codes::FAILED_INTERNAL_SYSTEM_PROCESSING,
            "injected fault ERROR_500: the cancel was not processed",
        ));
    }
    let cancelling = Cancelling {
        idempotent: faults.idempotent,
        notify: state.notifying(&faults),
    };
    let (outcome, webhooks) = state.with_ledger(|ledger| {
        let outcome = ledger.cancel(&request, now_ms(), cancelling);
        (outcome, ledger.take_webhooks())
    });
    state.send_webhooks(webhooks);
    tracing::info!(payment_key, ?outcome, "cancel");
    let answer = match outcome {
        CancelOutcome::Cancelled(payment) => Answer::json(StatusCode::OK, &Payment::of(&payment)),
        CancelOutcome::AlreadyCancelled => ApiError::Toss(codes::ALREADY_CANCELED_PAYMENT).answer(),
        CancelOutcome::Declined => ApiError::detailed(
            codes::NOT_CANCELABLE_PAYMENT,
            "결제가 승인되지 않았습니다 (ABORTED): 취소할 금액이 없습니다.",
        )
        .answer(),
        CancelOutcome::InProgress => ApiError::detailed(
            codes::NOT_CANCELABLE_PAYMENT,
            "결제 승인이 진행 중입니다 (IN_PROGRESS): 승인이 끝난 뒤 취소해주세요.",
        )
        .answer(),
        CancelOutcome::AmountTooLarge => ApiError::Toss(codes::NOT_CANCELABLE_AMOUNT).answer(),
        CancelOutcome::Partial => ApiError::Toss(codes::NOT_ALLOWED_PARTIAL_REFUND).answer(),
        CancelOutcome::Unknown => ApiError::Toss(codes::NOT_FOUND_PAYMENT).answer(),
    };
    // A cancel's answer is no confirm of the charge: replays count nothing.
    guard.keep(&answer, None);
    Ok(answer)
}

fn path_rejected(rejection: PathRejection) -> ApiError {
    ApiError::invalid_request(rejection.body_text())
}
