//! A gated confirm that carries its `Queue-Ticket`, refused from the isolate's copy of the
//! room's snapshot — at most a second old — when that copy shows the ticket's place
//! waiting, with no pass: 429 `QUEUE_PASS_REQUIRED` with `Retry-After: 1`, before any
//! object is called (the caller's session included: a refusal needs no denylist).
//!
//! Only a place the copy shows *waiting* is refused. A place it shows admitted, or no
//! longer in the line — the buyer whose approval spent the pass, retrying a lost answer —
//! goes to the room as before, so a paid retry is still replayed. Without a fresh copy
//! of the room's snapshot or of the event directory, the room decides, as before.

use rules::queue::ticket;
use rules::token::AccessClaims;

use super::input::ConfirmInput;
use crate::config::EdgeConfig;
use crate::directory;
use crate::error::ApiError;
use crate::memory;
use crate::queue::snapshots;

/// Refuses the confirm `input` of `caller` when its `ticket` holds a place this isolate's
/// snapshot shows waiting in a gated event's line at `now_ms`.
pub fn refuse_waiting(
    config: &EdgeConfig,
    caller: &AccessClaims,
    ticket: &str,
    input: &ConfirmInput,
    now_ms: i64,
) -> Result<(), ApiError> {
    let Some(event_id) = input.confirm.event_id.as_deref() else {
        return Ok(());
    };
    let by_default = config.gated_events.contains(event_id);
    if directory::client::gated_from_memory(event_id, by_default, now_ms) != Some(true) {
        return Ok(());
    }
    let now_secs = now_ms.div_euclid(1000);
    let Ok(held) = ticket::verify(&config.ticket_key, ticket, event_id, &caller.sub, now_secs)
    else {
        return Ok(());
    };
    let Some(snapshot) = snapshots::kept(event_id, now_ms) else {
        return Ok(());
    };
    let waiting = snapshot.room == held.room
        && snapshot
            .place(held.seq)
            .is_some_and(|place| !place.admitted);
    if !waiting {
        return Ok(());
    }
    memory::count_refused();
    Err(ApiError::new(
        429,
        "QUEUE_PASS_REQUIRED",
        "this event needs an admission pass: your place is still waiting for its turn",
    )
    .with_header("retry-after", "1"))
}
