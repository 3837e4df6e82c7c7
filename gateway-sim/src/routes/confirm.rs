//! `POST /v1/payments/confirm`: Toss's payment approval.
//!
//! In order: the Idempotency-Key's and the test code's headers are read, the
//! body validated, a slot taken ([`capacity`](crate::capacity): at once, after
//! its turn in the line, or refused with `429 TOO_MANY_REQUESTS` before anything
//! is recorded), the confirm received (counted, and refused with
//! `403 FORBIDDEN_CONSECUTIVE_REQUEST` above the rate cap, whatever the mode),
//! its key claimed (a repeat replays, see [`idempotency`](super::idempotency)),
//! a test code answered, and only then does the fault mode decide whether,
//! when and how the confirm is processed and answered — holding its slot until
//! the mode is done with it. The settings at arrival govern it throughout,
//! `webhooks` included.
//!
//! Approved: `200` and the Payment object (`DONE`). Declined (the
//! `declineRate` roll): `403 REJECT_CARD_PAYMENT`, the payment recorded
//! `ABORTED` with that failure. A payment already decided:
//! `400 ALREADY_PROCESSED_PAYMENT`; an order already paid under another
//! `paymentKey`: `400 DUPLICATED_ORDER_ID` — neither charges anything.
//!
//! A `paymentKey` starting `probe-` is one no window made: answered 404
//! `NOT_FOUND_PAYMENT` once the fault mode has taken its time, neither received nor
//! charged ([`unknown`]).
//!
//! `TossPayments-Test-Code: <CODE>` with a test key (ignored with a live one)
//! answers that code, with Toss's status for it ([`codes::test_code_status`]),
//! and charges nothing; the `testCode` fault does the same to every confirm,
//! as if each carried the header (a header wins over the fault).

mod unknown;

use std::future::pending;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::{Extension, Json};
use serde::Deserialize;

use super::idempotency::{self, KeyGuard, Keyed};
use super::Answer;
use crate::codes;
use crate::error::ApiError;
use crate::faults::{FaultMode, Faults};
use crate::ledger::{ChargeId, ConfirmOutcome, ConfirmRequest, Processing, Received};
use crate::payment::Payment;
use crate::server::ConnectionHandle;
use crate::{now_ms, SimState};

pub(super) const TEST_CODE_HEADER: &str = "tosspayments-test-code";
const CONFIRM_PATH: &str = "/v1/payments/confirm";
const MAX_PAYMENT_KEY_CHARS: usize = 200;

/// The confirm body as sent; [`ConfirmRequest`] is what survives validation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ConfirmBody {
    payment_key: String,
    order_id: String,
    // Signed so that a negative amount gets our message rather than serde's.
    amount: i64,
}

impl TryFrom<ConfirmBody> for ConfirmRequest {
    type Error = ApiError;

    fn try_from(body: ConfirmBody) -> Result<Self, ApiError> {
        let key_chars = body.payment_key.chars().count();
        if !(1..=MAX_PAYMENT_KEY_CHARS).contains(&key_chars) {
            return Err(ApiError::invalid_request(format!(
                "paymentKey must be 1 to {MAX_PAYMENT_KEY_CHARS} characters, got {key_chars}"
            )));
        }
        let order_id_ok = (6..=64).contains(&body.order_id.len())
            && body
                .order_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !order_id_ok {
            return Err(ApiError::detailed(
                codes::INVALID_ORDER_ID,
                format!(
                    "orderId must be 6 to 64 of A-Z, a-z, 0-9, - and _, got {:?}",
                    body.order_id
                ),
            ));
        }
        let amount = u64::try_from(body.amount)
            .ok()
            .filter(|&amount| amount > 0)
            .ok_or_else(|| {
                ApiError::invalid_request(format!("amount must be > 0, got {}", body.amount))
            })?;
        Ok(Self {
            payment_key: body.payment_key,
            order_id: body.order_id,
            amount,
        })
    }
}

