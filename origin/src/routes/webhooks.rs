//! `POST /gateway/webhooks/{toss|stripe}`: the PG's webhooks. Each is checked as its PG's
//! scheme requires (Stripe's signature and age; Toss signs none), then taken as a hint:
//! its payment is looked up at a bounded rate, and only the look-up's answer changes it
//! ([`crate::recovery::hints`]). The answer is 200 at once — Toss wants one within 10 s
//! and retries seven times — 400 for a body that is not the PG's (too large, not JSON, a
//! bad signature), with nothing done, and 503 `BUSY` when too many hints wait, so that
//! the PG sends it again later.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::recovery::hints::Offered;
use crate::state::AppState;

pub async fn receive(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    if provider != state.gateway.provider().as_str() {
        return Err(ApiError::NotFound {
            code: "NOT_FOUND",
            message: "webhooks of another PG than GATEWAY_PROVIDER's are not taken here",
        });
    }
    let now = now_ms();
    let hint = match state.gateway.webhook(&headers, &body, now) {
        Ok(hint) => hint,
        Err(refusal) => {
            tracing::warn!(%refusal, provider, "a PG webhook was refused");
            state.metrics.webhook("refused");
            return Err(ApiError::BadRequest {
                code: "WEBHOOK_INVALID",
                message: refusal.to_string(),
            });
        }
    };
    let Some(hint) = hint else {
        state.metrics.webhook("ignored");
        return Ok(Json(json!({ "received": true })));
    };
    let offered = state.webhooks.offer(hint, now);
    state.metrics.webhook(offered.as_str());
    if offered == Offered::Dropped {
        // Not 200: the PG sends it again later, when the queue has room.
        return Err(ApiError::Busy);
    }
    Ok(Json(json!({ "received": true })))
}
