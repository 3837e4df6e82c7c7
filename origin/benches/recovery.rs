//! Recovery throughput: payments converged per second, for 10,000 UNKNOWN payments
//! against a simulator that answers at once, on SQLite and on PostgreSQL.
//!
//! `cargo bench -p origin --bench recovery` (PostgreSQL needs `scripts/bootstrap
//! --postgres`; the bench starts a throwaway server of its own).

#[path = "../tests/support/keys.rs"]
mod keys;
#[path = "../tests/support/toss.rs"]
mod toss;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;

use origin::guard::{GatewayGuard, GuardConfig};
use origin::metrics::Metrics;
use origin::policy::recovery::RecoveryConfig;
use origin::recovery::Recovery;
use origin::store::{self, NewPayment, Outcome, Store};

const PAYMENTS: usize = 10_000;

#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let gateway = format!("http://{}", listener.local_addr().expect("an address"));
    let sim = gateway_sim::SimState::default();
    tokio::spawn(gateway_sim::serve(listener, sim, std::future::pending()));
    approve_at_the_pg(&gateway).await;

    let dir = tempfile::tempdir().expect("a folder");
    let sqlite = format!("sqlite://{}", dir.path().join("bench.sqlite3").display());
    measure("SQLite", &sqlite, &gateway).await;
    let server = harness::postgres::TestPostgres::start();
    measure("PostgreSQL", server.url(), &gateway).await;
}

/// The simulator approves every order the bench will ask about.
async fn approve_at_the_pg(gateway: &str) {
    let http = reqwest::Client::new();
    let url = format!("{gateway}/v1/payments/confirm");
    futures_util::stream::iter(0..PAYMENTS)
        .for_each_concurrent(64, |n| {
            let (http, url) = (&http, &url);
            async move {
                let body = serde_json::json!({
                    "orderId": format!("o-{n}"), "paymentKey": "pk", "amount": 5000
                });
                let answer = http
                    .post(url)
                    .json(&body)
                    .send()
                    .await
                    .expect("the PG answers");
                assert!(answer.status().is_success());
            }
        })
        .await;
}

async fn measure(name: &str, url: &str, gateway: &str) {
    let store = store::open(url, Duration::from_secs(3), keys::cipher("v1"))
        .await
        .expect("a store");
    futures_util::stream::iter(0..PAYMENTS)
        .for_each_concurrent(16, |n| {
            let store = &store;
            async move { unknown_payment(store.as_ref(), n).await }
        })
        .await;
    let metrics = Arc::new(Metrics::default());
    let recovery = Recovery::new(
        store,
        toss::adapter(gateway),
        GatewayGuard::new(
            "recover",
            GuardConfig {
                bulkhead: 16,
                ..GuardConfig::default()
            },
            metrics.clone(),
        ),
        metrics,
        RecoveryConfig::for_gateway_timeout(Duration::from_secs(3)),
    );
    let started = Instant::now();
    let report = recovery.run_cycle().await;
    let took = started.elapsed();
    assert_eq!(report.approved as usize, PAYMENTS, "{report:?}");
    println!(
        "{name:>10}: {PAYMENTS} UNKNOWN payments converged in {:.2} s — {:.0} payments/s",
        took.as_secs_f64(),
        PAYMENTS as f64 / took.as_secs_f64()
    );
}

async fn unknown_payment(store: &dyn Store, n: usize) {
    let pending = store
        .insert_pending(NewPayment {
            order_id: format!("o-{n}"),
            user_id: "user-1".into(),
            payment_key: "pk".into(),
            amount: 5000,
            event_id: None,
            confirm_key: "ck-test".into(),
            now_ms: 0,
        })
        .await
        .expect("inserted");
    store
        .record_outcome(pending.payment_id, Outcome::Unknown, 1)
        .await
        .expect("recorded");
}
