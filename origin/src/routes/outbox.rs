//! Operator routes of the outbox: the merchant's webhooks as they stand
//! (`GET /admin/webhooks`), a dead letter sent again (`POST /admin/webhooks/{id}/redeliver`),
//! the endpoint enabled again after a 410 (`POST /admin/webhooks/enable`), and the
//! events pulled in order (`GET /admin/payment-events?after=&limit=`), for consumers
//! that prefer reading to being called; the cursor is the last event's position, which
//! the database keeps, so it holds across restarts.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::outbox::message::{message, message_id};
use crate::state::AppState;
use crate::store::OutboxEvent;

/// Failures and dead letters listed at most.
const LISTED: u32 = 50;
/// The most events one page of the pull API holds.
const MAX_PAGE: u32 = 1_000;

fn invalid(message: String) -> ApiError {
    ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message,
    }
}

/// An event as operators and consumers read it: its message, its place, its delivery.
fn listed(event: &OutboxEvent, currency: &str) -> Value {
    let mut item = message(event, currency);
    item["id"] = message_id(event).into();
    item["position"] = event.position.into();
    item["delivery"] = json!({
        "state": event.delivery,
        "attempts": event.attempts,
        "lastStatus": event.last_status,
        "lastError": event.last_error,
        "lastAttemptAt": event.last_attempt_at,
        "deliveredAt": event.delivered_at,
    });
    item
}

/// `GET /admin/webhooks`.
pub async fn webhooks(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let backlog = state.store.webhook_backlog(LISTED).await?;
    let currency = state.gateway.currency();
    let endpoint = match &state.merchant_webhooks {
        Some(config) => {
            let disabled = state.store.endpoint_disabled(config.url.as_str()).await?;
            json!({
                "url": config.url.as_str(),
                "disabled": disabled.map(|(since, reason)| json!({"since": since, "reason": reason})),
            })
        }
        None => Value::Null,
    };
    let now = now_ms();
    Ok(Json(json!({
        "endpoint": endpoint,
        "pending": backlog.pending,
        "oldestAgeMs": backlog.oldest_at.map(|at| (now - at).max(0)),
        "dead": backlog.dead,
        "failing": backlog.failing.iter().map(|e| listed(e, currency)).collect::<Vec<_>>(),
        "deadLetters": backlog.dead_letters.iter().map(|e| listed(e, currency)).collect::<Vec<_>>(),
    })))
}

/// `POST /admin/webhooks/{id}/redeliver`: `{id}` is a dead letter's `msg_…` id.
pub async fn redeliver(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let number = id
        .strip_prefix("msg_")
        .and_then(|n| n.parse::<i64>().ok())
        .ok_or_else(|| {
            invalid(format!(
                "id: `{id}` is not a message id (msg_ and a number)"
            ))
        })?;
    if !state.store.redeliver(number, now_ms()).await? {
        return Err(ApiError::Refused {
            status: StatusCode::CONFLICT,
            code: "NOT_A_DEAD_LETTER",
            message: format!(
                "{id} is not a dead letter (delivered, still being tried, or unknown)"
            ),
        });
    }
    tracing::info!(%id, "a dead letter is sent again");
    Ok(Json(json!({ "id": id, "delivery": "PENDING" })))
}

/// `POST /admin/webhooks/enable`: the endpoint takes deliveries again.
pub async fn enable(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let config = state.merchant_webhooks.as_ref().ok_or(ApiError::Refused {
        status: StatusCode::CONFLICT,
        code: "WEBHOOKS_NOT_CONFIGURED",
        message: "MERCHANT_WEBHOOK_URL is not set: there is no endpoint to enable".into(),
    })?;
    state
        .store
        .set_endpoint_disabled(config.url.as_str(), None)
        .await?;
    tracing::info!(url = %config.url, "the merchant's endpoint is enabled again");
    Ok(Json(
        json!({ "url": config.url.as_str(), "disabled": null }),
    ))
}

/// `?after=&limit=` of the pull API.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    after: Option<String>,
    limit: Option<u32>,
}

/// `GET /admin/payment-events?after=CURSOR&limit=N`: `{events, next}` — the events
/// after the cursor (from the first when it is left out), `limit` (100 unless given,
/// 1,000 at most), in their published order; `next` is the cursor to ask with next
/// (the same when nothing new was there).
pub async fn payment_events(
    State(state): State<AppState>,
    page: Result<Query<Page>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(page) = page.map_err(|rejection| {
        invalid(format!(
            "expected ?after=CURSOR&limit=N: {}",
            rejection.body_text()
        ))
    })?;
    let after = match page.after.as_deref() {
        None | Some("") => 0,
        Some(cursor) => cursor
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| invalid(format!("after: `{cursor}` is not a cursor this API gave")))?,
    };
    let limit = page.limit.unwrap_or(100);
    if limit == 0 || limit > MAX_PAGE {
        return Err(invalid(format!("limit: 1 to {MAX_PAGE}")));
    }
    // What was committed since the last publishing is read too, pushed or not.
    state.store.publish_events().await?;
    let events = state.store.payment_events(after, limit).await?;
    let next = events.last().and_then(|e| e.position).unwrap_or(after);
    let currency = state.gateway.currency();
    Ok(Json(json!({
        "events": events.iter().map(|e| listed(e, currency)).collect::<Vec<_>>(),
        "next": next.to_string(),
    })))
}
