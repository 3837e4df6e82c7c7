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
//! Like a ticket poll, it may be the one request a second that fetches the copy.

use rules::queue::ticket;
use rules::token::AccessClaims;
use worker::Env;

use super::{is_gated, ConfirmInput};
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::memory;
use crate::queue::protocol::{LineState, Placement};
use crate::queue::snapshots;

/// Refuses `input` when its ticket holds a place in a gated event's line that this
/// isolate's snapshot shows waiting at `now_ms`. Anything it cannot tell — no ticket, a
/// ticket not the caller's, an event not gated, no copy of the snapshot — lets the
/// confirm go on, to be judged by the room as before.
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
    let now_secs = now_ms.div_euclid(1000);
    let Ok(held) = ticket::verify(&config.ticket_key, ticket, event_id, &caller.sub, now_secs)
    else {
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
    let Some(place) = snapshot.place_held(held).filter(|place| !place.admitted) else {
        return Ok(());
    };
    let line = LineState::of(&snapshot);
    let placement = Placement::of(place.position, false, None, line, snapshot.as_of);
    memory::count_refused();
    Err(waiting(&input.confirm.order_id, &placement))
}

/// The refusal of a confirm whose place still waits: when to ask again, and where a paid
/// order's outcome is read.
fn waiting(order_id: &str, placement: &Placement) -> ApiError {
    let outcome = format!("/payments/{order_id}");
    ApiError::new(
        429,
        "QUEUE_PASS_REQUIRED",
        format!(
            "your place in the line is still waiting for its turn; \
             an order already paid is read at GET {outcome}"
        ),
    )
    // Not before the place's next poll: its turn comes no sooner than that tells it.
    .with_header(
        "retry-after",
        placement.poll_after_seconds.max(1).to_string(),
    )
    .with_field("position", placement.position.into())
    .with_field("payment", outcome.into())
}
