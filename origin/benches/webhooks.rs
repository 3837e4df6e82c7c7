//! The merchant's webhooks: deliveries per second to a receiver on loopback that
//! acknowledges at once, for 10,000 outbox events written by the store's triggers —
//! 10,000 payments created (one event an order: nothing waits behind another of its
//! order), and 5,000 payments created and approved (two an order: the approval waits
//! for its creation's acknowledgement) — on SQLite and on PostgreSQL. Each delivery is
//! signed, sent, acknowledged and recorded, as in production.
//!
//! `cargo bench -p origin --bench webhooks` (PostgreSQL needs `scripts/bootstrap
//! --postgres`; the bench starts a throwaway server of its own).

#[path = "../tests/support/keys.rs"]
mod keys;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::post;
use axum::Router;
use origin::metrics::Metrics;
use origin::outbox::config::MerchantWebhooks;
use origin::outbox::signature::Secrets;
use origin::outbox::Delivery;
use origin::policy::delivery::Schedule;
use origin::store::{self, NewPayment, Outcome, Store};

const EVENTS: usize = 10_000;

#[tokio::main]
async fn main() {
    let received = Arc::new(AtomicU64::new(0));
    let counter = received.clone();
    let receiver = Router::new().route(
        "/hooks",
        post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!(
        "http://{}/hooks",
        listener.local_addr().expect("an address")
    );
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    println!("| database | orders × events | deliveries | seconds | deliveries/s |");
    println!("|---|---|---|---|---|");
    for (orders, each) in [(EVENTS, 1), (EVENTS / 2, 2)] {
        let dir = tempfile::tempdir().expect("a folder");
        let sqlite = format!("sqlite://{}", dir.path().join("bench.sqlite3").display());
        measure("SQLite", &sqlite, &url, orders, each, &received).await;
    }
    for (orders, each) in [(EVENTS, 1), (EVENTS / 2, 2)] {
        let server = harness::postgres::TestPostgres::start();
        measure("PostgreSQL", server.url(), &url, orders, each, &received).await;
    }
}

/// `orders × each` events written, then delivered from a standing start.
async fn measure(
    name: &str,
    database: &str,
    url: &str,
    orders: usize,
    each: usize,
    received: &AtomicU64,
) {
    let store = store::open(database, Duration::from_secs(10), keys::cipher("v1"))
        .await
        .expect("the store");
    write_events(store.as_ref(), orders, each).await;
    store.publish_events().await.expect("published");
    let before = received.load(Ordering::Relaxed);
    let config = MerchantWebhooks {
        url: url.parse().expect("a URL"),
        secrets: Secrets::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("a secret"),
        concurrency: 32,
        timeout: Duration::from_secs(10),
        schedule: Schedule::default(),
    };
    let delivery = Delivery::new(store.clone(), Arc::new(Metrics::default()), config, "KRW")
        .expect("the delivery");
    let started = Instant::now();
    let running = tokio::spawn(Arc::new(delivery).run());
    loop {
        let backlog = store.webhook_backlog(0).await.expect("the backlog");
        if backlog.pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed().as_secs_f64();
    running.abort();
    let delivered = received.load(Ordering::Relaxed) - before;
    println!(
        "| {name} | {orders} × {each} | {delivered} | {took:.2} | {:.0} |",
        delivered as f64 / took
    );
}

/// One payment per order, approved when `each` is 2: `orders × each` events.
async fn write_events(store: &dyn Store, orders: usize, each: usize) {
    for order in 0..orders {
        let payment = store
            .insert_pending(NewPayment {
                order_id: format!("o-{order}"),
                user_id: "bench".into(),
                payment_key: "pk".into(),
                amount: 5000,
                event_id: None,
                confirm_key: "ck".into(),
                now_ms: 1,
            })
            .await
            .expect("a payment");
        if each == 2 {
            store
                .record_outcome(payment.payment_id, Outcome::Approved { approved_at: 2 }, 2)
                .await
                .expect("approved");
        }
    }
}
