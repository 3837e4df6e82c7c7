//! Operator routes for limited drops: an event's stock and price, and — defined at run
//! time, for both parts — its waiting room (`rules::drop`): stored here, handed to the
//! edge's room signed (`crate::edge`), and read back with the room's report.
//!
//! Everything a request asks is checked before anything changes: unknown fields, a bad
//! setting or value (named), a stock below what is sold and reserved, a change the room
//! could not take (a new opening once the prequeue was drawn, reopening a closed drop),
//! a change made from an older version of the room than the one in force (409
//! `STALE_VERSION`, with `expectedVersion`). When the edge cannot be told, the origin's
//! side stands and the answer says so (502 `EDGE_UNAVAILABLE`): sending the request
//! again tells it. The room's state and the draw's list are `rooms.rs`.
//!
//! A drop with an opening (`opensAt`, `prequeueFrom`) is gated: left out, `gated` is
//! true, and `gated: false` beside them is refused. The room is stored before the stock
//! is set, so a gated event is gated at the origin from its first unit on. That its stock
//! is live before the edge's room is told is safe: the origin itself refuses a confirm
//! for a gated event without the pass the edge claimed for it (`routes/gate.rs`), so
//! nothing is sold past a room the edge does not yet know.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::Json;
use rules::drop::{RoomSettings, RoomState, RoomUpdate};
use serde::Deserialize;

use super::rooms::{conflict, edge_of, invalid, stale, tell_edge};
use crate::clock::now_ms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{EventSpec, StoreError};

/// `POST /admin/events`: the event, and its room if any room field is given (the room's
/// settings are then all of them: a field left out is the edge's default).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EventRequest {
    event_id: Option<String>,
    stock: Option<i64>,
    amount: Option<i64>,
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
    /// The room's version this change was made from (0: no room yet); left out, the
    /// change applies over whatever version is in force.
    expected_version: Option<u64>,
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
    let request: EventRequest = read_request(&body)?;
    let required = |field: &str| invalid(format!("{field}: is required"));
    let event_id = request
        .event_id
        .clone()
        .ok_or_else(|| required("eventId"))?;
    rules::confirm::check_event_id(&event_id).map_err(|err| match err {
        rules::confirm::InvalidConfirm::Field { field, problem } => {
            invalid(format!("{field}: {problem}"))
        }
        other => other.into(),
    })?;
    let stock = request.stock.ok_or_else(|| required("stock"))?;
    if stock < 0 {
        return Err(invalid("stock: must be 0 or more".into()));
    }
    let amount = request.amount.ok_or_else(|| required("amount"))?;
    if amount <= 0 {
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
    let stored = state.store.event_room(&event_id).await?;
    let in_force = stored.as_ref().map_or(0, |room| room.version);
    if request
        .expected_version
        .is_some_and(|seen| seen != in_force)
    {
        return Err(stale(in_force));
    }
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
        event_id: event_id.clone(),
        stock,
        amount,
    };
    // Checked before the room changes; `upsert_event` checks again as it sets the stock.
    if let Some(event) = state.store.event(&event_id).await? {
        let committed = event.reserved + event.sold;
        if stock < committed {
            return Err(below_committed(committed));
        }
    }
    // The room first: a gated event's stock never goes live ungated here.
    let update = if room_given {
        let state_now = stored.map_or(RoomState::Open, |s| s.state);
        let update = state
            .store
            .set_event_room(
                &event_id,
                &settings,
                state_now,
                now,
                request.expected_version,
            )
            .await
            .map_err(|err| match err {
                StoreError::StaleVersion { current } => stale(current),
                other => other.into(),
            })?;
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
        answer["room"] = tell_edge(&state, &event_id, &update).await?;
    }
    Ok(Json(answer))
}

/// The request read, a value of the wrong type named by its field.
fn read_request(body: &[u8]) -> Result<EventRequest, ApiError> {
    let mut json = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut json).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        invalid(if path == "." {
            format!("expected {{eventId, stock, amount, …room settings}}: {inner}")
        } else {
            format!("{path}: {inner}")
        })
    })
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

/// `GET /admin/events`: `{events, currency}`, each event `{eventId, stock, amount,
/// reserved, sold}` and its `room` (settings, state, version) if one was defined, by id;
/// `currency` is every amount's (`GATEWAY_CURRENCY`, in its minor unit).
pub async fn list_events(
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let events = state.store.events(MAX_LISTED).await?;
    let mut rooms: std::collections::HashMap<String, RoomUpdate> = state
        .store
        .event_rooms(MAX_LISTED)
        .await?
        .into_iter()
        .collect();
    let events = events
        .into_iter()
        .map(|event| {
            let mut answer = serde_json::to_value(&event).map_err(ApiError::internal)?;
            if let Some(room) = rooms.remove(&event.event_id) {
                answer["room"] = serde_json::to_value(&room).map_err(ApiError::internal)?;
            }
            Ok(answer)
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(Json(serde_json::json!({
        "events": events,
        "currency": state.gateway.currency(),
    })))
}

/// `GET /admin/events/{eventId}`: `{eventId, stock, amount, reserved, sold, currency}`,
/// with the room (`room`: settings, state, version) and its report from the edge
/// (`roomStatus`, or `roomError` when the edge cannot say).
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
    answer["currency"] = state.gateway.currency().into();
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
