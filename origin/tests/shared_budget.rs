//! The PG's call budget in PostgreSQL ([`SharedBudget`]), taken from two stores on one
//! database as two instances would: one limit for both, a slot that counts a window
//! after its call and until its lease if its end is never heard of, and a bucket kept
//! across restarts unless its rate changes. SQLite has none: one instance counts alone.

use crate::support::keys;

use std::sync::Arc;
use std::time::Duration;

use harness::eventually::eventually;
use harness::postgres::TestPostgres;
use origin::store::{self, SharedBudget, Slot};
use rules::sliding_window::Rate;

const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
const MINUTE_MS: i64 = 60_000;

async fn budget(url: &str) -> Arc<dyn SharedBudget> {
    let store = store::open(url, ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    store.shared_budget().expect("PostgreSQL shares the budget")
}

/// Two instances' budgets on one new database, and its server (stopped on drop).
async fn two_instances() -> (Arc<dyn SharedBudget>, Arc<dyn SharedBudget>, TestPostgres) {
    let server = TestPostgres::start();
    let first = budget(server.url()).await;
    let second = budget(server.url()).await;
    (first, second, server)
}

fn rate(limit: u32, window_ms: i64) -> Rate {
    Rate { limit, window_ms }
}

/// Waits until a slot of `guard`'s is free again, and takes it.
async fn eventually_taken(budget: &dyn SharedBudget, guard: &str, rate: Rate) -> Slot {
    eventually(
        "a slot is free again",
        Duration::from_secs(10),
        Duration::from_millis(20),
        || async {
            match budget.take_slot(guard, rate, MINUTE_MS, 9).await.unwrap() {
                Some(slot) => Ok(slot),
                None => Err("every slot still counts".to_owned()),
            }
        },
    )
    .await
}

#[tokio::test]
async fn both_instances_take_from_one_window_and_a_finished_call_counts_a_window_more() {
    let (first, second, _db) = two_instances().await;
    let window = rate(3, MINUTE_MS);
    first.prepare_slots("approve", window).await.unwrap();
    second.prepare_slots("approve", window).await.unwrap();

    let mut taken = Vec::new();
    for (budget, holder) in [(&first, 1), (&second, 2), (&first, 3)] {
        let slot = budget.take_slot("approve", window, MINUTE_MS, holder).await;
        taken.push(slot.unwrap().expect("a free slot"));
    }
    let slots: std::collections::BTreeSet<i32> = taken.iter().map(|s| s.slot).collect();
    assert_eq!(slots.len(), 3, "three distinct slots: {taken:?}");
    for budget in [&first, &second] {
        let over = budget.take_slot("approve", window, MINUTE_MS, 4).await;
        assert_eq!(over.unwrap(), None, "the limit is for both instances");
    }
    // Over, the call still counts for a window after it.
    first
        .finish_slot("approve", taken[0], window.window_ms)
        .await
        .unwrap();
    let over = second.take_slot("approve", window, MINUTE_MS, 5).await;
    assert_eq!(over.unwrap(), None);
    // Another guard's window is its own.
    first
        .prepare_slots("recover", rate(1, MINUTE_MS))
        .await
        .unwrap();
    let other = first
        .take_slot("recover", rate(1, MINUTE_MS), MINUTE_MS, 6)
        .await;
    assert!(other.unwrap().is_some());
}

#[tokio::test]
async fn a_slot_is_free_a_window_after_its_call_or_when_a_dead_holders_lease_ends() {
    let (first, second, _db) = two_instances().await;
    let window = rate(1, 50);
    first.prepare_slots("approve", window).await.unwrap();

    let slot = first
        .take_slot("approve", window, MINUTE_MS, 1)
        .await
        .unwrap();
    first
        .finish_slot("approve", slot.expect("free"), window.window_ms)
        .await
        .unwrap();
    let again = eventually_taken(second.as_ref(), "approve", window).await;
    assert_eq!(again.holder, 9);

    // An instance that died holding a slot: it counts until its lease ends.
    let leased = rate(1, MINUTE_MS);
    first.prepare_slots("leased", leased).await.unwrap();
    let dead = first.take_slot("leased", leased, 50, 1).await.unwrap();
    let dead = dead.expect("free");
    let taken = eventually_taken(second.as_ref(), "leased", leased).await;
    // The dead holder's late finish cannot shorten the new holder's count.
    first.finish_slot("leased", dead, 0).await.unwrap();
    assert_eq!(taken.slot, dead.slot);
    let over = first.take_slot("leased", leased, MINUTE_MS, 2).await;
    assert_eq!(over.unwrap(), None, "still held by the second instance");
}

#[tokio::test]
async fn the_bucket_is_one_for_both_instances_and_starts_again_only_for_a_new_rate() {
    let (first, second, _db) = two_instances().await;
    let bucket = rate(3, 10 * MINUTE_MS);
    first.prepare_bucket("approve", bucket).await.unwrap();
    let mut tokens = Vec::new();
    for budget in [&first, &second, &first, &second] {
        tokens.push(budget.take_token("approve").await.unwrap());
    }
    assert_eq!(tokens, [true, true, true, false]);
    // An instance starting with the same rate finds the bucket as it was.
    second.prepare_bucket("approve", bucket).await.unwrap();
    assert!(!second.take_token("approve").await.unwrap());
    // One with another rate starts it again, full.
    second
        .prepare_bucket("approve", rate(1, 10 * MINUTE_MS))
        .await
        .unwrap();
    assert!(first.take_token("approve").await.unwrap());
    assert!(!first.take_token("approve").await.unwrap());
    // A guard nobody prepared has no tokens.
    assert!(!first.take_token("unprepared").await.unwrap());
}

#[tokio::test]
async fn on_sqlite_each_instance_keeps_its_own_count() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.sqlite3").display());
    let store = store::open(&url, ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    assert!(store.shared_budget().is_none());
}
