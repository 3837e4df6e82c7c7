//! A confirm of a `paymentKey` no window made (`probe-…`, the origin's confirm probes):
//! refused 404 `NOT_FOUND_PAYMENT` once the fault mode has taken its time; among the
//! calls, as every API request is, but neither received as a confirm nor charged.

use crate::common;

use std::time::Duration;

use common::{confirm_body, Sim};
use serde_json::json;

const PROBE: &str = "probe-0123456789abcdef";

/// Asserts that the simulator received no confirm and charged nobody.
async fn nothing_recorded(sim: &Sim) {
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 0, "{ledger}");
    assert_eq!(ledger["approvals"], json!([]), "{ledger}");
}

#[tokio::test]
async fn a_key_no_window_made_is_not_found_and_charges_nobody() {
    let sim = Sim::new();
    sim.confirm_keyed(PROBE, confirm_body(PROBE, PROBE, 1000))
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    nothing_recorded(&sim).await;
    let calls = sim.ledger().await["calls"].clone();
    assert_eq!(calls[0]["path"], "/v1/payments/confirm", "{calls}");
    // Asked again under the same key: refused again, not replayed from a charge.
    sim.confirm_keyed(PROBE, confirm_body(PROBE, PROBE, 1000))
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    // Any other key the window never issued is still taken as a window's.
    let payment = sim
        .confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    assert_eq!(payment["status"], "DONE");
}

#[tokio::test(start_paused = true)]
async fn a_stalled_confirm_path_stalls_it_like_any_confirm() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 6_000 }))
        .await;
    let started = tokio::time::Instant::now();
    let early = tokio::time::timeout(
        Duration::from_millis(1_000),
        sim.confirm_keyed(PROBE, confirm_body(PROBE, PROBE, 1000)),
    )
    .await;
    assert!(early.is_err(), "answered within the stall: {early:?}");
    sim.confirm_keyed(PROBE, confirm_body(PROBE, PROBE, 1000))
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    assert!(started.elapsed() >= Duration::from_millis(7_000));
    nothing_recorded(&sim).await;
}

#[tokio::test(start_paused = true)]
async fn look_ups_answering_say_nothing_of_it() {
    let sim = Sim::new();
    // The confirm path stalled while look-ups answer: a look-up of an order that cannot
    // exist is answered at once, the confirm probe is not.
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 6_000 }))
        .await;
    sim.get(&format!("/v1/payments/orders/{PROBE}"))
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    let confirm = tokio::time::timeout(
        Duration::from_millis(1_000),
        sim.confirm_keyed(PROBE, confirm_body(PROBE, PROBE, 1000)),
    )
    .await;
    assert!(confirm.is_err(), "{confirm:?}");
}

#[tokio::test]
async fn the_500_modes_answer_it_500() {
    for mode in ["ERROR_500", "ERROR_500_AFTER_PROCESSING"] {
        let sim = Sim::new();
        sim.put_faults(json!({ "mode": mode })).await;
        sim.confirm_keyed(PROBE, confirm_body(PROBE, PROBE, 1000))
            .await
            .assert_error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING");
        nothing_recorded(&sim).await;
    }
}
