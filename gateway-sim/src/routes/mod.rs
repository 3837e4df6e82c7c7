//! HTTP surface of the simulated gateway.
//!
//! Handlers only translate between JSON and the [`Ledger`](crate::ledger::Ledger)
//! and [`Faults`](crate::faults::Faults): validation of wire bodies happens here, decisions happen
//! in the ledger, the random rolls (decline, jitter) are made here and passed
//! in, and the system clock is read in exactly one place (`crate::now_ms`).
//! The callbacks a decision or a cancel owes are taken from the ledger in the
//! same step and handed to [`callbacks`](crate::callbacks) for delivery.
//! The settlement export is written by [`settlement`];
//! its route only picks the day and the encoding.

mod admin;

use std::future::pending;
use std::time::Duration;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use encoding_rs::EUC_KR;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::faults::FaultMode;
use crate::ledger::{
    CancelOutcome, Cancelling, ConfirmOutcome, ConfirmRequest, Confirmation, Ledger, OrderStatus,
    PaymentView, Processing, RateLimited, Received,
};
use crate::server::ConnectionHandle;
use crate::settlement;
use crate::{now_ms, SimState};
use admin::{faults, ledger, set_faults};

/// Confirm bodies are a few short fields; anything near this is a client bug.
pub const BODY_LIMIT_BYTES: usize = 16 * 1024;

pub fn app(state: SimState) -> Router {
    Router::new()
        .route("/v1/payments/confirm", post(confirm))
        .route("/v1/payments/{order_id}", get(payment))
        .route("/v1/payments/{order_id}/cancel", post(cancel))
        .route("/v1/settlements", get(settlements))
        .route("/admin/ledger", get(ledger))
        .route("/admin/faults", get(faults).put(set_faults))
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

/// A valid confirm is first received (counted, and refused with 429 above
/// the rate cap, whatever the mode), then the fault mode in force decides
/// whether, when and how it is processed and answered. The settings at
/// arrival govern it throughout, `callbacks` included.
async fn confirm(
    State(state): State<SimState>,
    connection: Option<Extension<ConnectionHandle>>,
    body: Result<Json<ConfirmBody>, JsonRejection>,
) -> Result<Json<Confirmation>, ApiError> {
    let Json(body) = body?;
    let request = ConfirmRequest::try_from(body)?;
    let order_id = request.order_id.clone();
    let faults = state.faults();
    let received = state
        .with_ledger(|ledger| ledger.receive(request, now_ms(), faults.max_per_second))
        .map_err(|RateLimited { max_per_second }| {
            tracing::info!(order_id, "confirm over the rate cap");
            ApiError::RateLimited { max_per_second }
        })?;
    let processing = Processing {
        idempotent: faults.idempotent,
        decline: fastrand::f64() < faults.decline_rate,
        notify: state.notifying(&faults),
    };

    let outcome = match faults.mode {
        // A refusal acts on sockets; a request that got in before it is served.
        FaultMode::Normal | FaultMode::RefuseConnections => decide(&state, received, processing),
        FaultMode::Delay => {
            let delay = faults.delay_ms + fastrand::u64(0..=faults.jitter_ms);
            tracing::info!(order_id, delay, "DELAY: processing later");
            // PENDING to a status query until decided.
            let received = state.with_ledger(|ledger| ledger.defer(received));
            // Its own task, so the confirm is processed even if the client
            // stops waiting, as a slow gateway would.
            let state = state.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(delay)).await;
                decide(&state, received, processing)
            })
            .await
            .map_err(|err| ApiError::Internal(format!("processing the confirm failed: {err}")))?
        }
        FaultMode::HangAfterProcessing => {
            // The callback goes out now; only the answer is held.
            let outcome = decide(&state, received, processing);
            tracing::info!(
                order_id,
                "HANG_AFTER_PROCESSING: processed, holding the answer"
            );
            tokio::time::sleep(faults.hold()).await;
            outcome
        }
        FaultMode::HangBeforeProcessing => {
            drop(received);
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
            return pending().await;
        }
        FaultMode::Error500 => {
            drop(received);
            tracing::info!(order_id, "ERROR_500: received, never processed");
            return Err(ApiError::Internal(
                "injected fault ERROR_500: the confirm was received but not processed".into(),
            ));
        }
    };

    match outcome {
        ConfirmOutcome::New(confirmation) => {
            tracing::info!(order_id, status = ?confirmation.status, "confirm decided");
            Ok(Json(confirmation))
        }
        ConfirmOutcome::Repeat(confirmation) => {
            tracing::info!(order_id, "repeat confirm; replaying the recorded result");
            Ok(Json(confirmation))
        }
        ConfirmOutcome::Conflict => {
            tracing::warn!(order_id, "confirm conflicts with the recorded payment");
            Err(ApiError::OrderConflict { order_id })
        }
    }
}

/// Processes a received confirm and sends the callbacks it owes.
fn decide(state: &SimState, received: Received, processing: Processing) -> ConfirmOutcome {
    let (outcome, callbacks) = state.with_ledger(|ledger| {
        let outcome = ledger.process(received, now_ms(), processing);
        (outcome, ledger.take_callbacks())
    });
    state.send_callbacks(callbacks);
    outcome
}

