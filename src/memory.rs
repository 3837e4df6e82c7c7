//! What this isolate remembers between requests, so that a refusal it can already
//! predict costs no object call:
//!
//! - **Full windows.** When an object answers that a window is full, it also says until
//!   when (`retry_after_ms`): admissions only ever enter a window, and leave it only with
//!   time or a release, so until then the object would refuse the same key again.
//!   Requests for that key are refused here, with the same 429, its `Retry-After` and
//!   `RateLimit` counting down.
//! - **Admissions owed back.** A request the user's window admitted and a later window
//!   refused is taken back from the user's window with the user's next session call from
//!   this isolate, instead of with a call of its own.
//! - **Rooms told they are sold out.** The mark is one-way and stored by the room, so
//!   once it has been told, later `SOLD_OUT` answers need not tell it again.
//!
//! Memory can only refuse, never admit, so no limit is ever exceeded through it. What it
//! may get wrong is in ARCHITECTURE.md ("Refusals from memory"). The maps are bounded:
//! entries expire when they stop meaning anything, and past [`CAPACITY`] live entries a
//! new one is not remembered (the request then costs the calls it would without memory).

use std::cell::{Cell, RefCell};

use rules::expiring::ExpiringMap;
use serde::{Deserialize, Serialize};

/// Live entries each map holds at most, per isolate.
pub const CAPACITY: usize = 10_000;

/// How long a room told it is sold out is not told again by this isolate.
const TOLD_FOR_MS: i64 = 10 * 60 * 1000;

/// An admission to take back from a user's window: the request was refused later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    pub key: String,
    pub at_ms: i64,
}

thread_local! {
    static FULL: RefCell<ExpiringMap<()>> = RefCell::new(ExpiringMap::new(CAPACITY));
    static OWED: RefCell<ExpiringMap<Vec<Release>>> = RefCell::new(ExpiringMap::new(CAPACITY));
    static TOLD: RefCell<ExpiringMap<()>> = RefCell::new(ExpiringMap::new(CAPACITY));
    static REFUSED: Cell<u64> = const { Cell::new(0) };
}

/// How long the window `key` is still known to be full at `now_ms`; counts the refusal.
pub fn refusing(key: &str, now_ms: i64) -> Option<i64> {
    let until = FULL.with(|full| full.borrow_mut().get_mut(key, now_ms).map(|(_, at)| at))?;
    REFUSED.with(|count| count.set(count.get() + 1));
    Some(until - now_ms)
}

/// The window `key` refuses every request until `until_ms`.
pub fn remember_full(key: &str, until_ms: i64, now_ms: i64) {
    FULL.with(|full| {
        full.borrow_mut()
            .upsert(key, (), until_ms, now_ms, |_, _| {})
    });
}

/// `user`'s window owes `release`, which means nothing once it has left the window
/// anyway, at `expires_at`.
pub fn owe(user: &str, release: Release, expires_at: i64, now_ms: i64) {
    OWED.with(|owed| {
        owed.borrow_mut()
            .upsert(user, vec![release], expires_at, now_ms, |old, new| {
                old.extend(new);
            })
    });
}

/// Everything `user`'s window is owed, to send with the user's next session call.
pub fn owed(user: &str, now_ms: i64) -> Vec<Release> {
    OWED.with(|owed| owed.borrow_mut().take(user, now_ms))
        .unwrap_or_default()
}

/// Whether this isolate has told the room of `event_id` that it is sold out.
pub fn told_sold_out(event_id: &str, now_ms: i64) -> bool {
    TOLD.with(|told| told.borrow_mut().get_mut(event_id, now_ms).is_some())
}

/// The room of `event_id` has stored that it is sold out.
pub fn remember_told_sold_out(event_id: &str, now_ms: i64) {
    TOLD.with(|told| {
        told.borrow_mut()
            .upsert(event_id, (), now_ms + TOLD_FOR_MS, now_ms, |_, _| {})
    });
}

/// Requests this isolate refused from memory since it started (`/healthz` shows it).
pub fn refused_count() -> u64 {
    REFUSED.with(Cell::get)
}
