//! KEK rotation throughput: 100,000 payments on SQLite, their keys sealed under v1, put
//! on v2 by `rewrap_payment_keys` (what `origin keys rewrap` runs) in batches of 500 —
//! rows per second — then the run with nothing left to do.
//!
//! `cargo bench -p origin --bench rewrap`

#[path = "../tests/support/keys.rs"]
mod keys;

use std::time::{Duration, Instant};

use origin::crypto::PAYMENT_KEY;
use origin::rotation::{rewrap_payment_keys, BATCH};
use sqlx::{Connection as _, SqliteConnection};

const PAYMENTS: usize = 100_000;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("a folder");
    let url = format!("sqlite://{}", dir.path().join("rewrap.sqlite3").display());
    let open = |current| origin::store::open(&url, Duration::from_secs(3), keys::cipher(current));
    drop(open("v1").await.expect("migrated"));
    insert_sealed_payments(&url).await;

    let cipher = keys::cipher("v2");
    let store = open("v2").await.expect("a store");
    let started = Instant::now();
    let report = rewrap_payment_keys(store.as_ref(), &cipher, BATCH, |_| {})
        .await
        .expect("rewrapped");
    let took = started.elapsed();
    assert_eq!((report.rewrapped, report.failed), (PAYMENTS as u64, 0));
    println!(
        "rewrap of {PAYMENTS} payment keys v1 → v2 on SQLite, batches of {BATCH}: {:.2} s, {:.0} rows/s",
        took.as_secs_f64(),
        PAYMENTS as f64 / took.as_secs_f64()
    );

    let started = Instant::now();
    let again = rewrap_payment_keys(store.as_ref(), &cipher, BATCH, |_| {})
        .await
        .expect("nothing to do");
    assert_eq!(again.examined, 0);
    println!(
        "the second run, nothing left to do: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
}

/// `order-000000` … with their payment keys sealed under v1, in one transaction.
async fn insert_sealed_payments(url: &str) {
    let cipher = keys::cipher("v1");
    let mut connection = SqliteConnection::connect(url).await.expect("a connection");
    let mut transaction = connection.begin().await.expect("a transaction");
    for n in 0..PAYMENTS {
        let order_id = format!("order-{n:06}");
        let sealed = cipher
            .seal(PAYMENT_KEY, &order_id, &format!("pk-{n:06}"))
            .expect("sealed");
        sqlx::query(
            "INSERT INTO payments (order_id, user_id, payment_key, amount, status, \
             created_at, updated_at) VALUES (?, 'user-1', ?, 1000, 'PENDING', 0, 0)",
        )
        .bind(&order_id)
        .bind(sealed)
        .execute(&mut *transaction)
        .await
        .expect("a payment");
    }
    transaction.commit().await.expect("committed");
}
