//! A gated confirm that carries its `Queue-Ticket` is judged from the isolate's copy of
//! the room's snapshot — at most a second old, the copy ticket polls read — before the
//! caller's session is asked: when that copy shows the ticket's place waiting, there is
//! no pass to claim, and the confirm is refused here, 429 `QUEUE_PASS_REQUIRED` with
//! `Retry-After` (when the place's poll would ask again), with no call to the session,
//! the room or the origin. A line of a million people retrying their confirms costs the
//! edge about what their polls cost, and the origin nothing. A buyer who paid and came
//! back to the line reads the paid order at `GET /payments/{orderId}`, which the body
//! names; a confirm with no ticket, or one whose place the copy shows admitted or gone,
//! goes on to the room and the origin as before (a spent pass's retry is replayed there).
//!
//! Two moments, one judgement ([`waiting_place`]):
//! - **Before the body is read** ([`refuse_waiting_unread`]): a ticket names its room,
//!   and a copy this isolate keeps names the room's event — the ticket is verified
//!   against that event. Reading the body is most of what such a refusal would cost
//!   otherwise (`docs/edge-refusals.md`). A ticket is its own event's: one sent with
//!   another event's confirm is judged as its own event's.
//! - **After** ([`refuse_waiting`]), when no copy was kept: against the body's event, and
//!   the copy fetched as a ticket poll would (it may be the one request a second that
//!   fetches it).

use rules::queue::snapshot::Snapshot;
use rules::queue::ticket;
use rules::token::AccessClaims;
use worker::{Env, Headers};

use super::{is_gated, ConfirmInput};
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::memory;
use crate::queue::protocol::{LineState, Placement};
use crate::queue::snapshots;
use crate::routes::queue::TICKET_HEADER;

/// Refuses a confirm, before its body is read, whose `Queue-Ticket` holds a place in a
/// gated event's line that a copy this isolate keeps shows waiting. Anything it cannot
/// tell — no ticket, no copy kept of its room, a ticket not the caller's — lets the
/// confirm go on to be read.
pub async fn refuse_waiting_unread(
    env: &Env,
    config: &EdgeConfig,
    caller: &AccessClaims,
    headers: &Headers,
    now_ms: i64,
) -> Result<(), ApiError> {
    let Ok(Some(ticket)) = headers.get(TICKET_HEADER) else {
        return Ok(());
    };
    let Some(room) = ticket::room(&ticket) else {
        return Ok(());
    };
    let Some((event_id, snapshot)) = snapshots::kept_for_room(room, now_ms) else {
        return Ok(());
    };
    let Some(held) = verified(config, caller, &ticket, &event_id, now_ms) else {
        return Ok(());
    };
    let Some(placement) = waiting_place(&snapshot, held) else {
        return Ok(());
    };
    match is_gated(env, config, &event_id, now_ms).await {
        Ok(true) => Err(refused(&placement)),
        _ => Ok(()),
    }
}

/// Refuses `input` when its ticket holds a place in a gated event's line that this
/// isolate's snapshot shows waiting at `now_ms`. Anything it cannot tell — no ticket, a
/// ticket not the caller's, an event not gated, no copy of the snapshot — lets the
/// confirm go on, to be judged by the room as before. The ticket is verified before
/// anything is fetched: a made-up one fetches no copy of the room.
pub async fn refuse_waiting(
    env: &Env,
    config: &EdgeConfig,
    caller: &AccessClaims,
    input: &ConfirmInput,
    now_ms: i64,
) -> Result<(), ApiError> {
    let (Some(ticket), Some(event_id)) = (&input.ticket, input.confirm.event_id.as_deref()) else {
        return Ok(());
    };
    let Some(held) = verified(config, caller, ticket, event_id, now_ms) else {
        return Ok(());
    };
    if !is_gated(env, config, event_id, now_ms)
        .await
        .unwrap_or(false)
    {
        return Ok(());
    }
    let Ok(snapshot) = snapshots::of(env, event_id, now_ms).await else {
        return Ok(());
    };
    match waiting_place(&snapshot, held) {
        Some(placement) => Err(refused(&placement)),
        None => Ok(()),
    }
}

/// The place `ticket` holds, if it is the caller's for `event_id` and still honoured.
fn verified(
    config: &EdgeConfig,
    caller: &AccessClaims,
    ticket: &str,
    event_id: &str,
    now_ms: i64,
) -> Option<ticket::Held> {
    let now_secs = now_ms.div_euclid(1000);
    ticket::verify(&config.ticket_key, ticket, event_id, &caller.sub, now_secs).ok()
}

/// Where `held` stands in `snapshot`'s line, if it waits there.
fn waiting_place(snapshot: &Snapshot, held: ticket::Held) -> Option<Placement> {
    let place = snapshot.place_held(held).filter(|place| !place.admitted)?;
    let line = LineState::of(snapshot);
    Some(Placement::of(
        place.position,
        false,
        None,
        line,
        snapshot.as_of,
    ))
}

/// Where a buyer reads an order's outcome: the confirm's own order, which the refusal
/// before the body is read does not know, so it is named by the route's pattern.
const PAYMENT: &str = "/payments/{orderId}";

/// The refusal of a confirm whose place still waits: when to ask again, and where a paid
/// order's outcome is read.
fn refused(placement: &Placement) -> ApiError {
    memory::count_refused();
    ApiError::new(
        429,
        "QUEUE_PASS_REQUIRED",
        format!(
            "your place in the line is still waiting for its turn; \
             an order already paid is read at GET {PAYMENT}"
        ),
    )
    // Not before the place's next poll: its turn comes no sooner than that tells it.
    .with_header(
        "retry-after",
        placement.poll_after_seconds.max(1).to_string(),
    )
    .with_field("position", placement.position.into())
    .with_field("payment", PAYMENT.into())
}
