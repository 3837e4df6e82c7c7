//! Operator routes for limited drops: an event's stock and price, and — defined at run
//! time, for both parts — its waiting room (`rules::drop`): stored here, handed to the
//! edge's room signed (`crate::edge`), and read back with the room's report.
//!
//! Everything a request asks is checked before anything changes: unknown fields, a bad
//! setting (named), a stock below what is sold and reserved, a change the room could
//! not take (a new opening once the prequeue was drawn, reopening a closed drop). When
//! the edge cannot be told, the origin's side stands and the answer says so (502
//! `EDGE_UNAVAILABLE`): sending the request again tells it.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use rules::drop::{RoomSettings, RoomState, RoomUpdate};
use serde::Deserialize;

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{EventSpec, StoreError};

/// `POST /admin/events`: the event, and its room if any room field is given (the room's
/// settings are then all of them: a field left out is the edge's default).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EventRequest {
    event_id: String,
    stock: i64,
    amount: i64,
    gated: Option<bool>,
    admit_limit: Option<u32>,
    admit_per_minute: Option<u32>,
    pass_ttl_seconds: Option<u32>,
    opens_at: Option<i64>,
    prequeue_from: Option<i64>,
    name: Option<String>,
}

fn invalid(message: String) -> ApiError {
    ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message,
    }
}

fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::Refused {
        status: StatusCode::CONFLICT,
        code,
        message: message.into(),
    }
}

/// Whether `settings` may replace `stored` at `now_ms`: what the room would refuse.
fn check_change(
    settings: &RoomSettings,
    stored: Option<&RoomUpdate>,
    now_ms: i64,
) -> Result<(), ApiError> {
    let stored_opens_at = stored.and_then(|update| update.settings.opens_at);
    settings
        .check(now_ms, stored_opens_at)
        .map_err(|err| invalid(err.to_string()))?;
    let drawn = stored_opens_at.is_some_and(|at| at <= now_ms);
    if drawn && settings.opens_at != stored_opens_at {
        return Err(conflict(
            "ALREADY_OPEN",
            "opensAt: the drop opened and its prequeue was drawn",
        ));
    }
    Ok(())
}

pub async fn put_event(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    let request: EventRequest = serde_json::from_slice(&body).map_err(|err| {
        invalid(format!(
            "expected {{eventId, stock, amount, …room settings}}: {err}"
        ))
    })?;
    rules::confirm::check_event_id(&request.event_id)?;
    if request.stock < 0 {
        return Err(invalid("stock: must be 0 or more".into()));
    }
    if request.amount <= 0 {
        return Err(invalid("amount: must be more than 0".into()));
    }
    let settings = RoomSettings {
        gated: request.gated.unwrap_or(false),
        admit_limit: request.admit_limit,
        admit_per_minute: request.admit_per_minute,
        pass_ttl_seconds: request.pass_ttl_seconds,
        opens_at: request.opens_at,
        prequeue_from: request.prequeue_from,
        name: request.name,
    };
    let room_given = request.gated.is_some() || settings.is_configured();
    let now = now_ms();
    let stored = state.store.event_room(&request.event_id).await?;
    if room_given {
        check_change(&settings, stored.as_ref(), now)?;
        if stored
            .as_ref()
            .is_some_and(|s| s.state == RoomState::Closed)
        {
            return Err(conflict("DROP_CLOSED", "the drop is closed"));
        }
        edge_of(&state)?;
    }
    let spec = EventSpec {
        event_id: request.event_id.clone(),
        stock: request.stock,
        amount: request.amount,
    };
    let view = match state.store.upsert_event(&spec, now).await {
        Ok(view) => view,
        Err(StoreError::StockBelowCommitted { committed }) => {
            return Err(conflict(
                "STOCK_BELOW_COMMITTED",
                format!("stock: {committed} units are already reserved or sold"),
            ))
        }
        Err(other) => return Err(other.into()),
    };
    tracing::info!(event_id = %view.event_id, stock = view.stock, amount = view.amount, "event set");
    let mut answer = serde_json::to_value(&view).map_err(ApiError::internal)?;
    if room_given {
        let state_now = stored.map_or(RoomState::Open, |s| s.state);
        let update = state
            .store
            .set_event_room(&request.event_id, &settings, state_now, now)
            .await?;
        answer["room"] = tell_edge(&state, &request.event_id, &update).await?;
    }
    Ok(Json(answer))
}

