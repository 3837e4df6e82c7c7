//! Operator routes, behind `Authorization: Bearer $OPERATOR_TOKEN`. With no token
//! configured they are off, never open.

use axum::extract::rejection::QueryRejection;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Query, Request, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::guard::{GuardView, APPROVE_GUARD};
use crate::policy::breaker::BreakerMode;
use crate::recovery::CycleReport;
use crate::state::AppState;
use crate::store::{BreakerControl, Payment, PaymentStatus};

/// The most payments `GET /admin/payments` lists.
const MAX_LISTED: u32 = 1_000;

/// `GET /admin/guard`: the approval guard — breaker state and transitions, calls in
/// flight, bulkhead and limiter, refusals so far — and the recovery job's own guard.
pub async fn guard(State(state): State<AppState>) -> Json<GuardsView> {
    Json(GuardsView {
        approve: state.guard.view(),
        recovery: state.recovery.guard().view(),
    })
}

/// The approval guard's view, with the recovery guard's under `recovery`.
#[derive(Serialize)]
pub struct GuardsView {
    #[serde(flatten)]
    approve: GuardView,
    recovery: GuardView,
}

#[derive(Deserialize)]
pub struct PaymentsQuery {
    status: String,
    limit: Option<u32>,
}

/// A payment as an operator sees it: with its owner and what recovery knows.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorPayment {
    #[serde(flatten)]
    payment: Payment,
    user_id: String,
    recovery: RecoveryView,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecoveryView {
    attempts: u32,
    not_found_count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_not_found_at: Option<i64>,
    next_attempt_at: i64,
    /// Why an operator should look at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    flag: Option<String>,
}

/// `GET /admin/payments?status=UNKNOWN[&limit=N]`: payments in a status, oldest first,
/// with why recovery has not settled them.
pub async fn payments(
    State(state): State<AppState>,
    query: Result<Query<PaymentsQuery>, QueryRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Query(query) = query.map_err(|rejection| ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message: format!(
            "expected ?status=STATUS[&limit=N]: {}",
            rejection.body_text()
        ),
    })?;
    let status = PaymentStatus::parse(&query.status).ok_or_else(|| ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message: format!(
            "status must be PENDING, APPROVED, FAILED or UNKNOWN, not `{}`",
            query.status
        ),
    })?;
    let limit = query.limit.unwrap_or(100).clamp(1, MAX_LISTED);
    let payments = state.store.payments_with_status(status, limit).await?;
    let payments: Vec<_> = payments
        .into_iter()
        .map(|payment| {
            let recovery = RecoveryView {
                attempts: payment.recovery.attempts,
                not_found_count: payment.recovery.not_found_count,
                last_not_found_at: payment.recovery.last_not_found_at,
                next_attempt_at: payment.recovery.next_attempt_at,
                flag: payment.recovery.flag.clone(),
            };
            OperatorPayment {
                user_id: payment.user_id.clone(),
                payment,
                recovery,
            }
        })
        .collect();
    Ok(Json(serde_json::json!({ "payments": payments })))
}

/// `POST /admin/recovery/run`: one recovery cycle now; what it changed.
pub async fn run_recovery(State(state): State<AppState>) -> Json<CycleReport> {
    Json(state.recovery.run_cycle().await)
}

/// `POST /admin/guard/breaker` `{state, reason}`: an operator sets the approval guard's
/// breaker — `FORCED_OPEN` refuses every call, `DISABLED` lets every call through and
/// records nothing, `AUTO` hands it back to the breaker, closed and fresh. Stored, so
/// every instance on the database follows within a second and a restart keeps it.
pub async fn set_breaker(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<GuardsView>, ApiError> {
    let operator = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip().to_string());
    // Read whole, within its bound, before the request reached here.
    let body = axum::body::to_bytes(request.into_body(), rules::confirm::MAX_BODY_BYTES)
        .await
        .map_err(|_| rules::confirm::InvalidConfirm::TooLarge)?;
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Setting {
        state: String,
        reason: String,
    }
    let invalid = |message: &str| ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message: message.to_owned(),
    };
    let setting: Setting = serde_json::from_slice(&body)
        .map_err(|_| invalid("the body must be {\"state\": \"FORCED_OPEN\" | \"DISABLED\" | \"AUTO\", \"reason\": \"…\"}"))?;
    let mode = BreakerMode::from_name(&setting.state)
        .ok_or_else(|| invalid("`state` must be FORCED_OPEN, DISABLED or AUTO"))?;
    let reason = setting.reason.trim();
    if reason.is_empty() || reason.len() > MAX_REASON_LEN {
        return Err(invalid("`reason` must say why, in 1 to 500 bytes"));
    }
    let mut control = BreakerControl {
        mode,
        reason: reason.to_owned(),
        by: operator.unwrap_or_else(|| "operator".to_owned()),
        at_ms: now_ms(),
        version: 0,
    };
    control.version = state
        .store
        .set_breaker_control(APPROVE_GUARD, &control)
        .await?;
    state.guard.apply_control(control);
    Ok(guard(State(state)).await)
}

/// The longest reason an operator may give.
const MAX_REASON_LEN: usize = 500;
