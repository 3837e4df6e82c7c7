//! Payment keys at rest, on both stores: the database holds only sealed values, read
//! back in plain text; rotation onto a new KEK rewraps the data keys only, resumes
//! after an interruption, seals plain text from before encryption, leaves a damaged
//! value alone, and changes nothing the second time.

use crate::support::keys;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness::postgres::TestPostgres;
use origin::rotation::{rewrap_payment_keys, Rotation};
use origin::store::{self, NewPayment, Store, StoreError};
use sqlx::{Connection as _, PgConnection, SqliteConnection};

const PAYMENTS: usize = 250;
const BATCH: u32 = 100;

/// The payments table as the database holds it: order id → payment key.
async fn raw_payment_keys(url: &str) -> BTreeMap<String, String> {
    let sql = "SELECT order_id, payment_key FROM payments";
    let rows: Vec<(String, String)> = if url.starts_with("sqlite:") {
        let mut connection = SqliteConnection::connect(url).await.unwrap();
        sqlx::query_as(sql)
            .fetch_all(&mut connection)
            .await
            .unwrap()
    } else {
        let mut connection = PgConnection::connect(url).await.unwrap();
        sqlx::query_as(sql)
            .fetch_all(&mut connection)
            .await
            .unwrap()
    };
    rows.into_iter().collect()
}

async fn raw_execute(url: &str, sql: &str) {
    if url.starts_with("sqlite:") {
        let mut connection = SqliteConnection::connect(url).await.unwrap();
        sqlx::query(sql).execute(&mut connection).await.unwrap();
    } else {
        let mut connection = PgConnection::connect(url).await.unwrap();
        sqlx::query(sql).execute(&mut connection).await.unwrap();
    }
}

async fn open(url: &str, current: &str) -> Arc<dyn Store> {
    store::open(url, Duration::from_secs(3), keys::cipher(current))
        .await
        .unwrap()
}

fn payment(n: usize) -> NewPayment {
    NewPayment {
        order_id: format!("o-{n:04}"),
        user_id: "user-1".into(),
        payment_key: format!("pk-secret-{n:04}"),
        amount: 1_000,
        event_id: None,
        confirm_key: "ck-test".into(),
        now_ms: 1_000,
    }
}

/// The data part of `env:v{N}:{wrapped DEK}:{data}`.
fn data_part(stored: &str) -> &str {
    stored.rsplit(':').next().unwrap_or_default()
}

async fn payment_keys_are_sealed_at_rest_and_read_in_plain(url: &str) {
    let store = open(url, "v1").await;
    let inserted = store.insert_pending(payment(1)).await.unwrap();
    assert_eq!(
        inserted.payment_key, "pk-secret-0001",
        "TX 1 hands back the key to send"
    );
    let raw = raw_payment_keys(url).await;
    let stored = &raw["o-0001"];
    assert!(stored.starts_with("env:v1:"), "{stored}");
    assert!(!stored.contains("pk-secret"), "{stored}");
    let read = store.payment_by_order_id("o-0001").await.unwrap().unwrap();
    assert_eq!(read.payment_key, "pk-secret-0001");

    // Another payment's sealed key copied into this row does not open here.
    store.insert_pending(payment(2)).await.unwrap();
    let other = raw_payment_keys(url).await["o-0002"].clone();
    raw_execute(
        url,
        &format!("UPDATE payments SET payment_key = '{other}' WHERE order_id = 'o-0001'"),
    )
    .await;
    let moved = store.payment_by_order_id("o-0001").await;
    assert!(matches!(moved, Err(StoreError::Crypto(_))), "{moved:?}");
}

