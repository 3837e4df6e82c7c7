//! What this isolate remembers between requests, so that a refusal it can already
//! predict costs no object call:
//!
//! - **Full windows.** When an object answers that a window is full, it also says until
//!   when (`retry_after_ms`): admissions only ever enter a window, and leave it only with
//!   time or a release, so until then the object would refuse the same key again.
//!   Requests for that key are refused here, with the same 429, its `Retry-After` and
//!   `RateLimit` counting down. Users' windows and the global windows' shards are kept
//!   apart, so a crowd of users with full windows cannot push out the one global entry
//!   that refuses everyone during a spike.
//! - **Admissions owed back.** A request the user's window admitted and a later window
//!   refused is taken back from the user's window with the user's next session call from
//!   this isolate, instead of with a call of its own.
//! - **Rooms told they are sold out.** The mark is one-way and stored by the room, so
//!   once it has been told, later `SOLD_OUT` answers need not tell it again.
//! - **Payments paused.** Once this isolate has told the gated rooms that payments are
//!   paused until a time, it refuses their confirms itself until then, and tells them
//!   again only of a pause that ends later.
//!
//! Memory can only refuse, never admit, so no limit is ever exceeded through it. What it
//! may get wrong is in docs/design/rate-limits.md ("Refusals from memory"). Every map is bounded:
//! entries expire when they stop meaning anything, a map holds a fixed number of live
//! entries, and a user is owed at most [`OWED_PER_USER`] admissions. What does not fit is
//! not remembered: a refusal then costs the calls it would without memory, an admission
//! owed is not given back (the user's window counts it until it leaves on its own).

use std::cell::{Cell, RefCell};

use rules::expiring::ExpiringMap;
use serde::{Deserialize, Serialize};

/// Live entries the users' maps hold at most, per isolate.
pub const CAPACITY: usize = 10_000;
/// Live entries of global-window shards: routes × at most 64 shards.
const GLOBAL_CAPACITY: usize = 1_024;
/// Admissions one user is owed at most; each rides in that user's next session call.
pub const OWED_PER_USER: usize = 16;
/// How long a room told it is sold out is not told again by this isolate.
const TOLD_FOR_MS: i64 = 10 * 60 * 1000;

/// Whose window a key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// A user's window on a route.
    User,
    /// One shard of a route's global window.
    Global,
}

/// An admission to take back from a user's window: the request was refused later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    pub key: String,
    pub at_ms: i64,
}

/// An owed release and when it stops meaning anything (it has left the window).
struct Owed {
    release: Release,
    expires_at: i64,
}

thread_local! {
    static FULL_USERS: RefCell<ExpiringMap<()>> = RefCell::new(ExpiringMap::new(CAPACITY));
    static FULL_GLOBAL: RefCell<ExpiringMap<()>> =
        RefCell::new(ExpiringMap::new(GLOBAL_CAPACITY));
    static OWED: RefCell<ExpiringMap<Vec<Owed>>> = RefCell::new(ExpiringMap::new(CAPACITY));
    static TOLD: RefCell<ExpiringMap<()>> = RefCell::new(ExpiringMap::new(CAPACITY));
    static REFUSED: Cell<u64> = const { Cell::new(0) };
    static PAUSED_UNTIL: Cell<i64> = const { Cell::new(0) };
}

fn full<T>(window: Window, f: impl FnOnce(&mut ExpiringMap<()>) -> T) -> T {
    match window {
        Window::User => FULL_USERS.with(|map| f(&mut map.borrow_mut())),
        Window::Global => FULL_GLOBAL.with(|map| f(&mut map.borrow_mut())),
    }
}

/// How long the window `key` is still known to be full at `now_ms`; counts the refusal.
pub fn refusing(window: Window, key: &str, now_ms: i64) -> Option<i64> {
    let until = full(window, |map| map.get_mut(key, now_ms).map(|(_, at)| at))?;
    count_refused();
    Some(until - now_ms)
}

/// Counts one request refused from this isolate's memory, with no object call.
pub fn count_refused() {
    REFUSED.with(|count| count.set(count.get() + 1));
}

