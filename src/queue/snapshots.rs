//! The Worker's copy of each room's snapshot (`rules::queue::snapshot`), kept in the
//! isolate's memory until it is [`FRESH_FOR_MS`] old, and shared with the data centre's
//! other isolates through the Cache API (`shared_snapshots`): however many people poll,
//! a room is asked for its line about once a second per data centre where the cache is,
//! per isolate where it is not. Every answer read from a copy says which moment it is
//! exact at (`asOf`), and no copy is used past a second after it.
//!
//! A copy [`REFRESH_AFTER_MS`] old is refreshed by the one poll that finds it first while
//! the others go on reading it, and polls that find no copy while one is being fetched
//! wait a few milliseconds for it: polls arriving together do not each fetch the line.
//! (They cannot await one another's fetch: the runtime cancels a request that waits on
//! I/O another request started; a timer of its own it may wait on.)

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use rules::expiring::ExpiringMap;
use rules::queue::snapshot::Snapshot;
use worker::{Delay, Env};

use super::{client, shared_snapshots};
use crate::clock;
use crate::durable_call::ObjectUnavailable;

/// How long after the moment it is exact at a copy is used.
pub const FRESH_FOR_MS: i64 = 1_000;
/// How old a copy is when the next poll refreshes it.
const REFRESH_AFTER_MS: i64 = 900;
/// How a poll waits for the copy another is fetching: in steps of [`WAIT_STEP`], at most
/// [`WAIT_STEPS`] of them, then it fetches its own.
const WAIT_STEP: Duration = Duration::from_millis(5);
const WAIT_STEPS: u32 = 20;
/// Rooms whose copies one isolate keeps at most.
const ROOMS: usize = 256;

type Copy = Result<Rc<Snapshot>, ObjectUnavailable>;

thread_local! {
    static COPIES: RefCell<ExpiringMap<Rc<Snapshot>>> = RefCell::new(ExpiringMap::new(ROOMS));
    /// Rooms whose copy a poll is fetching, until it is done or a second has passed.
    static FETCHING: RefCell<ExpiringMap<()>> = RefCell::new(ExpiringMap::new(ROOMS));
    static FETCHED: Cell<u64> = const { Cell::new(0) };
    static FAILED: Cell<u64> = const { Cell::new(0) };
    static SHARED: Cell<u64> = const { Cell::new(0) };
    static READ: Cell<u64> = const { Cell::new(0) };
}

/// What a poll does about the room's copy.
#[derive(Debug, PartialEq)]
enum Plan {
    Read,
    Refresh,
    Wait,
    Fetch,
}

/// The plan for a copy used until `fresh_until` (if any is kept), at `now_ms`, when
/// `fetching` says whether another poll is fetching the room's copy already.
fn plan(fresh_until: Option<i64>, now_ms: i64, fetching: bool) -> Plan {
    match fresh_until {
        Some(until) if until > now_ms => {
            let young = until - now_ms > FRESH_FOR_MS - REFRESH_AFTER_MS;
            if young || fetching {
                Plan::Read
            } else {
                Plan::Refresh
            }
        }
        _ if fetching => Plan::Wait,
        _ => Plan::Fetch,
    }
}

/// The snapshot of `event_id`'s room, at most [`FRESH_FOR_MS`] old at `now_ms`.
pub async fn of(env: &Env, event_id: &str, now_ms: i64) -> Copy {
    READ.with(|read| read.set(read.get() + 1));
    let mut now = now_ms;
    for _ in 0..WAIT_STEPS {
        let kept = COPIES.with(|copies| {
            copies
                .borrow_mut()
                .get_mut(event_id, now)
                .map(|(copy, until)| (copy.clone(), until))
        });
        let fetching =
            FETCHING.with(|fetching| fetching.borrow_mut().get_mut(event_id, now).is_some());
        match (
            plan(kept.as_ref().map(|(_, until)| *until), now, fetching),
            kept,
        ) {
            (Plan::Read, Some((copy, _))) => return Ok(copy),
            // A refresh that failed leaves the copy it was to replace, still fresh.
            (Plan::Refresh, Some((copy, _))) => {
                let newer_than = copy.as_of;
                return Ok(fetch(env, event_id, now, newer_than).await.unwrap_or(copy));
            }
            (Plan::Wait, _) => {
                Delay::from(WAIT_STEP).await;
                now = clock::now_ms();
            }
            _ => return fetch(env, event_id, now, i64::MIN).await,
        }
    }
    fetch(env, event_id, now, i64::MIN).await
}

