//! The capacity on paused time: each simulated confirm holds its slot as long as its
//! processing takes, and the tests read when each was done.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::*;

const HOLD: Duration = Duration::from_millis(200);

fn capped(slots: u32, line: u32) -> Capacity {
    let capacity = Capacity::default();
    capacity.set(Some(limits(slots, line)));
    capacity
}

fn limits(slots: u32, line: u32) -> Limits {
    Limits {
        slots: NonZeroU32::new(slots).expect("a test cap is at least 1"),
        line,
    }
}

/// A confirm let in now, in arrival order: it waits for its slot, holds it for `hold`,
/// and reports the milliseconds since `start` when it was done.
fn confirm(capacity: &Capacity, start: Instant, hold: Duration) -> JoinHandle<u128> {
    let queued = capacity.arrive().expect("a place");
    tokio::spawn(async move {
        let slot = queued.slot().await;
        tokio::time::sleep(hold).await;
        drop(slot);
        start.elapsed().as_millis()
    })
}

async fn done_at(confirms: Vec<JoinHandle<u128>>) -> Vec<u128> {
    let mut times = Vec::new();
    for confirm in confirms {
        times.push(confirm.await.expect("the confirm did not panic"));
    }
    times
}

/// Lets the spawned confirms run up to where they wait, without moving the clock.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

fn load(processing: usize, waiting: usize, refused: u64) -> Load {
    Load {
        processing,
        waiting,
        refused,
        served: 0,
        service_p95_ms: None,
    }
}

