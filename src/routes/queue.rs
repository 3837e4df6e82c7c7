//! `/queue/{eventId}/…`: enter, status, leave, and the waiting-room page.
//!
//! Entering answers a ticket (`rules::queue::ticket`); a status poll that carries it in
//! `Queue-Ticket` is answered from the room's snapshot ([`crate::queue::snapshots`])
//! without calling the room — nor the user's session object: reading one's own place
//! needs a valid access token and ticket, not the denylist, which every request that
//! changes anything still checks. A poll without a ticket asks the room, as before.
//!
//! Status polling fails soft: when the room cannot answer, the client is told to poll
//! again later (503 with `Retry-After`), never dropped from the line. The payment gate
//! (see `payments.rs`) never fails open.

use rules::confirm::check_event_id;
use rules::queue::ticket::{self, Held, TicketError};
use rules::token::AccessClaims;
use worker::{Env, Response};

use crate::arrivals::client::user_shard;
use crate::config::EdgeConfig;
use crate::directory;
use crate::durable_call::ObjectUnavailable;
use crate::error::ApiError;
use crate::queue::client::WaitingRoomClient;
use crate::queue::protocol::{LineState, NotOpen, Placement, QueueStatus};
use crate::queue::snapshots;
use crate::rate_limit::EnterWindow;

/// The waiting-room page: no external assets; it reads its event id from its own URL.
const PAGE: &str = include_str!("waiting_room.html");

/// The request header a ticket holder's poll carries its ticket in.
pub const TICKET_HEADER: &str = "queue-ticket";

/// `POST /queue/{eventId}/enter`: joins the line (idempotent), answers `QueueStatus` with
/// the place's ticket.
pub async fn enter(
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    caller: &AccessClaims,
    now_ms: i64,
) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    let entered = room(env, config, event_id, caller)
        .enter()
        .await
        .map_err(soft_unavailable)?;
    if let Some(not_open) = entered.not_open {
        return Err(not_open_yet(not_open));
    }
    let ticket = entered.seq.map(|seq| {
        let held = Held {
            room: entered.room,
            seq,
        };
        let now_secs = now_ms.div_euclid(1000);
        ticket::issue(&config.ticket_key, event_id, &caller.sub, held, now_secs)
    });
    Ok(Response::from_json(&QueueStatus {
        event_id,
        placement: entered.placement,
        ticket,
        as_of: None,
    })?)
}

/// `GET /queue/{eventId}/status` with `Queue-Ticket`: the holder's place, read from the
/// room's snapshot at most a second old — exact as of its `asOf`.
pub async fn status_from_ticket(
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    caller: &AccessClaims,
    ticket: &str,
    now_ms: i64,
) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    let now_secs = now_ms.div_euclid(1000);
    let held = ticket::verify(&config.ticket_key, ticket, event_id, &caller.sub, now_secs)
        .map_err(|err| match err {
            TicketError::Invalid => ApiError::new(
                403,
                "TICKET_INVALID",
                "this queue ticket is not yours for this event; enter again for yours",
            ),
            TicketError::Expired => ApiError::new(
                401,
                "TICKET_EXPIRED",
                "this queue ticket has expired; enter again (your place is kept)",
            ),
        })?;
    let snapshot = snapshots::of(env, event_id, now_ms)
        .await
        .map_err(soft_unavailable)?;
    let place = snapshot.place_held(held).ok_or_else(not_in_queue)?;
    let placement = Placement::of(
        place.position,
        place.admitted,
        place.pass_expires_at,
        LineState::of(&snapshot),
        snapshot.as_of,
    );
    Ok(Response::from_json(&QueueStatus {
        event_id,
        placement,
        ticket: None,
        as_of: Some(snapshot.as_of),
    })?)
}