/// The window `key` refuses every request until `until_ms`.
pub fn remember_full(window: Window, key: &str, until_ms: i64, now_ms: i64) {
    full(window, |map| {
        map.upsert(key, (), until_ms, now_ms, |_, _| {})
    });
}

/// `user`'s window owes `release`, which means nothing once it has left the window
/// anyway, at `expires_at`.
pub fn owe(user: &str, release: Release, expires_at: i64, now_ms: i64) {
    let owed = Owed {
        release,
        expires_at,
    };
    OWED.with(|map| {
        map.borrow_mut()
            .upsert(user, vec![owed], expires_at, now_ms, |old, new| {
                old.retain(|owed| owed.expires_at > now_ms);
                let room = OWED_PER_USER.saturating_sub(old.len());
                old.extend(new.into_iter().take(room));
            })
    });
}

/// Everything `user`'s window is still owed, to send with the user's next session call.
/// Taken, not read: if that call fails, the releases are lost and the window stays the
/// stricter — never owed again, since the object may have applied them.
pub fn owed(user: &str, now_ms: i64) -> Vec<Release> {
    let owed = OWED.with(|map| map.borrow_mut().take(user, now_ms));
    owed.unwrap_or_default()
        .into_iter()
        .filter(|owed| owed.expires_at > now_ms)
        .map(|owed| owed.release)
        .collect()
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

/// When the pause this isolate told the gated rooms of ends, if it has not ended at `now_ms`.
pub fn payments_paused_until(now_ms: i64) -> Option<i64> {
    let until = PAUSED_UNTIL.with(Cell::get);
    (until > now_ms).then_some(until)
}

/// The gated rooms were told that payments are paused until `until_ms`.
pub fn remember_told_paused(until_ms: i64) {
    PAUSED_UNTIL.with(|until| until.set(until.get().max(until_ms)));
}

/// Requests this isolate refused from memory since it started (`/healthz` shows it).
pub fn refused_count() -> u64 {
    REFUSED.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(at_ms: i64) -> Release {
        Release {
            key: "POST /payments/confirm".into(),
            at_ms,
        }
    }

    #[test]
    fn a_full_window_refuses_until_its_time_counting_down() {
        remember_full(Window::User, "route\nu1", 1_000, 0);
        assert_eq!(refusing(Window::User, "route\nu1", 0), Some(1_000));
        assert_eq!(refusing(Window::User, "route\nu1", 400), Some(600));
        assert_eq!(refusing(Window::User, "route\nu1", 1_000), None);
        assert_eq!(
            refusing(Window::Global, "route\nu1", 10),
            None,
            "kept apart"
        );
    }

    #[test]
    fn owed_releases_are_taken_once_and_only_while_they_mean_something() {
        owe("u2", release(100), 1_100, 100);
        owe("u2", release(900), 1_900, 900);
        assert_eq!(
            owed("u2", 1_200),
            vec![release(900)],
            "the first left its window"
        );
        assert!(owed("u2", 1_200).is_empty(), "taken, not read");
    }

    #[test]
    fn a_user_is_owed_at_most_a_bounded_number_of_releases() {
        for at in 0..100 {
            owe("u3", release(at), at + 10_000, at);
        }
        let owed = owed("u3", 100);
        assert_eq!(owed.len(), OWED_PER_USER);
        assert_eq!(
            owed[0],
            release(0),
            "the earliest kept, the surplus dropped"
        );
    }

    #[test]
    fn a_pause_told_is_remembered_until_it_ends_and_only_a_later_end_replaces_it() {
        assert_eq!(payments_paused_until(0), None);
        remember_told_paused(5_000);
        remember_told_paused(3_000);
        assert_eq!(payments_paused_until(4_999), Some(5_000));
        assert_eq!(payments_paused_until(5_000), None);
    }

    #[test]
    fn a_room_told_it_is_sold_out_is_not_told_again_for_a_while() {
        assert!(!told_sold_out("drop", 0));
        remember_told_sold_out("drop", 0);
        assert!(told_sold_out("drop", TOLD_FOR_MS - 1));
        assert!(!told_sold_out("drop", TOLD_FOR_MS));
    }
}
