//! A room made by the release before claims counted their grants, started by this one,
//! through the real edge (workerd), the origin and the simulator: the claim it stored
//! while its order was at the PG still backs that order alone — another order is refused
//! `QUEUE_PASS_IN_USE`, the same order under another key neither frees nor takes it — and
//! the order's retry is replayed once the PG has answered.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::Connection as _;
use support::gate::{code, confirm};
use support::room::{define, enter};
use support::{EdgeSetup, System};

const EVENT: &str = "upgrade-1";
const EVERY: Duration = Duration::from_millis(100);

#[tokio::test]
async fn a_claim_stored_before_grants_were_counted_still_backs_its_order_alone() {
    let setup = EdgeSetup {
        vars: vec![
            ("QUEUE_ADMIT_LIMIT", "1".into()),
            ("GATED_EVENTS", EVENT.into()),
        ],
        ..EdgeSetup::default()
    };
    // The PG answers A after 8 s, well within the origin's timeout: A ends APPROVED.
    let mut system = System::start_with_origin(setup, &[("GATEWAY_TIMEOUT_MS", "60000")]).await;
    define(
        &system,
        json!({ "eventId": EVENT, "stock": 10, "amount": 1000 }),
    )
    .await;
    let token = system.token("user-1", 600);
    assert_eq!(enter(&system, &token, EVENT).await["admitted"], true);
    system
        .set_faults(json!({"mode": "DELAY", "delayMs": 8_000}))
        .await;

    // Order A claims the pass and reaches the PG; the edge dies before its answer.
    let in_flight = {
        let (edge, http, token) = (system.edge.clone(), system.http.clone(), token.clone());
        tokio::spawn(async move {
            let body = json!({
                "orderId": "order-a",
                "paymentKey": "pk-order-a",
                "amount": 1000,
                "eventId": EVENT,
            });
            http.post(format!("{edge}/payments/confirm"))
                .bearer_auth(token)
                .header("idempotency-key", "key-a")
                .json(&body)
                .send()
                .await
        })
    };
    eventually("A at the PG", Duration::from_secs(30), EVERY, || async {
        let sent = system.ledger().await["requestCount"].as_u64().unwrap_or(0);
        (sent >= 1).then_some(()).ok_or(format!("{sent} requests"))
    })
    .await;
    system.kill("edge");
    in_flight.abort();

    // The previous release's room: its claims had no grants column.
    let (_, mut db) = system.only_object_db("WaitingRoom").await;
    sqlx::query("ALTER TABLE claims DROP COLUMN grants")
        .execute(&mut db)
        .await
        .expect("this release's claims count their grants");
    let held: (String,) = sqlx::query_as("SELECT order_id FROM claims")
        .fetch_one(&mut db)
        .await
        .expect("A's claim stored");
    assert_eq!(held.0, "order-a");
    db.close().await.expect("closed");
    system.start_edge_again().await;

    let other = confirm(&system, &token, "key-b", "order-b", 1000, EVENT).await;
    assert_eq!(
        code(other).await,
        (StatusCode::CONFLICT, "QUEUE_PASS_IN_USE".into())
    );
    let rekeyed = confirm(&system, &token, "key-a2", "order-a", 1000, EVENT).await;
    assert_eq!(
        code(rekeyed).await,
        (StatusCode::CONFLICT, "ORDER_EXISTS".into())
    );
    let still = confirm(&system, &token, "key-b", "order-b", 1000, EVENT).await;
    assert_eq!(
        code(still).await,
        (StatusCode::CONFLICT, "QUEUE_PASS_IN_USE".into()),
        "A's other key neither freed nor took A's claim"
    );

    let replayed = eventually("A answered", Duration::from_secs(60), EVERY, || async {
        let again = confirm(&system, &token, "key-a", "order-a", 1000, EVENT).await;
        match again.status() {
            StatusCode::CREATED => Ok(again),
            other => Err(format!(
                "{other}: {}",
                again.text().await.unwrap_or_default()
            )),
        }
    })
    .await;
    assert_eq!(
        replayed
            .headers()
            .get("Idempotent-Replayed")
            .and_then(|v| v.to_str().ok()),
        Some("true")
    );
    let replayed: Value = replayed.json().await.expect("a JSON body");
    assert_eq!(replayed["status"], "APPROVED", "{replayed}");
    assert_eq!(system.ledger().await["requestCount"], 1, "one charge");
}
