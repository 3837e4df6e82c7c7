//! The Worker's copy of each room's snapshot (`rules::queue::snapshot`), kept in the
//! isolate's memory until it is [`FRESH_FOR_MS`] old, and shared with the data centre's
//! other isolates through the Cache API (`shared_snapshots`): however many people poll,
//! a room is asked for its line at most once a second per data centre where the cache
//! is, per isolate where it is not. Every answer read from a copy says which moment it
//! is exact at (`asOf`), and no copy is used past a second after it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rules::expiring::ExpiringMap;
use rules::queue::snapshot::Snapshot;
use worker::Env;

use super::{client, shared_snapshots};
use crate::durable_call::ObjectUnavailable;

/// How long after the moment it is exact at a copy is used.
pub const FRESH_FOR_MS: i64 = 1_000;
/// Rooms whose copies one isolate keeps at most.
const ROOMS: usize = 256;

thread_local! {
    static COPIES: RefCell<ExpiringMap<Rc<Snapshot>>> = RefCell::new(ExpiringMap::new(ROOMS));
    static FETCHED: Cell<u64> = const { Cell::new(0) };
    static SHARED: Cell<u64> = const { Cell::new(0) };
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
    let copy = match shared_snapshots::read(event_id, now_ms, FRESH_FOR_MS).await {
        Some(copy) => {
            SHARED.with(|shared| shared.set(shared.get() + 1));
            Rc::new(copy)
        }
        None => {
            let bytes = client::snapshot(env, event_id).await?;
            let copy = Snapshot::decode(&bytes).ok_or_else(|| ObjectUnavailable {
                binding: client::BINDING,
                cause: format!("a snapshot that does not decode ({} bytes)", bytes.len()),
            })?;
            FETCHED.with(|fetched| fetched.set(fetched.get() + 1));
            shared_snapshots::write(event_id, &bytes).await;
            Rc::new(copy)
        }
    };
    // A room whose clock runs ahead of the isolate's gives it no longer.
    let fresh_until = copy.as_of.min(now_ms) + FRESH_FOR_MS;
    COPIES.with(|copies| {
        copies
            .borrow_mut()
            .upsert(event_id, copy.clone(), fresh_until, now_ms, |old, new| {
                *old = new
            })
    });
    Ok(copy)
}

/// What this isolate's snapshots came from since it started (`/healthz` shows it).
pub struct Counts {
    /// Snapshots read, wherever they came from.
    pub read: u64,
    /// Of those, how many this isolate asked a room for.
    pub fetched: u64,
    /// And how many it found in the data centre's cache.
    pub shared: u64,
}

pub fn counts() -> Counts {
    Counts {
        read: READ.with(Cell::get),
        fetched: FETCHED.with(Cell::get),
        shared: SHARED.with(Cell::get),
    }
}
