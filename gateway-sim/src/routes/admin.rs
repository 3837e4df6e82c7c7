//! The simulator's own controls: the ledger as JSON, the faults read and replaced, and
//! the capacity's load.

use std::num::NonZeroU32;

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use crate::capacity::Load;
use crate::codes;
use crate::error::ApiError;
use crate::faults::{FaultMode, Faults, MAX_CAPACITY, MAX_HOLD_MS, MAX_LINE};
use crate::ledger::LedgerSnapshot;
use crate::SimState;

/// The `PUT /admin/faults` body as sent; [`Faults`] is what survives
/// validation. Absent fields take their defaults.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct FaultsBody {
    mode: FaultMode,
    // Signed so that negative values get our message rather than serde's.
    delay_ms: Option<i64>,
    jitter_ms: Option<i64>,
    decline_rate: Option<f64>,
    max_per_second: Option<i64>,
    capacity: Option<i64>,
    line_limit: Option<i64>,
    idempotent: Option<bool>,
    duration_ms: Option<i64>,
    webhooks: Option<bool>,
    pending_visible: Option<bool>,
    status_delay_ms: Option<i64>,
    test_code: Option<String>,
    approved_amount_delta: Option<i64>,
}

impl TryFrom<FaultsBody> for Faults {
    type Error = ApiError;

    fn try_from(body: FaultsBody) -> Result<Self, ApiError> {
        let defaults = Faults::default();
        let decline_rate = body.decline_rate.unwrap_or(defaults.decline_rate);
        if !(0.0..=1.0).contains(&decline_rate) {
            return Err(ApiError::InvalidFaults(format!(
                "declineRate must be between 0.0 and 1.0, got {decline_rate}"
            )));
        }
        let max_per_second = body
            .max_per_second
            .map(|max| {
                u32::try_from(max)
                    .ok()
                    .and_then(NonZeroU32::new)
                    .ok_or_else(|| {
                        ApiError::InvalidFaults(format!(
                            "maxPerSecond must be between 1 and {}, got {max}",
                            u32::MAX
                        ))
                    })
            })
            .transpose()?;
        let (capacity, line_limit) = capacity(body.capacity, body.line_limit)?;
        let duration_ms = match (body.mode, body.duration_ms) {
            (FaultMode::RefuseConnections, None) => {
                return Err(ApiError::InvalidFaults(
                    "REFUSE_CONNECTIONS needs durationMs: the admin API shares the closed port"
                        .into(),
                ))
            }
            (FaultMode::RefuseConnections, Some(duration)) => {
                Some(millis("durationMs", duration, 1)?)
            }
            (_, None) => None,
            (_, Some(_)) => {
                return Err(ApiError::InvalidFaults(
                    "durationMs applies to REFUSE_CONNECTIONS only".into(),
                ))
            }
        };
        if let Some(code) = body
            .test_code
            .as_deref()
            .filter(|code| !codes::is_code_shaped(code))
        {
            return Err(ApiError::InvalidFaults(format!(
                "testCode must be a Toss error code (A-Z, 0-9 and _, at most 64), got {code:?}"
            )));
        }
        Ok(Self {
            mode: body.mode,
            delay_ms: body
                .delay_ms
                .map_or(Ok(defaults.delay_ms), |delay| millis("delayMs", delay, 0))?,
            jitter_ms: body.jitter_ms.map_or(Ok(defaults.jitter_ms), |jitter| {
                millis("jitterMs", jitter, 0)
            })?,
            decline_rate,
            max_per_second,
            capacity,
            line_limit,
            idempotent: body.idempotent.unwrap_or(defaults.idempotent),
            duration_ms,
            webhooks: body.webhooks.unwrap_or(defaults.webhooks),
            pending_visible: body.pending_visible.unwrap_or(defaults.pending_visible),
            status_delay_ms: body
                .status_delay_ms
                .map_or(Ok(defaults.status_delay_ms), |delay| {
                    millis("statusDelayMs", delay, 0)
                })?,
            test_code: body.test_code,
            approved_amount_delta: body
                .approved_amount_delta
                .unwrap_or(defaults.approved_amount_delta),
        })
    }
}

/// `capacity` (1 to [`MAX_CAPACITY`]) and `lineLimit` (0 to [`MAX_LINE`], 0 when left
/// out), which applies with a capacity only.
fn capacity(
    capacity: Option<i64>,
    line_limit: Option<i64>,
) -> Result<(Option<NonZeroU32>, Option<u32>), ApiError> {
    let Some(slots) = capacity else {
        return match line_limit {
            None => Ok((None, None)),
            Some(_) => Err(ApiError::InvalidFaults(
                "lineLimit applies with a capacity only".into(),
            )),
        };
    };
    let slots = u32::try_from(slots)
        .ok()
        .filter(|slots| *slots <= MAX_CAPACITY)
        .and_then(NonZeroU32::new)
        .ok_or_else(|| {
            ApiError::InvalidFaults(format!(
                "capacity must be between 1 and {MAX_CAPACITY}, got {slots}"
            ))
        })?;
    let line = line_limit.unwrap_or(0);
    let line = u32::try_from(line)
        .ok()
        .filter(|line| *line <= MAX_LINE)
        .ok_or_else(|| {
            ApiError::InvalidFaults(format!(
                "lineLimit must be between 0 and {MAX_LINE}, got {line}"
            ))
        })?;
    Ok((Some(slots), Some(line)))
}

/// A duration field in milliseconds, from `min` to [`MAX_HOLD_MS`].
fn millis(field: &str, value: i64, min: u64) -> Result<u64, ApiError> {
    u64::try_from(value)
        .ok()
        .filter(|millis| (min..=MAX_HOLD_MS).contains(millis))
        .ok_or_else(|| {
            ApiError::InvalidFaults(format!(
                "{field} must be between {min} and {MAX_HOLD_MS}, got {value}"
            ))
        })
}

pub(super) async fn ledger(State(state): State<SimState>) -> Json<LedgerSnapshot> {
    Json(state.with_ledger(|ledger| ledger.snapshot()))
}

/// The capacity's load now: confirms processing and waiting, and those refused so far.
pub(super) async fn capacity_load(State(state): State<SimState>) -> Json<Load> {
    Json(state.capacity().load())
}

pub(super) async fn faults(State(state): State<SimState>) -> Json<Faults> {
    Json(state.faults())
}

/// Replaces the whole fault setting; answers the setting now in force.
pub(super) async fn set_faults(
    State(state): State<SimState>,
    body: Result<Json<FaultsBody>, JsonRejection>,
) -> Result<Json<Faults>, ApiError> {
    let Json(body) = body.map_err(|rejection| ApiError::InvalidFaults(rejection.body_text()))?;
    let faults = Faults::try_from(body)?;
    match faults.refusal() {
        Some(duration) => state
            .server()
            .refuse(faults.clone(), duration)
            .await
            .map_err(|_| ApiError::RefusalUnavailable)?,
        None => state.set_faults(faults.clone()),
    }
    tracing::info!(?faults, "fault settings replaced");
    Ok(Json(faults))
}
