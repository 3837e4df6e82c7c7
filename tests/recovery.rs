//! Recovery, callbacks and crash safety, with the origin and the simulator as real
//! processes: every payment ends as the PG says, none is charged twice, none is lost.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::{now_ms, order_body, Killer, System, CALLBACK_SECRET};

/// Recovery runs only when a test asks; a PG call times out after 300 ms, so NOT_FOUND
/// answers count 600 ms apart.
const MANUAL_RECOVERY: [(&str, &str); 3] = [
    ("GATEWAY_TIMEOUT_MS", "300"),
    ("RECOVERY_INTERVAL_MS", "3600000"),
    ("RECOVERY_MIN_AGE_MS", "1000"),
];

async fn confirm(system: &System, order_id: &str) -> (StatusCode, Value) {
    system.confirm_order(order_id).await
}

async fn run_recovery(system: &System) -> Value {
    system.run_recovery_at(&system.origin).await
}

/// Every payment the origin holds, by order id, as operators list them.
async fn payments(system: &System) -> BTreeMap<String, Value> {
    payments_at(system, &system.origin).await
}

async fn payments_at(system: &System, base: &str) -> BTreeMap<String, Value> {
    let mut all = BTreeMap::new();
    for status in ["PENDING", "APPROVED", "FAILED", "UNKNOWN"] {
        let listed = system
            .operator_get_at(base, &format!("/admin/payments?status={status}&limit=1000"))
            .await;
        for payment in listed["payments"].as_array().expect("a list") {
            let order_id = payment["orderId"].as_str().expect("an order").to_owned();
            all.insert(order_id, payment.clone());
        }
    }
    all
}

#[tokio::test]
async fn an_unknown_payment_converges_to_the_approval_the_pg_recorded() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let (status, payment) = confirm(&system, "o-1").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN"))
    );

    let report = run_recovery(&system).await;
    assert_eq!(
        (report["examined"].as_u64(), report["approved"].as_u64()),
        (Some(1), Some(1))
    );
    let recovered = &payments(&system).await["o-1"];
    let ledger = system.ledger().await;
    assert_eq!(recovered["status"], "APPROVED");
    assert_eq!(
        recovered["approvedAt"],
        ledger["approvals"][0]["approvedAt"]
    );
    assert_eq!(
        run_recovery(&system).await["examined"],
        0,
        "nothing left to do"
    );
}

#[tokio::test]
async fn a_payment_the_pg_never_processed_fails_only_at_the_third_spaced_not_found() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 10_000}))
        .await;
    assert_eq!(confirm(&system, "o-1").await.0, StatusCode::ACCEPTED);

    let mut counted = Vec::new();
    for _ in 0..2 {
        let report = run_recovery(&system).await;
        assert_eq!(report["unresolved"], 1, "{report}");
        assert_eq!(
            run_recovery(&system).await["examined"],
            0,
            "not due again yet"
        );
        let unknown = system.operator_get("/admin/payments?status=UNKNOWN").await;
        counted.push(unknown["payments"][0]["recovery"]["notFoundCount"].clone());
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    assert_eq!(counted, [json!(1), json!(2)]);
    let report = run_recovery(&system).await;
    assert_eq!(report["failed"], 1, "{report}");
    let failed = &payments(&system).await["o-1"];
    assert_eq!(
        (failed["status"].as_str(), failed["failureReason"].as_str()),
        (Some("FAILED"), Some("NOT_FOUND_AT_PG"))
    );
    assert_eq!(system.ledger().await["approvals"], json!([]));
}

#[tokio::test]
async fn a_callback_settles_the_payment_while_the_pg_still_holds_the_answer() {
    let system = System::backend_with_callbacks(&[("GATEWAY_TIMEOUT_MS", "1500")]).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let (status, payment) = confirm(&system, "o-1").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::CREATED, Some("APPROVED"))
    );
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000, "declineRate": 1.0}))
        .await;
    let (status, payment) = confirm(&system, "o-2").await;
    assert_eq!(
        (
            status,
            payment["status"].as_str(),
            payment["failureReason"].as_str()
        ),
        (StatusCode::CREATED, Some("FAILED"), Some("DECLINED"))
    );
    let metrics = system.origin_metrics().await;
    let converged = r#"origin_gateway_callbacks_total{outcome="converged"} 2"#;
    assert!(metrics.contains(converged), "{metrics}");
}

