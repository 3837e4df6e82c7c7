//! `/queue/{eventId}/…`: enter, status, leave, and the waiting-room page.
//!
//! Status polling fails soft: when the room cannot answer, the client is told to poll
//! again later (503 with `Retry-After`), never dropped from the line. The payment gate
//! (see `payments.rs`) never fails open.

use rules::confirm::check_event_id;
use rules::token::AccessClaims;
use worker::{Env, Response};

use crate::durable_call::ObjectUnavailable;
use crate::error::ApiError;
use crate::queue::client::WaitingRoomClient;
use crate::queue::protocol::{Placement, QueueStatus};

/// The waiting-room page: no external assets; it reads its event id from its own URL.
const PAGE: &str = include_str!("waiting_room.html");

/// `POST /queue/{eventId}/enter`: joins the line (idempotent), answers `QueueStatus`.
pub async fn enter(env: &Env, event_id: &str, caller: &AccessClaims) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    let placement = room(env, event_id, caller)
        .enter()
        .await
        .map_err(soft_unavailable)?;
    status_response(event_id, placement)
}

/// `GET /queue/{eventId}/status` (and `GET /queue/{eventId}` asking for JSON).
pub async fn status(
    env: &Env,
    event_id: &str,
    caller: &AccessClaims,
) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    match room(env, event_id, caller)
        .status()
        .await
        .map_err(soft_unavailable)?
    {
        Some(placement) => status_response(event_id, placement),
        None => Err(ApiError::new(
            404,
            "NOT_IN_QUEUE",
            "you are not in this queue",
        )),
    }
}

/// `POST /queue/{eventId}/leave`: 204 whether or not the user was in the line.
pub async fn leave(env: &Env, event_id: &str, caller: &AccessClaims) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    room(env, event_id, caller)
        .leave()
        .await
        .map_err(soft_unavailable)?;
    Ok(Response::empty()?.with_status(204))
}

/// `GET /queue/{eventId}` with `Accept: text/html`.
pub fn page(event_id: &str) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    let response = Response::from_html(PAGE)?;
    response.headers().set("cache-control", "no-store")?;
    response.headers().set("content-security-policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")?;
    Ok(response)
}

fn room<'a>(env: &'a Env, event_id: &'a str, caller: &'a AccessClaims) -> WaitingRoomClient<'a> {
    WaitingRoomClient::new(env, event_id, &caller.sub)
}

fn status_response(event_id: &str, placement: Placement) -> Result<Response, ApiError> {
    Ok(Response::from_json(&QueueStatus {
        event_id,
        placement,
    })?)
}

fn soft_unavailable(err: ObjectUnavailable) -> ApiError {
    worker::console_error!("{err}");
    ApiError::new(
        503,
        "QUEUE_UNAVAILABLE",
        "the queue cannot answer right now; your place is kept — poll again shortly",
    )
    .with_header("retry-after", "2")
}
