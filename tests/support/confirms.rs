//! Confirms as a burst of browsers makes them, straight to the origin: paced over one
//! or more instances, each order under its own key, and again after a crash as its
//! client would, until the origin makes its payment.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;

use super::System;

/// The key each order's confirm is made under.
pub fn key_of(order_id: &str) -> String {
    format!("key-{order_id}")
}

/// Whether an answer made a payment: 201 or 202 (a 409 sold out or a 503 shed made none).
fn made_a_payment(answer: &reqwest::Result<reqwest::Response>) -> bool {
    answer
        .as_ref()
        .is_ok_and(|answer| matches!(answer.status(), StatusCode::CREATED | StatusCode::ACCEPTED))
}

/// Confirms `orders` at `targets` in turn, the n-th `n × gap` after the start, each as
/// user-1 under [`key_of`] with the body `body(order)`, counting in `answered` each
/// the origin answered with a payment. Those orders.
pub async fn paced(
    system: &System,
    orders: &[String],
    targets: &[String],
    gap: Duration,
    body: &(dyn Fn(&str) -> String + Sync),
    answered: &AtomicUsize,
) -> BTreeSet<String> {
    let made = futures_util::future::join_all(orders.iter().enumerate().map(|(n, order_id)| {
        let target = &targets[n % targets.len()];
        async move {
            tokio::time::sleep(gap * n as u32).await;
            let answer = system
                .try_confirm_at(target, "user-1", Some(&key_of(order_id)), &body(order_id))
                .await;
            let made = made_a_payment(&answer);
            if made {
                answered.fetch_add(1, Ordering::SeqCst);
            }
            made.then(|| order_id.clone())
        }
    }))
    .await;
    made.into_iter().flatten().collect()
}

/// Confirms each of `orders` at `target` as its client would after a crash, under the
/// key it used before, until the origin answers with a payment: through a key still
/// held by the killed process's request (409 `IDEMPOTENCY_IN_FLIGHT` until its lease
/// runs out, after `Retry-After`) and through shedding. Panics naming the orders
/// without a payment after `within`.
pub async fn until_made(
    system: &System,
    target: &str,
    orders: &[String],
    body: &(dyn Fn(&str) -> String + Sync),
    within: Duration,
) {
    let deadline = Instant::now() + within;
    let unmade = futures_util::future::join_all(orders.iter().map(|order_id| async move {
        loop {
            let answer = system
                .try_confirm_at(target, "user-1", Some(&key_of(order_id)), &body(order_id))
                .await;
            if made_a_payment(&answer) {
                return None;
            }
            let last = match &answer {
                Ok(answer) => format!("{} {:?}", answer.status(), answer.headers()),
                Err(err) => err.to_string(),
            };
            if Instant::now() >= deadline {
                return Some(format!("{order_id}: {last}"));
            }
            let wait = answer
                .ok()
                .and_then(|answer| {
                    answer
                        .headers()
                        .get("retry-after")?
                        .to_str()
                        .ok()?
                        .parse()
                        .ok()
                })
                .map_or(Duration::from_millis(500), Duration::from_secs);
            tokio::time::sleep(wait).await;
        }
    }))
    .await;
    let unmade: Vec<String> = unmade.into_iter().flatten().collect();
    assert!(
        unmade.is_empty(),
        "{} confirms made no payment within {within:?}: {unmade:?}",
        unmade.len()
    );
}