async fn rotation_rewraps_data_keys_only_and_resumes(url: &str) {
    let before = open(url, "v1").await;
    for n in 0..PAYMENTS {
        before.insert_pending(payment(n)).await.unwrap();
    }
    let sealed_v1 = raw_payment_keys(url).await;
    assert!(sealed_v1.values().all(|key| key.starts_with("env:v1:")));

    // The operator makes v2 current; the instance on v1 goes on serving meanwhile.
    let cipher = keys::cipher("v2");
    let after = open(url, "v2").await;
    let mut interrupted = Rotation::new(after.as_ref(), &cipher, BATCH);
    assert_eq!(interrupted.remaining().await.unwrap(), PAYMENTS as u64);
    assert_eq!(interrupted.next_batch().await.unwrap(), u64::from(BATCH));
    drop(interrupted);
    assert_eq!(
        after.count_payment_keys_not_on(2).await.unwrap(),
        (PAYMENTS - BATCH as usize) as u64
    );

    let batches = AtomicU64::new(0);
    let report = rewrap_payment_keys(after.as_ref(), &cipher, BATCH, |_| {
        batches.fetch_add(1, Ordering::Relaxed);
    })
    .await
    .unwrap();
    assert_eq!(
        (
            report.current_version,
            report.examined,
            report.rewrapped,
            report.failed
        ),
        (2, 150, 150, 0)
    );
    assert_eq!(batches.into_inner(), 2);

    let sealed_v2 = raw_payment_keys(url).await;
    for (order_id, old) in &sealed_v1 {
        let new = &sealed_v2[order_id];
        assert!(new.starts_with("env:v2:"), "{new}");
        assert_eq!(
            data_part(new),
            data_part(old),
            "the data part is byte-identical"
        );
        assert_ne!(new, old);
    }
    for store in [&before, &after] {
        let read = store.payment_by_order_id("o-0042").await.unwrap().unwrap();
        assert_eq!(read.payment_key, "pk-secret-0042");
    }

    let again = rewrap_payment_keys(after.as_ref(), &cipher, BATCH, |_| {})
        .await
        .unwrap();
    assert_eq!((again.examined, again.rewrapped), (0, 0));
    assert_eq!(
        raw_payment_keys(url).await,
        sealed_v2,
        "a second run changes nothing"
    );
}

async fn rotation_seals_plain_text_and_leaves_a_damaged_value_alone(url: &str) {
    let store = open(url, "v1").await;
    for n in 0..3 {
        store.insert_pending(payment(n)).await.unwrap();
    }
    raw_execute(
        url,
        "UPDATE payments SET payment_key = 'pk-from-before' WHERE order_id = 'o-0000'",
    )
    .await;
    let damaged = raw_payment_keys(url).await["o-0001"].replacen("env:v1:", "env:v1:A", 1);
    raw_execute(
        url,
        &format!("UPDATE payments SET payment_key = '{damaged}' WHERE order_id = 'o-0001'"),
    )
    .await;
    assert!(store.payment_by_order_id("o-0000").await.is_err());

    let cipher = keys::cipher("v2");
    let after = open(url, "v2").await;
    let report = rewrap_payment_keys(after.as_ref(), &cipher, BATCH, |_| {})
        .await
        .unwrap();
    assert_eq!(
        (
            report.examined,
            report.rewrapped,
            report.sealed,
            report.failed
        ),
        (3, 1, 1, 1)
    );
    assert_eq!(report.failures[0].order_id, "o-0001");
    let read = after.payment_by_order_id("o-0000").await.unwrap().unwrap();
    assert_eq!(read.payment_key, "pk-from-before");
    let raw = raw_payment_keys(url).await;
    assert!(raw["o-0000"].starts_with("env:v2:"));
    assert_eq!(raw["o-0001"], damaged, "left as it was");
    assert_eq!(after.count_payment_keys_not_on(2).await.unwrap(), 1);
}

/// One test per case and store.
macro_rules! on_both_stores {
    ($($case:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let dir = tempfile::tempdir().unwrap();
                    let url = format!("sqlite://{}", dir.path().join("keys.sqlite3").display());
                    super::$case(&url).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let server = super::TestPostgres::start();
                    super::$case(server.url()).await;
                }
            )+
        }
    };
}

on_both_stores!(
    payment_keys_are_sealed_at_rest_and_read_in_plain,
    rotation_rewraps_data_keys_only_and_resumes,
    rotation_seals_plain_text_and_leaves_a_damaged_value_alone,
);
