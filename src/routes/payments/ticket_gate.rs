//! A gated confirm that carries its `Queue-Ticket` is judged from the isolate's copy of
//! the room's snapshot — at most a second old, the copy ticket polls read — with no call
//! to the room: when that copy shows the ticket's place waiting, there is no pass to
//! claim, and the confirm goes on as a replay only (`rules::pass`). The origin answers it
//! from what exists — the paid order of a buyer who came back to the line, retried with
//! the new ticket — or creates nothing, and the edge then refuses it: 429
//! `QUEUE_PASS_REQUIRED` with `Retry-After: 1`. Like a ticket poll, it may be the one
//! request a second that fetches the isolate's copy of the snapshot.
//!
//! A place the copy shows admitted, or no longer in the line, goes to the room as
//! before. Without a copy (the room cannot answer), the room decides, as before.

use rules::queue::ticket;
use rules::token::AccessClaims;
use worker::Env;

use crate::config::EdgeConfig;
use crate::queue::snapshots;

/// Whether `caller`'s `ticket` holds a place this isolate's snapshot of `event_id`'s
/// room shows waiting at `now_ms`: no pass to claim.
pub async fn place_waiting(
    env: &Env,
    config: &EdgeConfig,
    caller: &AccessClaims,
    ticket: &str,
    event_id: &str,
    now_ms: i64,
) -> bool {
    let now_secs = now_ms.div_euclid(1000);
    let Ok(held) = ticket::verify(&config.ticket_key, ticket, event_id, &caller.sub, now_secs)
    else {
        return false;
    };
    let Ok(snapshot) = snapshots::of(env, event_id, now_ms).await else {
        return false;
    };
    snapshot
        .place_held(held)
        .is_some_and(|place| !place.admitted)
}
