//! The Worker's copy of each room's snapshot (`rules::queue::snapshot`), kept in the
//! isolate's memory for at most [`FRESH_FOR_MS`]: however many people poll, a room is
//! asked for its line at most once a second per isolate. Every answer read from a copy
//! says which moment it is exact at (`asOf`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rules::expiring::ExpiringMap;
use rules::queue::snapshot::Snapshot;
use worker::Env;

use super::client;
use crate::durable_call::ObjectUnavailable;

/// How long a copy is used before the room is asked again.
pub const FRESH_FOR_MS: i64 = 1_000;
/// Rooms whose copies one isolate keeps at most.
const ROOMS: usize = 256;

thread_local! {
    static COPIES: RefCell<ExpiringMap<Rc<Snapshot>>> = RefCell::new(ExpiringMap::new(ROOMS));
    static FETCHED: Cell<u64> = const { Cell::new(0) };
    static READ: Cell<u64> = const { Cell::new(0) };
}

/// The snapshot of `event_id`'s room, at most [`FRESH_FOR_MS`] old at `now_ms`.
pub async fn of(env: &Env, event_id: &str, now_ms: i64) -> Result<Rc<Snapshot>, ObjectUnavailable> {
    READ.with(|read| read.set(read.get() + 1));
    let kept = COPIES.with(|copies| {
        copies
            .borrow_mut()
            .get_mut(event_id, now_ms)
            .map(|(copy, _)| copy.clone())
    });
    if let Some(copy) = kept {
        return Ok(copy);
    }
    let bytes = client::snapshot(env, event_id).await?;
    let copy = Rc::new(Snapshot::decode(&bytes).ok_or_else(|| ObjectUnavailable {
        binding: client::BINDING,
        cause: format!("a snapshot that does not decode ({} bytes)", bytes.len()),
    })?);
    FETCHED.with(|fetched| fetched.set(fetched.get() + 1));
    COPIES.with(|copies| {
        copies.borrow_mut().upsert(
            event_id,
            copy.clone(),
            now_ms + FRESH_FOR_MS,
            now_ms,
            |old, new| *old = new,
        )
    });
    Ok(copy)
}

/// Snapshots this isolate has read, and of those how many it asked a room for, since it
/// started (`/healthz` shows both).
pub fn counts() -> (u64, u64) {
    (READ.with(Cell::get), FETCHED.with(Cell::get))
}
