//! A gated confirm that carries its `Queue-Ticket`, refused from the isolate's copy of the
//! room's snapshot — at most a second old, the copy ticket polls read — when that copy
//! shows the ticket's place waiting, with no pass: 429 `QUEUE_PASS_REQUIRED` with
//! `Retry-After: 1`, before the caller's session is asked (a refusal needs no denylist)
//! and with no call to the room. Like a ticket poll, it may be the one request a second
//! that fetches the isolate's copies (of the snapshot, of the event directory).
//!
//! Only a place the copy shows *waiting* is refused. A place it shows admitted, or no
//! longer in the line — the buyer whose approval spent the pass, retrying a lost answer —
//! goes to the room as before, so a paid retry is still replayed. Without a copy (the
//! room or the directory cannot answer), the room decides, as before.

use rules::queue::ticket;
use rules::token::AccessClaims;
use worker::Env;

use super::input::ConfirmInput;
use crate::config::EdgeConfig;
use crate::error::ApiError;
use crate::memory;
use crate::queue::snapshots;

/// Refuses the confirm `input` of `caller` when its `ticket` holds a place this isolate's
/// snapshot shows waiting in a gated event's line at `now_ms`.
pub async fn refuse_waiting(
    env: &Env,
    config: &EdgeConfig,
    caller: &AccessClaims,
    ticket: &str,
    input: &ConfirmInput,
    now_ms: i64,
) -> Result<(), ApiError> {
    let Some(event_id) = input.confirm.event_id.as_deref() else {
        return Ok(());
    };
    if !super::is_gated(env, config, event_id, now_ms)
        .await
        .is_ok_and(|gated| gated)
    {
        return Ok(());
    }
    let now_secs = now_ms.div_euclid(1000);
    let Ok(held) = ticket::verify(&config.ticket_key, ticket, event_id, &caller.sub, now_secs)
    else {
        return Ok(());
    };
    let Ok(snapshot) = snapshots::of(env, event_id, now_ms).await else {
        return Ok(());
    };
    let waiting = snapshot
        .place_held(held)
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
