//! Operator routes on a drop's room at the edge: pause, resume and close — each over the
//! version the operator saw, when the request names it (`expectedVersion`) — and the
//! prequeue draw's list; and the one way the origin tells the edge's room of a change.

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use rules::drop::{RoomState, RoomUpdate};
use serde::Deserialize;

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::StoreError;

pub(super) fn invalid(message: String) -> ApiError {
    ApiError::BadRequest {
        code: "INVALID_REQUEST",
        message,
    }
}

pub(super) fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::Refused {
        status: StatusCode::CONFLICT,
        code,
        message: message.into(),
    }
}

/// A change made from an older version of the room than `current`, the one in force.
pub(super) fn stale(current: u64) -> ApiError {
    conflict(
        "STALE_VERSION",
        format!(
            "expectedVersion: the drop was changed meanwhile and is at version {current} now; \
             nothing was changed — read it again, then decide"
        ),
    )
}

/// The body of `pause`, `resume` and `close`: empty, or `{expectedVersion}`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StateRequest {
    expected_version: Option<u64>,
}

/// `POST /admin/events/{eventId}/pause` | `resume` | `close`, with an empty body or
/// `{expectedVersion}`: the room's update once the edge applied it.
pub async fn set_room_state(
    State(state): State<AppState>,
    Path((event_id, action)): Path<(String, String)>,
    body: Bytes,
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
    let request: StateRequest = if body.is_empty() {
        StateRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|err| invalid(format!("expected {{}} or {{expectedVersion}}: {err}")))?
    };
    let stored = state.store.event_room(&event_id).await?.ok_or_else(|| {
        conflict(
            "ROOM_NOT_CONFIGURED",
            "define the event's room with POST /admin/events first",
        )
    })?;
    if request
        .expected_version
        .is_some_and(|seen| seen != stored.version)
    {
        return Err(stale(stored.version));
    }
    if stored.state == RoomState::Closed && wanted != RoomState::Closed {
        return Err(conflict("DROP_CLOSED", "the drop is closed"));
    }
    edge_of(&state)?;
    let update = state
        .store
        .set_event_room(
            &event_id,
            &stored.settings,
            wanted,
            now_ms(),
            Some(stored.version),
        )
        .await
        .map_err(|err| match err {
            StoreError::StaleVersion { current } => stale(current),
            other => other.into(),
        })?;
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

pub(super) fn edge_of(state: &AppState) -> Result<&crate::edge::Edge, ApiError> {
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
pub(super) async fn tell_edge(
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