/// The most events `GET /admin/events` lists.
const MAX_LISTED: u32 = 1_000;

/// `GET /admin/events`: `{events}`, each `{eventId, stock, amount, reserved, sold}`, by id.
pub async fn list_events(
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let events = state.store.events(MAX_LISTED).await?;
    Ok(Json(serde_json::json!({ "events": events })))
}

/// `POST /admin/events/{eventId}/pause` | `resume` | `close`.
pub async fn set_room_state(
    State(state): State<AppState>,
    Path((event_id, action)): Path<(String, String)>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let wanted = match action.as_str() {
        "pause" => RoomState::Paused,
        "resume" => RoomState::Open,
        "close" => RoomState::Closed,
        _ => {
            return Err(ApiError::NotFound {
                code: "NOT_FOUND",
                message: "no such route",
            })
        }
    };
    let stored = state.store.event_room(&event_id).await?.ok_or_else(|| {
        conflict(
            "ROOM_NOT_CONFIGURED",
            "define the event's room with POST /admin/events first",
        )
    })?;
    if stored.state == RoomState::Closed && wanted != RoomState::Closed {
        return Err(conflict("DROP_CLOSED", "the drop is closed"));
    }
    edge_of(&state)?;
    let update = state
        .store
        .set_event_room(&event_id, &stored.settings, wanted, now_ms())
        .await?;
    tracing::info!(%event_id, state = wanted.name(), version = update.version, "room state set");
    Ok(Json(tell_edge(&state, &event_id, &update).await?))
}

/// `GET /admin/events/{eventId}`: `{eventId, stock, amount, reserved, sold}`, with the
/// room (`room`: settings, state, version) and its report from the edge (`roomStatus`,
/// or `roomError` when the edge cannot say).
pub async fn get_event(
    State(state): State<AppState>,
    Path(event_id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let view = state
        .store
        .event(&event_id)
        .await?
        .ok_or(ApiError::NotFound {
            code: "EVENT_NOT_FOUND",
            message: "no event has this eventId",
        })?;
    let mut answer = serde_json::to_value(&view).map_err(ApiError::internal)?;
    if let Some(update) = state.store.event_room(&event_id).await? {
        answer["room"] = serde_json::to_value(&update).map_err(ApiError::internal)?;
        match edge_of(&state) {
            Ok(edge) => match edge.room_report(&event_id).await {
                Ok(report) if report.status == 200 => answer["roomStatus"] = report.body,
                Ok(report) => answer["roomError"] = report.body,
                Err(err) => answer["roomError"] = format!("{err:#}").into(),
            },
            Err(_) => answer["roomError"] = "EDGE_URL is not set".into(),
        }
    }
    Ok(Json(answer))
}

fn edge_of(state: &AppState) -> Result<&crate::edge::Edge, ApiError> {
    state
        .edge_calls
        .as_deref()
        .ok_or_else(|| ApiError::Refused {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "EDGE_NOT_CONFIGURED",
            message: "EDGE_URL is not set: the edge's room cannot be told".into(),
        })
}

/// Hands the edge `update`: the room's report once applied.
async fn tell_edge(
    state: &AppState,
    event_id: &str,
    update: &RoomUpdate,
) -> Result<serde_json::Value, ApiError> {
    let unavailable = |why: String| ApiError::Refused {
        status: StatusCode::BAD_GATEWAY,
        code: "EDGE_UNAVAILABLE",
        message: format!(
            "stored here as version {}, but the edge was not told ({why}): send it again",
            update.version
        ),
    };
    let answer = edge_of(state)?
        .configure_room(event_id, update)
        .await
        .map_err(|err| unavailable(format!("{err:#}")))?;
    match answer.status {
        200 => Ok(answer.body),
        status => Err(unavailable(format!(
            "it answered {status}: {}",
            answer.body
        ))),
    }
}