/// 404 `EVENT_NOT_FOUND` unless someone defined `event_id`: `GATED_EVENTS` names it, or
/// an operator gave it a room (the event directory, read at most once a second). Asked
/// before any room or window is touched, so no state exists for an event nobody defined.
pub async fn check_defined(
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    now_ms: i64,
) -> Result<(), ApiError> {
    check_event_id(event_id)?;
    if config.gated_events.contains(event_id) {
        return Ok(());
    }
    let gating = directory::client::gating(env, now_ms)
        .await
        .map_err(soft_unavailable)?;
    match gating.contains_key(event_id) {
        true => Ok(()),
        false => Err(ApiError::new(
            404,
            "EVENT_NOT_FOUND",
            "no such event: its queue opens once an operator defines it",
        )),
    }
}

/// The window an enter of `event_id` by `user` is counted in: the room's, or for a
/// sharded event the user's arrival shard's. 503 when the directory cannot say (see
/// [`WaitingRoomClient`]).
pub async fn enter_window<'a>(
    env: &Env,
    config: &EdgeConfig,
    event_id: &'a str,
    user: &str,
    now_ms: i64,
) -> Result<EnterWindow<'a>, ApiError> {
    let arrival = user_shard(env, &config.ticket_key, event_id, user, now_ms)
        .await
        .map_err(soft_unavailable)?;
    Ok(EnterWindow { event_id, arrival })
}

/// `GET /queue/{eventId}/status` (and `GET /queue/{eventId}` asking for JSON).
pub async fn status(
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    caller: &AccessClaims,
) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    match room(env, config, event_id, caller)
        .status()
        .await
        .map_err(soft_unavailable)?
    {
        Some(placement) => Ok(Response::from_json(&QueueStatus {
            event_id,
            placement,
            ticket: None,
            as_of: None,
        })?),
        None => Err(not_in_queue()),
    }
}

/// 409 `NOT_OPEN_YET`, with the opening and the prequeue's start (epoch ms).
fn not_open_yet(not_open: NotOpen) -> ApiError {
    let message = match not_open.prequeue_from {
        Some(_) => "this drop's prequeue has not opened yet: enter from prequeueFrom on",
        None => "this drop has not opened yet: enter from opensAt on",
    };
    ApiError::new(409, "NOT_OPEN_YET", message)
        .with_field("opensAt", not_open.opens_at.into())
        .with_field(
            "prequeueFrom",
            not_open
                .prequeue_from
                .map_or(serde_json::Value::Null, Into::into),
        )
}

fn not_in_queue() -> ApiError {
    ApiError::new(404, "NOT_IN_QUEUE", "you are not in this queue")
}

/// `POST /queue/{eventId}/leave`: 204 whether or not the user was in the line.
pub async fn leave(
    env: &Env,
    config: &EdgeConfig,
    event_id: &str,
    caller: &AccessClaims,
) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    room(env, config, event_id, caller)
        .leave()
        .await
        .map_err(soft_unavailable)?;
    Ok(Response::empty()?.with_status(204))
}

/// `GET /queue/{eventId}` with `Accept: text/html`.
pub fn page(event_id: &str) -> Result<Response, ApiError> {
    check_event_id(event_id)?;
    let response = Response::from_html(PAGE)?;
    let headers = response.headers();
    headers.set("cache-control", "no-store")?;
    headers.set("content-security-policy", page_policy())?;
    headers.set("x-frame-options", "DENY")?;
    headers.set("x-content-type-options", "nosniff")?;
    headers.set("referrer-policy", "no-referrer")?;
    Ok(response)
}

/// The page's `Content-Security-Policy` (`rules::csp`): nothing but its own script and
/// style block, and calls to its own origin. Computed once per isolate from the page.
fn page_policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| rules::csp::page_policy(PAGE))
}

fn room<'a>(
    env: &'a Env,
    config: &'a EdgeConfig,
    event_id: &'a str,
    caller: &'a AccessClaims,
) -> WaitingRoomClient<'a> {
    WaitingRoomClient::new(env, &config.ticket_key, event_id, &caller.sub)
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_pages_policy_allows_its_one_script_and_one_style_and_nothing_inline_else() {
        let policy = super::page_policy();
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert_eq!(policy.matches("'sha256-").count(), 2, "{policy}");
    }
}
