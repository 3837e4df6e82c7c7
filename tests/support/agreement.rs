//! Whether the origin and the PG agree after a crash: what the simulator charged, which
//! payments are settled, and the checks that nobody was charged twice or lost.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::System;

/// What the simulator charged, by order: (approved, charges for it).
pub async fn charges(system: &System) -> BTreeMap<String, u64> {
    let ledger = system.ledger().await;
    let mut charges = BTreeMap::new();
    for approval in ledger["approvals"].as_array().expect("approvals") {
        let order_id = approval["orderId"].as_str().expect("an order").to_owned();
        *charges.entry(order_id).or_default() += 1;
    }
    charges
}

/// `Ok` when there are at least `at_least` payments `held` and every one is APPROVED or
/// FAILED; else the unsettled ones.
pub fn settled(held: &BTreeMap<String, Value>, at_least: usize) -> Result<(), String> {
    let unsettled: Vec<_> = held
        .iter()
        .filter(|(_, p)| !(p["status"] == "APPROVED" || p["status"] == "FAILED"))
        .map(|(order_id, p)| format!("{order_id} {}", p["status"]))
        .collect();
    if unsettled.is_empty() && held.len() >= at_least {
        Ok(())
    } else {
        Err(format!("{} held, unsettled {unsettled:?}", held.len()))
    }
}

/// The origin and the PG agree: each order charged at most once, APPROVED here exactly
/// when charged there, and every answered order still here.
pub async fn agree(system: &System, base: &str, orders: &[String], answered: &BTreeSet<String>) {
    let held = system.payments_at(base).await;
    let charged = charges(system).await;
    let mut failed: BTreeMap<&str, usize> = BTreeMap::new();
    for payment in held.values().filter(|p| p["status"] == "FAILED") {
        *failed
            .entry(payment["failureReason"].as_str().unwrap_or("-"))
            .or_default() += 1;
    }
    eprintln!(
        "sent {}, answered with a payment {}, held {}, approved {}, failed by reason {failed:?}",
        orders.len(),
        answered.len(),
        held.len(),
        charged.len()
    );
    for (order_id, times) in &charged {
        assert_eq!(*times, 1, "{order_id} charged {times} times");
        assert_eq!(
            held[order_id]["status"], "APPROVED",
            "{order_id} charged but not APPROVED here"
        );
    }
    for (order_id, payment) in &held {
        let approved_here = payment["status"] == "APPROVED";
        assert_eq!(
            approved_here,
            charged.contains_key(order_id),
            "{order_id}: {payment}"
        );
    }
    for order_id in answered {
        assert!(
            held.contains_key(order_id),
            "{order_id} was answered but is lost"
        );
    }
}