#[tokio::test(start_paused = true)]
async fn latency_grows_with_load() {
    let capacity = capped(2, 10);
    let start = Instant::now();
    let confirms = (0..6).map(|_| confirm(&capacity, start, HOLD)).collect();
    assert_eq!(done_at(confirms).await, [200, 200, 400, 400, 600, 600]);
    assert_eq!(capacity.load(), load(0, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_full_line_refuses_at_once_and_counts_it() {
    let capacity = capped(1, 2);
    let start = Instant::now();
    let confirms: Vec<_> = (0..3).map(|_| confirm(&capacity, start, HOLD)).collect();
    assert_eq!(capacity.load(), load(1, 2, 0));

    let refused = capacity.arrive().err();
    assert_eq!(
        refused,
        Some(LineFull {
            limits: limits(1, 2)
        })
    );
    assert_eq!(start.elapsed(), Duration::ZERO, "refused without waiting");
    assert_eq!(capacity.load(), load(1, 2, 1));
    assert_eq!(done_at(confirms).await, [200, 400, 600]);
}

#[tokio::test(start_paused = true)]
async fn no_line_refuses_whenever_every_slot_is_busy() {
    let capacity = capped(1, 0);
    let start = Instant::now();
    let first = confirm(&capacity, start, HOLD);
    assert!(capacity.arrive().is_err());
    assert_eq!(done_at(vec![first]).await, [200]);
    assert!(capacity.arrive().is_ok(), "a slot is free again");
}

#[tokio::test(start_paused = true)]
async fn the_line_is_first_come_first_served() {
    let capacity = capped(1, 10);
    let start = Instant::now();
    // Each holds its slot a different time, so the finishing times give the order.
    let holds = [300, 100, 200, 50, 150];
    let confirms = holds
        .iter()
        .map(|&ms| confirm(&capacity, start, Duration::from_millis(ms)))
        .collect();
    assert_eq!(done_at(confirms).await, [300, 400, 600, 650, 800]);
}

#[tokio::test(start_paused = true)]
async fn a_raised_cap_hands_slots_to_the_line_at_once() {
    let capacity = capped(1, 10);
    let start = Instant::now();
    let confirms: Vec<_> = (0..4).map(|_| confirm(&capacity, start, HOLD)).collect();
    settle().await;
    assert_eq!(capacity.load(), load(1, 3, 0));

    capacity.set(Some(limits(3, 10)));
    assert_eq!(capacity.load(), load(3, 1, 0));
    assert_eq!(done_at(confirms).await, [200, 200, 200, 400]);
}

#[tokio::test(start_paused = true)]
async fn a_lowered_cap_hands_no_slot_until_enough_are_back_and_strands_nobody() {
    let capacity = capped(3, 10);
    let start = Instant::now();
    let confirms: Vec<_> = (0..5).map(|_| confirm(&capacity, start, HOLD)).collect();
    settle().await;
    capacity.set(Some(limits(1, 10)));
    assert_eq!(capacity.load(), load(3, 2, 0));
    // The three at 200 ms leave one slot under the new cap; the two waiting take it in
    // turn.
    assert_eq!(done_at(confirms).await, [200, 200, 200, 400, 600]);
}

#[tokio::test(start_paused = true)]
async fn removing_the_cap_lets_the_whole_line_in() {
    let capacity = capped(1, 10);
    let start = Instant::now();
    let confirms: Vec<_> = (0..4).map(|_| confirm(&capacity, start, HOLD)).collect();
    settle().await;
    capacity.set(None);
    assert_eq!(capacity.load(), load(4, 0, 0));
    assert_eq!(done_at(confirms).await, [200, 200, 200, 200]);
}

#[tokio::test(start_paused = true)]
async fn a_shorter_line_refuses_newcomers_and_keeps_who_is_in_it() {
    let capacity = capped(1, 3);
    let start = Instant::now();
    let confirms: Vec<_> = (0..4).map(|_| confirm(&capacity, start, HOLD)).collect();
    capacity.set(Some(limits(1, 1)));
    assert!(capacity.arrive().is_err());
    assert_eq!(capacity.load(), load(1, 3, 1));
    assert_eq!(done_at(confirms).await, [200, 400, 600, 800]);
}

#[tokio::test(start_paused = true)]
async fn a_cap_set_while_uncapped_confirms_run_counts_them() {
    let capacity = Capacity::default();
    let start = Instant::now();
    let running: Vec<_> = (0..2).map(|_| confirm(&capacity, start, HOLD)).collect();
    settle().await;
    capacity.set(Some(limits(1, 10)));
    let next = confirm(&capacity, start, HOLD);
    assert_eq!(capacity.load(), load(2, 1, 0));
    assert_eq!(done_at(running).await, [200, 200]);
    assert_eq!(done_at(vec![next]).await, [400]);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_that_leaves_gives_its_place_up() {
    let capacity = capped(1, 1);
    let start = Instant::now();
    let holder = confirm(&capacity, start, HOLD);
    let leaving = capacity.arrive().expect("a place");
    let gave_up = tokio::time::timeout(Duration::from_millis(50), leaving.slot()).await;
    assert!(gave_up.is_err(), "no slot within 50 ms");
    assert_eq!(capacity.load(), load(1, 0, 0));

    let next = confirm(&capacity, start, HOLD);
    assert_eq!(done_at(vec![holder, next]).await, [200, 400]);
}

#[tokio::test(start_paused = true)]
async fn a_slot_handed_to_a_waiter_as_it_leaves_goes_to_the_next() {
    let capacity = capped(1, 2);
    let held = capacity.arrive().expect("a slot").slot().await;
    let leaving = capacity.arrive().expect("a place");
    let next = capacity.arrive().expect("a place");
    drop(held);
    assert_eq!(capacity.load(), load(1, 1, 0), "handed to the first waiter");
    drop(leaving);
    assert_eq!(capacity.load(), load(1, 0, 0), "and on to the next");
    let slot = tokio::time::timeout(Duration::ZERO, next.slot()).await;
    assert!(slot.is_ok(), "the next holds it already");
}

#[tokio::test]
async fn the_service_time_is_the_slot_held_without_the_line() {
    let capacity = capped(1, 30);
    assert_eq!(capacity.load().service_p95_ms, None);
    for ms in (1..=20).rev() {
        let slot = capacity.arrive().expect("a place").slot().await;
        slot.served(Duration::from_millis(ms));
    }
    let load = capacity.load();
    assert_eq!((load.served, load.service_p95_ms), (20, Some(19)));
    assert_eq!(
        (load.processing, load.waiting),
        (0, 0),
        "each slot given back"
    );
}
