//! Operator routes for limited drops: an event's stock and price, and — defined at run
//! time, for both parts — its waiting room (`rules::drop`): stored here, handed to the
//! edge's room signed (`crate::edge`), and read back with the room's report.
//!
//! Everything a request asks is checked before anything changes: unknown fields, a bad
//! setting (named), a stock below what is sold and reserved, a change the room could
//! not take (a new opening once the prequeue was drawn, reopening a closed drop). When
//! the edge cannot be told, the origin's side stands and the answer says so (502
//! `EDGE_UNAVAILABLE`): sending the request again tells it.
//!
//! A drop with an opening (`opensAt`, `prequeueFrom`) is gated: left out, `gated` is
//! true, and `gated: false` beside them is refused. The room is stored before the stock
//! is set, so a gated event is gated at the origin from its first unit on. That its stock
//! is live before the edge's room is told is safe: the origin itself refuses a confirm
//! for a gated event without the pass the edge claimed for it (`routes/gate.rs`), so
//! nothing is sold past a room the edge does not yet know.

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
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
    shards: Option<u32>,
    /// Instead of `shards`: they follow from the arrivals a minute expected.
    expected_arrivals_per_minute: Option<u64>,
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
    if let Some(stored) = stored {
        if stored.settings.shard_count() != settings.shard_count() {
            return Err(conflict(
                "SHARDS_FIXED",
                format!(
                    "shards: the room has {} from its first definition on",
                    stored.settings.shard_count()
                ),
            ));
        }
    }
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
    let opening = request.opens_at.is_some() || request.prequeue_from.is_some();
    let gated = match request.gated {
        Some(false) if opening => {
            return Err(invalid(
                "gated: a drop with opensAt or prequeueFrom is gated (leave gated out or true)"
                    .into(),
            ))
        }
        Some(gated) => gated,
        None => opening,
    };
    let shards = match (request.shards, request.expected_arrivals_per_minute) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "shards: give shards or expectedArrivalsPerMinute, not both".into(),
            ))
        }
        (Some(shards), None) => Some(shards),
        (None, Some(per_minute)) => Some(rules::queue::arrivals::shards_for(per_minute)),
        (None, None) => None,
    };
    let settings = RoomSettings {
        gated,
        admit_limit: request.admit_limit,
        admit_per_minute: request.admit_per_minute,
        pass_ttl_seconds: request.pass_ttl_seconds,
        opens_at: request.opens_at,
        prequeue_from: request.prequeue_from,
        name: request.name,
        shards,
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
    // Checked before the room changes; `upsert_event` checks again as it sets the stock.
    if let Some(event) = state.store.event(&request.event_id).await? {
        let committed = event.reserved + event.sold;
        if request.stock < committed {
            return Err(below_committed(committed));
        }
    }
    // The room first: a gated event's stock never goes live ungated here.
    let update = if room_given {
        let state_now = stored.map_or(RoomState::Open, |s| s.state);
        let update = state
            .store
            .set_event_room(&request.event_id, &settings, state_now, now)
            .await?;
        Some(update)
    } else {
        None
    };
    let view = match state.store.upsert_event(&spec, now).await {
        Ok(view) => view,
        Err(StoreError::StockBelowCommitted { committed }) => {
            return Err(below_committed(committed))
        }
        Err(other) => return Err(other.into()),
    };
    tracing::info!(event_id = %view.event_id, stock = view.stock, amount = view.amount, "event set");
    let mut answer = serde_json::to_value(&view).map_err(ApiError::internal)?;
    if let Some(update) = update {
        answer["room"] = tell_edge(&state, &request.event_id, &update).await?;
    }
    Ok(Json(answer))
}

/// A stock below the `committed` units already reserved or sold.
fn below_committed(committed: i64) -> ApiError {
    conflict(
        "STOCK_BELOW_COMMITTED",
        format!("stock: {committed} units are already reserved or sold"),
    )
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

/// The most people `GET /admin/events/{eventId}/draw` lists in one page.
const MAX_DRAWN_PAGE: u32 = 10_000;

/// `?from=&limit=` of the draw's list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrawPage {
    from: Option<u64>,
    limit: Option<u32>,
}

/// `GET /admin/events/{eventId}/draw?from=&limit=`: the prequeue's draw, for audit — the
/// seed, when, how many, and the people in their drawn order from place `from` (at most
/// `limit`, 1000 unless given, 10,000 at most), as the edge's room keeps them. Anyone
/// with the seed and the list re-derives the order (`rules::queue::draw::order`).
pub async fn draw_list(
    State(state): State<AppState>,
    Path(event_id): Path<String>,
    page: Result<Query<DrawPage>, QueryRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    rules::confirm::check_event_id(&event_id)?;
    let Query(page) = page.map_err(|rejection| {
        invalid(format!(
            "expected ?from=PLACE&limit=N: {}",
            rejection.body_text()
        ))
    })?;
    let limit = page.limit.unwrap_or(1_000);
    if limit == 0 || limit > MAX_DRAWN_PAGE {
        return Err(invalid(format!("limit: 1 to {MAX_DRAWN_PAGE}")));
    }
    state.store.event_room(&event_id).await?.ok_or_else(|| {
        conflict(
            "ROOM_NOT_CONFIGURED",
            "define the event's room with POST /admin/events first",
        )
    })?;
    let answer = edge_of(&state)?
        .draw_list(&event_id, page.from.unwrap_or(0), limit)
        .await
        .map_err(|err| edge_unreachable(format!("{err:#}")))?;
    match answer.status {
        200 => Ok(Json(answer.body)),
        status => Err(edge_unreachable(format!(
            "it answered {status}: {}",
            answer.body
        ))),
    }
}

fn edge_unreachable(why: String) -> ApiError {
    ApiError::Refused {
        status: StatusCode::BAD_GATEWAY,
        code: "EDGE_UNAVAILABLE",
        message: format!("the edge's room could not be read ({why}): try again"),
    }
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