#[tokio::test]
async fn unsigned_forged_or_stale_callbacks_are_refused_and_change_nothing() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 10_000}))
        .await;
    confirm(&system, "o-1").await;
    let body =
        json!({"orderId": "o-1", "status": "APPROVED", "amount": 5000, "approvedAt": now_ms()})
            .to_string();
    let fresh = now_ms();
    let stale = fresh - 10 * 60 * 1000;
    let cases = [
        (None, None),
        (
            Some(fresh),
            Some(rules::callback::sign(
                b"not-the-gateway-secret-0123456789",
                fresh,
                body.as_bytes(),
            )),
        ),
        (
            Some(stale),
            Some(rules::callback::sign(
                CALLBACK_SECRET.as_bytes(),
                stale,
                body.as_bytes(),
            )),
        ),
    ];
    for (timestamp, signature) in cases {
        let mut request = system
            .http
            .post(format!("{}/gateway/callback", system.origin))
            .header("content-type", "application/json")
            .body(body.clone());
        if let (Some(timestamp), Some(signature)) = (timestamp, signature) {
            request = request
                .header(rules::callback::TIMESTAMP_HEADER, timestamp.to_string())
                .header(rules::callback::SIGNATURE_HEADER, signature);
        }
        let response = request.send().await.expect("the origin answers");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let refusal: Value = response.json().await.expect("JSON");
        assert_eq!(refusal["code"], "SIGNATURE_INVALID");
    }
    assert_eq!(payments(&system).await["o-1"]["status"], "UNKNOWN");
}

#[tokio::test]
async fn origin_recover_once_runs_a_cycle_and_reports_it() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    confirm(&system, "o-1").await;
    let printed = system.origin_cli(&["recover", "--once"]);
    let report: Value = serde_json::from_str(&printed).expect("a JSON report");
    assert_eq!(report["approved"], 1, "{printed}");
    assert_eq!(payments(&system).await["o-1"]["status"], "APPROVED");
}

/// What the simulator charged, by order: (approved, charges for it).
async fn charges(system: &System) -> BTreeMap<String, u64> {
    let ledger = system.ledger().await;
    let mut charges = BTreeMap::new();
    for approval in ledger["approvals"].as_array().expect("approvals") {
        let order_id = approval["orderId"].as_str().expect("an order").to_owned();
        *charges.entry(order_id).or_default() += 1;
    }
    charges
}

#[tokio::test]
async fn a_kill_9_during_each_phase_of_the_call_converges_to_the_pgs_truth() {
    let mut system = System::backend(&[
        ("GATEWAY_TIMEOUT_MS", "2000"),
        ("RECOVERY_INTERVAL_MS", "3600000"),
        ("RECOVERY_MIN_AGE_MS", "0"),
    ])
    .await;
    // Approved by the PG, the answer held: the origin dies before its TX 2.
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 30_000}))
        .await;
    let approved_order = order_body("o-approved");
    let approved = system.try_confirm_at_origin("user-1", Some("k-1"), &approved_order);
    // Received by the PG, never processed: the origin dies during the call.
    let held = async {
        wait_for_requests(&system, 1).await;
        system
            .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 30_000}))
            .await;
        system
            .try_confirm_at_origin("user-1", Some("k-2"), &order_body("o-held"))
            .await
    };
    let kill = async {
        wait_for_requests(&system, 2).await;
        system.killer("origin").kill();
    };
    let (approved, held, ()) = tokio::join!(approved, held, kill);
    assert!(
        approved.is_err() && held.is_err(),
        "both were cut off by the kill"
    );

    system.restart_origin().await;
    system.set_faults(json!({"mode": "NORMAL"})).await;
    // NOT_FOUND answers count 4 s (twice the PG timeout) apart.
    for _ in 0..3 {
        run_recovery(&system).await;
        tokio::time::sleep(Duration::from_millis(4_100)).await;
    }
    let held = payments(&system).await;
    assert_eq!(held["o-approved"]["status"], "APPROVED");
    assert_eq!(
        (
            held["o-held"]["status"].as_str(),
            held["o-held"]["failureReason"].as_str()
        ),
        (Some("FAILED"), Some("NOT_FOUND_AT_PG"))
    );
    assert_eq!(
        charges(&system).await.into_keys().collect::<Vec<_>>(),
        ["o-approved"]
    );
}