/// The copy this isolate keeps, fresh at `now_ms`, of the room whose identity is `room`,
/// and its event: no fetch, nothing waited for. For a request that names a room (a
/// ticket does) but not its event.
pub fn kept_for_room(room: u64, now_ms: i64) -> Option<(String, Rc<Snapshot>)> {
    let kept = COPIES.with(|copies| {
        copies
            .borrow()
            .live(now_ms)
            .find(|(_, copy)| copy.room == room)
            .map(|(event_id, copy)| (event_id.to_owned(), copy.clone()))
    });
    if kept.is_some() {
        READ.with(|read| read.set(read.get() + 1));
    }
    kept
}

/// A copy newer than `newer_than` from the data centre's cache, else from the room (then
/// shared); kept. Other polls know it is being fetched meanwhile.
async fn fetch(env: &Env, event_id: &str, now_ms: i64, newer_than: i64) -> Copy {
    FETCHING.with(|fetching| {
        fetching
            .borrow_mut()
            .upsert(event_id, (), now_ms + FRESH_FOR_MS, now_ms, |_, _| ())
    });
    let copy = fetch_unmarked(env, event_id, now_ms, newer_than).await;
    FETCHING.with(|fetching| fetching.borrow_mut().take(event_id, now_ms));
    let copy = copy?;
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

async fn fetch_unmarked(env: &Env, event_id: &str, now_ms: i64, newer_than: i64) -> Copy {
    let shared = shared_snapshots::read(event_id, now_ms, REFRESH_AFTER_MS).await;
    match shared.filter(|copy| copy.as_of > newer_than) {
        Some(copy) => {
            SHARED.with(|shared| shared.set(shared.get() + 1));
            Ok(Rc::new(copy))
        }
        None => from_room(env, event_id).await,
    }
}

async fn from_room(env: &Env, event_id: &str) -> Copy {
    let decoded = client::snapshot(env, event_id).await.and_then(|bytes| {
        let copy = Snapshot::decode(&bytes).ok_or_else(|| ObjectUnavailable {
            binding: client::BINDING,
            cause: format!("a snapshot that does not decode ({} bytes)", bytes.len()),
        })?;
        Ok((bytes, copy))
    });
    let (bytes, copy) = decoded.inspect_err(|err| {
        FAILED.with(|failed| failed.set(failed.get() + 1));
        worker::console_warn!("the snapshot of {event_id} was not fetched: {err}");
    })?;
    FETCHED.with(|fetched| fetched.set(fetched.get() + 1));
    shared_snapshots::write(event_id, &bytes).await;
    Ok(Rc::new(copy))
}

/// What this isolate's snapshots came from since it started (`/healthz` shows it).
pub struct Counts {
    /// Snapshots read, wherever they came from.
    pub read: u64,
    /// Of those, how many this isolate asked a room for.
    pub fetched: u64,
    /// Rooms asked for a snapshot that did not come (the call failed, or it did not
    /// decode): each was a room call too.
    pub failed: u64,
    /// And how many it found in the data centre's cache.
    pub shared: u64,
}

pub fn counts() -> Counts {
    Counts {
        read: READ.with(Cell::get),
        fetched: FETCHED.with(Cell::get),
        failed: FAILED.with(Cell::get),
        shared: SHARED.with(Cell::get),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_young_copy_is_read_an_old_one_refreshed_by_one_poll_and_a_missing_one_fetched_by_one() {
        let until = 10_000;
        let now = |age: i64| until - FRESH_FOR_MS + age;
        assert_eq!(plan(Some(until), now(0), false), Plan::Read);
        assert_eq!(
            plan(Some(until), now(REFRESH_AFTER_MS - 1), false),
            Plan::Read
        );
        assert_eq!(
            plan(Some(until), now(REFRESH_AFTER_MS), false),
            Plan::Refresh
        );
        assert_eq!(
            plan(Some(until), now(REFRESH_AFTER_MS), true),
            Plan::Read,
            "another poll refreshes it"
        );
        assert_eq!(plan(Some(until), now(FRESH_FOR_MS), false), Plan::Fetch);
        assert_eq!(plan(None, now(0), false), Plan::Fetch);
        assert_eq!(
            plan(Some(until), now(FRESH_FOR_MS), true),
            Plan::Wait,
            "another poll fetches the copy it lacks"
        );
        assert_eq!(plan(None, now(0), true), Plan::Wait);
    }
}