/// The answer to a cancel, the first and every repeat alike.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CancelAnswer {
    order_id: String,
    status: OrderStatus,
}

/// Cancels (refunds) an order's approved charge — every one of its charges
/// in non-idempotent mode. Of the faults only `ERROR_500` acts here (500,
/// nothing done), besides `REFUSE_CONNECTIONS` closing the port; delays,
/// hangs and the rate cap are for confirms.
async fn cancel(
    State(state): State<SimState>,
    order_id: Result<Path<String>, PathRejection>,
) -> Result<Json<CancelAnswer>, ApiError> {
    let Path(order_id) = order_id?;
    let faults = state.faults();
    if faults.mode == FaultMode::Error500 {
        tracing::info!(order_id, "ERROR_500: cancel not processed");
        return Err(ApiError::Internal(
            "injected fault ERROR_500: the cancel was not processed".into(),
        ));
    }
    let cancelling = Cancelling {
        idempotent: faults.idempotent,
        notify: state.notifying(&faults),
    };
    let (outcome, callbacks) = state.with_ledger(|ledger| {
        let outcome = ledger.cancel(&order_id, now_ms(), cancelling);
        (outcome, ledger.take_callbacks())
    });
    state.send_callbacks(callbacks);

    match outcome {
        CancelOutcome::Cancelled => tracing::info!(order_id, "cancelled"),
        CancelOutcome::AlreadyCancelled => {
            tracing::info!(order_id, "repeat cancel; already cancelled");
        }
        CancelOutcome::Declined => {
            tracing::info!(order_id, "cancel refused: the charge was declined");
            return Err(ApiError::NotCancellable { order_id });
        }
        CancelOutcome::Pending => {
            tracing::info!(order_id, "cancel refused: not decided yet");
            return Err(ApiError::PaymentPending { order_id });
        }
        CancelOutcome::Unknown => {
            return Err(ApiError::NotFound(format!(
                "no payment for orderId {order_id:?}"
            )))
        }
    }
    Ok(Json(CancelAnswer {
        order_id,
        status: OrderStatus::Cancelled,
    }))
}

async fn payment(
    State(state): State<SimState>,
    order_id: Result<Path<String>, PathRejection>,
) -> Result<Json<PaymentView>, ApiError> {
    let Path(order_id) = order_id?;
    let faults = state.faults();
    state.with_ledger(Ledger::count_status_query);
    if faults.status_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.status_delay_ms)).await;
    }
    let pending_visible = faults.pending_visible;
    state
        .with_ledger(|ledger| ledger.payment(&order_id))
        .filter(|view| pending_visible || view.status != OrderStatus::Pending)
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("no payment for orderId {order_id:?}")))
}

#[derive(Deserialize)]
struct SettlementQuery {
    date: Option<String>,
    encoding: Option<String>,
}

/// The settlement file of a UTC day (see [`settlement`]), as an attachment:
/// UTF-8 with a byte order mark (`encoding=utf-8`, the default), or CP949
/// without one (`encoding=cp949`, labelled `charset=EUC-KR`, the WHATWG name
/// under which CP949 is read). A file holding characters CP949 lacks is
/// refused rather than written with substitutes.
async fn settlements(
    State(state): State<SimState>,
    query: Result<Query<SettlementQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
    let date = query.date.ok_or_else(|| {
        ApiError::InvalidDate("date is required, as YYYY-MM-DD (a UTC day)".into())
    })?;
    let date = settlement::parse_date(&date).ok_or_else(|| {
        ApiError::InvalidDate(format!(
            "date must be a YYYY-MM-DD calendar date, got {date:?}"
        ))
    })?;
    let cp949 = match query.encoding.as_deref() {
        None => false,
        Some(encoding) if encoding.eq_ignore_ascii_case("utf-8") => false,
        Some(encoding) if encoding.eq_ignore_ascii_case("cp949") => true,
        Some(encoding) => {
            return Err(ApiError::InvalidEncoding(format!(
                "encoding must be utf-8 or cp949, got {encoding:?}"
            )))
        }
    };
    let csv =
        state.with_ledger(|ledger| settlement::settlement_csv(&ledger.snapshot().approvals, date));
    let (charset, body) = if cp949 {
        let (bytes, _, unmappable) = EUC_KR.encode(&csv);
        if unmappable {
            return Err(ApiError::InvalidEncoding(
                "the file holds characters CP949 cannot encode; ask for utf-8".into(),
            ));
        }
        (EUC_KR.name(), bytes.into_owned())
    } else {
        let mut body = "\u{feff}".as_bytes().to_vec();
        body.extend_from_slice(csv.as_bytes());
        ("utf-8", body)
    };
    let headers = [
        (header::CONTENT_TYPE, format!("text/csv; charset={charset}")),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", settlement::file_name(date)),
        ),
    ];
    Ok((headers, body).into_response())
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