/// Waits until the simulator has received `count` confirms.
async fn wait_for_requests(system: &System, count: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while system.ledger().await["requestCount"].as_u64() < Some(count) {
        assert!(
            Instant::now() < deadline,
            "the PG never got {count} confirms"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The chaos run: a slow PG; 300 confirms, 5 ms apart, spread over `targets`; the
/// instance `victim` killed with SIGKILL once 10 have been answered. Returns the orders
/// sent and those the origin answered with a payment.
async fn confirms_with_a_kill(
    system: &System,
    targets: &[String],
    victim: Killer,
    event_id: Option<&str>,
) -> (Vec<String>, BTreeSet<String>) {
    system
        .set_faults(json!({"mode": "DELAY", "delayMs": 300, "jitterMs": 1_200}))
        .await;
    let orders: Vec<String> = (0..300).map(|n| format!("o-{n}")).collect();
    let answered_so_far = AtomicUsize::new(0);
    let answered_so_far = &answered_so_far;
    let sent = futures_util::future::join_all(orders.iter().enumerate().map(|(n, order_id)| {
        let target = &targets[n % targets.len()];
        async move {
            tokio::time::sleep(Duration::from_millis(n as u64 * 5)).await;
            let key = format!("key-{order_id}");
            let mut body: Value = serde_json::from_str(&order_body(order_id)).expect("JSON");
            if let Some(event_id) = event_id {
                body["eventId"] = json!(event_id);
            }
            let body = body.to_string();
            // A payment exists once the origin answers 201 or 202; a 409 (sold out)
            // or a 503 (shed) made none.
            let made = system
                .try_confirm_at(target, "user-1", Some(&key), &body)
                .await
                .is_ok_and(|answer| {
                    matches!(answer.status(), StatusCode::CREATED | StatusCode::ACCEPTED)
                });
            if made {
                answered_so_far.fetch_add(1, Ordering::SeqCst);
            }
            made
        }
    }));
    let kill = async {
        // Mid-flight whatever the machine's pace: once a few are answered.
        while answered_so_far.load(Ordering::SeqCst) < 10 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        victim.kill();
    };
    let (answers, ()) = tokio::join!(sent, kill);
    let answered: BTreeSet<String> = answers
        .iter()
        .zip(&orders)
        .filter(|(made, _)| **made)
        .map(|(_, order_id)| order_id.clone())
        .collect();
    assert!(
        !answered.is_empty() && answered.len() < orders.len(),
        "the kill landed mid-flight: {} answered",
        answered.len()
    );
    (orders, answered)
}

/// Runs recovery at `base` until every payment is settled, then checks that the origin
/// and the PG agree: each order charged at most once, APPROVED here exactly when charged
/// there, and every answered order still here.
async fn recover_and_agree(
    system: &System,
    base: &str,
    orders: &[String],
    answered: &BTreeSet<String>,
) {
    system.set_faults(json!({"mode": "NORMAL"})).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        tokio::time::sleep(Duration::from_millis(600)).await;
        system.run_recovery_at(base).await;
        let held = payments_at(system, base).await;
        if held
            .values()
            .all(|p| p["status"] == "APPROVED" || p["status"] == "FAILED")
        {
            break;
        }
        assert!(Instant::now() < deadline, "payments still unsettled");
    }

    let held = payments_at(system, base).await;
    let charged = charges(system).await;
    let failed: Vec<_> = held
        .values()
        .filter(|p| p["status"] == "FAILED")
        .map(|p| p["failureReason"].as_str().unwrap_or("-").to_owned())
        .collect();
    eprintln!(
        "sent {}, answered before the kill {}, held {}, approved {}, failed {failed:?}",
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

const CHAOS: [(&str, &str); 4] = [
    ("GATEWAY_TIMEOUT_MS", "2000"),
    ("RECOVERY_INTERVAL_MS", "3600000"),
    ("RECOVERY_MIN_AGE_MS", "500"),
    ("BULKHEAD_MAX_CONCURRENT", "400"),
];

#[tokio::test]
async fn a_kill_9_mid_flight_loses_no_payment_and_charges_nobody_twice() {
    let mut system = System::backend(&CHAOS).await;
    let targets = [system.origin.clone()];
    let (orders, answered) =
        confirms_with_a_kill(&system, &targets, system.killer("origin"), None).await;
    system.restart_origin().await;
    recover_and_agree(&system, &system.origin, &orders, &answered).await;
}

#[tokio::test]
async fn two_instances_on_postgres_one_killed_the_other_converges_everything() {
    let system = System::backend_on_postgres(&CHAOS).await;
    let survivor = system.second_origin.clone().expect("a second instance");
    let targets = [system.origin.clone(), survivor.clone()];
    let (orders, answered) =
        confirms_with_a_kill(&system, &targets, system.killer("origin"), None).await;
    recover_and_agree(&system, &survivor, &orders, &answered).await;
}

#[tokio::test]
async fn a_kill_9_mid_flight_never_oversells_an_event_and_agrees_with_the_pg() {
    let mut system = System::backend(&CHAOS).await;
    let (status, _) = system
        .set_event(json!({"eventId": "drop", "stock": 60, "amount": 5000}))
        .await;
    assert!(status.is_success());
    let targets = [system.origin.clone()];
    let killer = system.killer("origin");
    let (orders, answered) = confirms_with_a_kill(&system, &targets, killer, Some("drop")).await;
    system.restart_origin().await;
    recover_and_agree(&system, &system.origin, &orders, &answered).await;
    let drop = system.operator_get("/admin/events/drop").await;
    let approved = charges(&system).await.len() as i64;
    assert_eq!(drop["reserved"], 0, "{drop}");
    assert_eq!(drop["sold"].as_i64(), Some(approved), "{drop}");
    assert!(approved <= 60, "{drop}");
}