pub(super) async fn confirm(
    State(state): State<SimState>,
    connection: Option<Extension<ConnectionHandle>>,
    headers: HeaderMap,
    body: Result<Json<ConfirmBody>, JsonRejection>,
) -> Result<Answer, ApiError> {
    let key = idempotency::key(&headers)?;
    let faults = state.faults();
    let test_code = test_code(&state, &headers, &faults)?;
    let Json(body) = body?;
    let request = ConfirmRequest::try_from(body)?;
    let order_id = request.order_id.clone();
    let queued = state.capacity().arrive().map_err(|full| {
        tracing::info!(order_id, "confirm refused: the line is full");
        ApiError::AtCapacity(full)
    })?;
    // Held until the mode is done with the confirm; given back on every return.
    let slot = queued.slot().await;
    let served_from = tokio::time::Instant::now();
    if unknown::is_unknown(&request.payment_key) {
        return unknown::refuse(&faults, slot, connection, &order_id).await;
    }
    let received = state
        .with_ledger(|ledger| ledger.receive(request, now_ms(), faults.max_per_second))
        .map_err(|limited| {
            tracing::info!(
                order_id,
                max = limited.max_per_second,
                "confirm over the rate cap"
            );
            ApiError::Toss(codes::FORBIDDEN_CONSECUTIVE_REQUEST)
        })?;
    let guard = match idempotency::claim(&state, CONFIRM_PATH, key, faults.idempotent)? {
        Keyed::Replay(answer) => return Ok(answer),
        Keyed::Fresh(guard) => guard,
    };
    if let Some(code) = test_code {
        drop(received);
        tracing::info!(order_id, code, "test code: answered, nothing charged");
        let answer = ApiError::TestCode(code).answer();
        guard.keep(&answer, None);
        return Ok(answer);
    }
    let processing = Processing {
        idempotent: faults.idempotent,
        decline: fastrand::f64() < faults.decline_rate,
        notify: state.notifying(&faults),
        amount_delta: faults.approved_amount_delta,
    };

    match faults.mode {
        // A refusal acts on sockets; a request that got in before it is served.
        FaultMode::Normal | FaultMode::RefuseConnections | FaultMode::Delay => {
            let Some(range) = faults.processing_ms() else {
                let answer = decide_and_keep(&state, received, processing, guard);
                slot.served(served_from.elapsed());
                return Ok(answer);
            };
            let delay = fastrand::u64(range);
            tracing::info!(order_id, delay, "processing later");
            // IN_PROGRESS to a look-up until decided.
            let received = state.with_ledger(|ledger| ledger.defer(received));
            // Its own task, so the confirm is processed (and its key kept, its slot
            // held) even if the client stops waiting, as a slow gateway would.
            let state = state.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(delay)).await;
                let answer = decide_and_keep(&state, received, processing, guard);
                slot.served(served_from.elapsed());
                answer
            })
            .await
            .map_err(|err| {
                ApiError::detailed(
                    codes::UNKNOWN_ERROR,
                    format!("processing the confirm failed: {err}"),
                )
            })
        }
        FaultMode::HangAfterProcessing => {
            // The webhook goes out and the key keeps the answer now; only the
            // answer is held.
            let answer = decide_and_keep(&state, received, processing, guard);
            tracing::info!(
                order_id,
                "HANG_AFTER_PROCESSING: processed, holding the answer"
            );
            tokio::time::sleep(faults.hold()).await;
            Ok(answer)
        }
        FaultMode::HangBeforeProcessing => {
            drop((received, guard));
            tracing::info!(
                order_id,
                "HANG_BEFORE_PROCESSING: received, never processed"
            );
            tokio::time::sleep(faults.hold()).await;
            if let Some(Extension(connection)) = connection {
                connection.drop_without_answer();
            }
            // Served by another server, the connection cannot be dropped from
            // here: it stays held until the client leaves.
            pending().await
        }
        FaultMode::Error500 => {
            drop((received, guard));
            tracing::info!(order_id, "ERROR_500: received, never processed");
            Err(ApiError::detailed(
                codes::FAILED_INTERNAL_SYSTEM_PROCESSING,
                "injected fault ERROR_500: the confirm was received but not processed",
            ))
        }
        FaultMode::Error500AfterProcessing => {
            // A 5xx keeps nothing under the key: the guard releases it.
            let (answer, _) = decide(&state, received, processing);
            tracing::info!(order_id, status = %answer.status, "ERROR_500_AFTER_PROCESSING: processed, answering 500");
            Err(ApiError::detailed(
                codes::FAILED_INTERNAL_SYSTEM_PROCESSING,
                "injected fault ERROR_500_AFTER_PROCESSING: the confirm was processed",
            ))
        }
    }
}

/// The test code the confirm answers: the header's with a test key, else the
/// fault's; with a live key, neither (as Toss ignores the header).
fn test_code(
    state: &SimState,
    headers: &HeaderMap,
    faults: &Faults,
) -> Result<Option<String>, ApiError> {
    if !state.secret_key().is_test() {
        return Ok(None);
    }
    match headers.get(TEST_CODE_HEADER) {
        None => Ok(faults.test_code.clone()),
        Some(value) => value
            .to_str()
            .ok()
            .filter(|code| codes::is_code_shaped(code))
            .map(|code| Some(code.to_owned()))
            .ok_or_else(|| {
                ApiError::invalid_request("TossPayments-Test-Code must be an error code")
            }),
    }
}

fn decide_and_keep(
    state: &SimState,
    received: Received,
    processing: Processing,
    guard: KeyGuard,
) -> Answer {
    let (answer, charge) = decide(state, received, processing);
    guard.keep(&answer, charge);
    answer
}

/// Processes a received confirm, sends the webhooks it owes, and answers;
/// with the charge the answer tells of.
fn decide(
    state: &SimState,
    received: Received,
    processing: Processing,
) -> (Answer, Option<ChargeId>) {
    let (outcome, webhooks) = state.with_ledger(|ledger| {
        let outcome = ledger.process(received, now_ms(), processing);
        (outcome, ledger.take_webhooks())
    });
    state.send_webhooks(webhooks);
    match outcome {
        ConfirmOutcome::Approved(charge, payment) => {
            tracing::info!(order_id = payment.order_id, "confirm approved");
            (
                Answer::json(StatusCode::OK, &Payment::of(&payment)),
                Some(charge),
            )
        }
        ConfirmOutcome::Declined(charge, payment) => {
            tracing::info!(order_id = payment.order_id, "confirm declined");
            (
                ApiError::Toss(codes::REJECT_CARD_PAYMENT).answer(),
                Some(charge),
            )
        }
        ConfirmOutcome::AlreadyProcessed(charge) => {
            tracing::info!("confirm of a payment already decided");
            (
                ApiError::Toss(codes::ALREADY_PROCESSED_PAYMENT).answer(),
                Some(charge),
            )
        }
        ConfirmOutcome::DuplicatedOrderId => {
            tracing::info!("confirm of an order paid under another paymentKey");
            (ApiError::Toss(codes::DUPLICATED_ORDER_ID).answer(), None)
        }
    }
}
