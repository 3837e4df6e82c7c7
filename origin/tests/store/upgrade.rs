//! The upgrade from the previous release's database: the files in
//! `origin/tests/fixtures/` were written by the release before the outbox (c2ebe55), with
//! its own store (`origin/tests/fixtures/README.md`). Opening one migrates it in place;
//! every payment, the event's units and the stored answers are read as they were, the
//! history writes no events, the first change after the upgrade writes its own, and a
//! second start finds nothing to migrate.

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::postgres::TestPostgres;
use origin::policy::recovery::Decision;
use origin::store::{self, Claimed, IdempotencyClaim, NewPayment, PaymentStatus, Store};

use crate::store::{keys, ACQUIRE_TIMEOUT};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

async fn open(url: &str) -> std::sync::Arc<dyn Store> {
    store::open(url, ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .expect("the previous release's database opens and migrates")
}

#[tokio::test]
async fn the_previous_releases_sqlite_database_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    std::fs::copy(fixture("previous-release.sqlite3"), &path).unwrap();
    let url = format!("sqlite://{}", path.display());
    upgraded(open(&url).await.as_ref()).await;
    second_start(open(&url).await.as_ref()).await;
}

#[tokio::test]
async fn the_previous_releases_postgres_database_is_upgraded_in_place() {
    let server = TestPostgres::start();
    let loaded = Command::new("psql")
        .args(["--quiet", "--set", "ON_ERROR_STOP=1", "--file"])
        .arg(fixture("previous-release.postgres.sql"))
        .arg(server.url())
        .output()
        .expect("psql runs");
    assert!(
        loaded.status.success(),
        "the dump loads: {}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    upgraded(open(server.url()).await.as_ref()).await;
    second_start(open(server.url()).await.as_ref()).await;
}

/// The fixture's payments: order, status, failure reason, flag.
const HELD: [(&str, PaymentStatus, Option<&str>, Option<&str>); 6] = [
    ("o-approved", PaymentStatus::Approved, None, None),
    ("o-declined", PaymentStatus::Failed, Some("DECLINED"), None),
    ("o-unknown", PaymentStatus::Unknown, None, None),
    ("o-flagged", PaymentStatus::Unknown, None, Some("AMOUNT")),
    ("o-pending", PaymentStatus::Pending, None, None),
    ("o-event", PaymentStatus::Pending, None, None),
];

async fn upgraded(store: &dyn Store) {
    for (order_id, status, reason, flag) in HELD {
        let payment = store
            .payment_by_order_id(order_id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{order_id} is kept"));
        assert_eq!(
            (
                payment.status,
                payment.failure_reason.as_deref(),
                payment.recovery.flag.as_deref()
            ),
            (status, reason, flag),
            "{order_id}"
        );
        assert_eq!(payment.payment_key, format!("pk-{order_id}"), "decrypted");
        assert_eq!(payment.gateway.confirm_key, format!("ck-{order_id}"));
    }
    let event = store.event("ev-1").await.unwrap().expect("the event");
    assert_eq!((event.stock, event.reserved, event.sold), (10, 1, 0));
    let replay = IdempotencyClaim {
        user_id: "user-1".into(),
        key: "key-approved".into(),
        request_hash: "h-approved".into(),
        lease_ms: 60_000,
        retain_ms: 86_400_000_000,
    };
    assert!(matches!(
        store.claim_idempotency_key(&replay, 5_000).await.unwrap(),
        Claimed::Done(answer) if answer.status == 201
    ));

    // What happened before the upgrade writes no event; what happens after, does.
    assert_eq!(store.publish_events().await.unwrap(), 0, "no history");
    assert!(store.payment_events(0, 10).await.unwrap().is_empty());
    let approve = Decision::Approve { approved_at: 9_000 };
    let fail = Decision::Fail {
        reason: "NOT_FOUND_AT_PG",
    };
    for (order_id, decision) in [("o-unknown", approve), ("o-pending", fail)] {
        let payment = store.payment_by_order_id(order_id).await.unwrap();
        let id = payment.expect("kept").payment_id;
        let recorded = store.record_recovery(id, &decision, "recovery", 9_000);
        assert!(recorded.await.unwrap().is_some(), "{order_id} settled");
    }
    let new = NewPayment {
        order_id: "o-new".into(),
        user_id: "user-1".into(),
        payment_key: "pk-o-new".into(),
        amount: 1000,
        event_id: None,
        confirm_key: "ck-o-new".into(),
        now_ms: 9_100,
    };
    store.insert_pending(new).await.unwrap();
    assert_eq!(store.publish_events().await.unwrap(), 3);
    assert_eq!(events(store).await, AFTER);
}

/// The events of the first changes after the upgrade: recovery settles two, a confirm
/// makes a third.
const AFTER: [&str; 3] = [
    "1 o-unknown payment.approved",
    "2 o-pending payment.failed",
    "3 o-new payment.created",
];

/// The published events: position, order, kind.
async fn events(store: &dyn Store) -> Vec<String> {
    let events = store.payment_events(0, 10).await.unwrap();
    events
        .into_iter()
        .map(|e| format!("{} {} {}", e.position.unwrap_or(0), e.order_key, e.kind))
        .collect()
}

/// Started again on the upgraded database: nothing to migrate, nothing lost.
async fn second_start(store: &dyn Store) {
    assert_eq!(events(store).await, AFTER);
    assert_eq!(store.publish_events().await.unwrap(), 0);
    let payment = store.payment_by_order_id("o-unknown").await.unwrap();
    assert_eq!(payment.map(|p| p.status), Some(PaymentStatus::Approved));
}
