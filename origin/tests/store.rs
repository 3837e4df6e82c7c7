//! The store's contract, run on both stores: every case in [`on_both_stores!`] runs on
//! a SQLite file and on a throwaway PostgreSQL server, each opened by `store::open`.
//! Then what only PostgreSQL has: several instances sharing one database, and its
//! transient errors.

#[path = "support/keys.rs"]
mod keys;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use harness::eventually::eventually;
use harness::postgres::TestPostgres;
use origin::policy::recovery::{Decision, RecoveryState};
use origin::policy::settlement::period::Period;
use origin::policy::settlement::queue::{ItemStatus, Resolution, CLOSED_BY_A_MATCH};
use origin::policy::settlement::reconcile::{Category, Finding};
use origin::store::postgres::MAX_CONNECTIONS;
use origin::store::{
    self, AttemptFailed, Claimed, EventSpec, IdempotencyClaim, IdempotencyRecord, Lease,
    NewPayment, Outcome, PaymentStatus, Store, StoreError, StoredResponse, User,
};
use sqlx::{Connection as _, PgConnection};

const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// A store on a new SQLite file, and the folder that holds it (deleted on drop).
async fn sqlite() -> (Arc<dyn Store>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.sqlite3").display());
    let store = store::open(&url, ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    (store, dir)
}

/// A store on a new PostgreSQL server, and the server (stopped on drop).
async fn postgres() -> (Arc<dyn Store>, TestPostgres) {
    let server = TestPostgres::start();
    let store = store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    (store, server)
}

/// One `#[tokio::test]` per case and store: `sqlite::case` and `postgres::case`.
macro_rules! on_both_stores {
    ($($case:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let (store, _database) = super::sqlite().await;
                    super::$case(store.as_ref()).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let (store, _database) = super::postgres().await;
                    super::$case(store.as_ref()).await;
                }
            )+
        }
    };
}

on_both_stores!(
    a_nonce_is_used_once_until_it_is_purged_as_stale,
    a_pending_payment_is_inserted_and_read_back_by_its_owner_only,
    an_order_id_is_paid_at_most_once,
    an_outcome_settles_a_pending_payment_once,
    each_outcome_is_recorded_as_it_is,
    an_outcome_for_no_payment_is_no_such_payment,
    recent_payments_are_the_users_own_newest_first,
    a_user_name_is_taken_once_and_its_password_can_change,
    an_idempotency_key_is_claimed_once_then_replayed,
    a_claim_past_its_lease_is_taken_over_once,
    a_released_or_expired_key_starts_afresh,
    an_idempotency_record_is_read_without_claiming_the_key,
    a_payment_is_found_by_id_and_by_order_id_whoever_owns_it,
    payments_with_a_status_are_listed_oldest_first,
    recovery_claims_due_unsettled_payments_once_per_lease,
    a_recovery_lease_is_renewed_only_by_its_holder_before_it_runs_out,
    recovery_records_its_decision_on_unsettled_payments_only,
    an_event_sells_its_stock_and_a_failure_gives_a_unit_back,
    a_late_approval_is_refund_due_until_refunded,
    approved_payments_of_a_period_are_read_by_approval_time,
    a_finding_is_queued_once_and_resolved_once,
    a_match_closes_pending_mismatches_and_internal_onlies,
    the_queue_takes_findings_by_the_thousand_and_lists_them_in_pages,
    a_room_change_over_a_stale_version_is_refused,
    every_change_writes_its_event_and_each_order_is_delivered_in_order,
);

async fn a_room_change_over_a_stale_version_is_refused(store: &dyn Store) {
    use rules::drop::{RoomSettings, RoomState};
    let settings = |admit_limit| RoomSettings {
        admit_limit: Some(admit_limit),
        ..RoomSettings::default()
    };
    let stale = |result: Result<_, StoreError>| match result {
        Err(StoreError::StaleVersion { current }) => current,
        other => panic!("not refused as stale: {other:?}"),
    };
    let open = RoomState::Open;
    let first = store
        .set_event_room("e", &settings(1), open, 1, Some(0))
        .await;
    assert_eq!(first.unwrap().version, 1);
    assert_eq!(
        stale(
            store
                .set_event_room("e", &settings(2), open, 2, Some(0))
                .await
        ),
        1
    );
    let second = store
        .set_event_room("e", &settings(2), open, 2, Some(1))
        .await;
    assert_eq!(second.unwrap().version, 2);
    assert_eq!(
        stale(
            store
                .set_event_room("e", &settings(3), open, 3, Some(1))
                .await
        ),
        2
    );
    assert_eq!(
        stale(
            store
                .set_event_room("f", &settings(3), open, 3, Some(4))
                .await
        ),
        0
    );
    let any = store
        .set_event_room("e", &settings(4), RoomState::Paused, 4, None)
        .await;
    assert_eq!(any.unwrap().version, 3);
    let room = store.event_room("e").await.unwrap().unwrap();
    assert_eq!(
        (room.settings.admit_limit, room.state, room.version),
        (Some(4), RoomState::Paused, 3)
    );
    let rooms = store.event_rooms(10).await.unwrap();
    assert_eq!(rooms.len(), 1);
    assert_eq!(rooms[0].0, "e");
    assert!(store.event_room("f").await.unwrap().is_none());
}

async fn every_change_writes_its_event_and_each_order_is_delivered_in_order(store: &dyn Store) {
    let lease = |until_ms| Lease {
        holder: "test",
        until_ms,
    };
    let a = store
        .insert_pending(new_payment("o-a"))
        .await
        .unwrap()
        .payment_id;
    let b = store
        .insert_pending(new_payment("o-b"))
        .await
        .unwrap()
        .payment_id;
    store
        .record_outcome(
            a,
            Outcome::Flagged {
                flag: "AMOUNT".into(),
            },
            2_000,
        )
        .await
        .unwrap();
    store
        .record_outcome(
            b,
            Outcome::Failed {
                reason: "DECLINED".into(),
            },
            2_001,
        )
        .await
        .unwrap();
    // A change that is no change writes nothing.
    store
        .record_outcome(b, Outcome::Unknown, 2_002)
        .await
        .unwrap();
    let findings = [finding(
        "o-a",
        Category::AmountMismatch,
        Some(1_000),
        Some(1_500),
    )];
    store
        .queue_exceptions(&findings, &period(), 3_000)
        .await
        .unwrap();

    assert!(
        store.payment_events(0, 10).await.unwrap().is_empty(),
        "nothing published yet"
    );
    assert_eq!(store.publish_events().await.unwrap(), 6);
    assert_eq!(store.publish_events().await.unwrap(), 0);
    let events = store.payment_events(0, 10).await.unwrap();
    let seen: Vec<(Option<i64>, &str, &str)> = events
        .iter()
        .map(|e| (e.position, e.order_key.as_str(), e.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (Some(1), "o-a", "payment.created"),
            (Some(2), "o-b", "payment.created"),
            (Some(3), "o-a", "payment.unknown"),
            (Some(4), "o-a", "payment.flagged"),
            (Some(5), "o-b", "payment.failed"),
            (Some(6), "o-a", "reconciliation.finding"),
        ]
    );
    assert_eq!(events[3].flag.as_deref(), Some("AMOUNT"));
    assert_eq!(events[4].failure_reason.as_deref(), Some("DECLINED"));
    assert_eq!(
        (events[5].finding.as_deref(), events[5].external_amount),
        (Some("AMOUNT_MISMATCH"), Some(1_500))
    );
    assert_eq!(
        store.payment_events(4, 10).await.unwrap().len(),
        2,
        "paged by position"
    );

    // Only each order's head is claimed; the next once the head is delivered.
    let heads = store
        .claim_deliveries(10_000, lease(20_000), 10)
        .await
        .unwrap();
    let kinds: Vec<&str> = heads.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["payment.created", "payment.created"]);
    assert!(
        store
            .claim_deliveries(10_000, lease(20_000), 10)
            .await
            .unwrap()
            .is_empty(),
        "leased"
    );
    store.delivered(heads[0].id, 204, 10_001).await.unwrap();
    let failed = AttemptFailed {
        status: Some(500),
        error: "answered 500",
        next_attempt_at: None,
    };
    store.attempt_failed(heads[1].id, &failed).await.unwrap();
    let next = store
        .claim_deliveries(10_002, lease(20_000), 10)
        .await
        .unwrap();
    let kinds: Vec<&str> = next.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["payment.unknown"],
        "o-b waits behind its dead letter"
    );
    let backlog = store.webhook_backlog(10).await.unwrap();
    assert_eq!(
        (backlog.pending, backlog.dead, backlog.oldest_at),
        (4, 1, Some(2_000))
    );
    assert_eq!(backlog.dead_letters[0].id, heads[1].id);
    assert!(store.redeliver(heads[1].id, 10_003).await.unwrap());
    assert!(
        !store.redeliver(heads[1].id, 10_003).await.unwrap(),
        "no longer dead"
    );
    let again = store
        .claim_deliveries(10_004, lease(20_000), 10)
        .await
        .unwrap();
    assert_eq!(
        again.iter().map(|e| e.id).collect::<Vec<_>>(),
        [heads[1].id]
    );
    assert_eq!(again[0].attempts, 1, "counted afresh");

    // A lease that ran out is claimed again, as it was.
    let retaken = store
        .claim_deliveries(30_000, lease(40_000), 10)
        .await
        .unwrap();
    assert_eq!(
        retaken.iter().map(|e| e.id).collect::<Vec<_>>(),
        [heads[1].id, next[0].id]
    );

    store
        .set_endpoint_disabled("https://shop.example/h", Some((5, "answered 410 Gone")))
        .await
        .unwrap();
    assert_eq!(
        store
            .endpoint_disabled("https://shop.example/h")
            .await
            .unwrap(),
        Some((5, "answered 410 Gone".to_owned()))
    );
    store
        .set_endpoint_disabled("https://shop.example/h", None)
        .await
        .unwrap();
    assert_eq!(
        store
            .endpoint_disabled("https://shop.example/h")
            .await
            .unwrap(),
        None
    );
}

fn new_payment(order_id: &str) -> NewPayment {
    NewPayment {
        order_id: order_id.into(),
        user_id: "user-1".into(),
        payment_key: "pk".into(),
        amount: 1000,
        event_id: None,
        confirm_key: "ck-test".into(),
        now_ms: 1_000,
    }
}

fn claim(hash: &str) -> IdempotencyClaim {
    IdempotencyClaim {
        user_id: "user-1".into(),
        key: "key-1".into(),
        request_hash: hash.into(),
        lease_ms: 1_000,
        retain_ms: 10_000,
    }
}

async fn a_pending_payment_is_inserted_and_read_back_by_its_owner_only(store: &dyn Store) {
    let inserted = store.insert_pending(new_payment("o-1")).await.unwrap();
    assert_eq!(inserted.status, PaymentStatus::Pending);
    assert_eq!(
        (
            inserted.created_at,
            inserted.updated_at,
            inserted.approved_at
        ),
        (1_000, 1_000, None)
    );
    let read = store.payment_by_order("user-1", "o-1").await.unwrap();
    assert_eq!(read, Some(inserted));
    assert_eq!(store.payment_by_order("user-2", "o-1").await.unwrap(), None);
    assert_eq!(store.payment_by_order("user-1", "o-2").await.unwrap(), None);
}

async fn an_order_id_is_paid_at_most_once(store: &dyn Store) {
    store.insert_pending(new_payment("o-1")).await.unwrap();
    let again = store.insert_pending(new_payment("o-1")).await;
    assert!(
        matches!(again, Err(StoreError::DuplicateOrder)),
        "{again:?}"
    );
    let other_user = NewPayment {
        user_id: "user-2".into(),
        ..new_payment("o-1")
    };
    let again = store.insert_pending(other_user).await;
    assert!(
        matches!(again, Err(StoreError::DuplicateOrder)),
        "{again:?}"
    );
}

async fn an_outcome_settles_a_pending_payment_once(store: &dyn Store) {
    let id = store
        .insert_pending(new_payment("o-1"))
        .await
        .unwrap()
        .payment_id;
    let approved = store
        .record_outcome(id, Outcome::Approved { approved_at: 2_000 }, 2_001)
        .await
        .unwrap();
    assert_eq!(approved.status, PaymentStatus::Approved);
    assert_eq!(approved.approved_at, Some(2_000));
    assert_eq!(approved.updated_at, 2_001);
    let late = store
        .record_outcome(
            id,
            Outcome::Failed {
                reason: "DECLINED".into(),
            },
            3_000,
        )
        .await
        .unwrap();
    assert_eq!(late, approved);
}

async fn a_nonce_is_used_once_until_it_is_purged_as_stale(store: &dyn Store) {
    assert!(store.first_use_of_nonce("n-1", 1_000).await.unwrap());
    assert!(
        !store.first_use_of_nonce("n-1", 1_000).await.unwrap(),
        "a replay"
    );
    assert!(store.first_use_of_nonce("n-2", 5_000).await.unwrap());
    assert_eq!(
        store.purge_edge_nonces(1_000).await.unwrap(),
        0,
        "not yet stale"
    );
    assert_eq!(store.purge_edge_nonces(1_001).await.unwrap(), 1);
    assert!(
        store.first_use_of_nonce("n-1", 9_000).await.unwrap(),
        "forgotten"
    );
    assert!(
        !store.first_use_of_nonce("n-2", 9_000).await.unwrap(),
        "still kept"
    );
}

async fn each_outcome_is_recorded_as_it_is(store: &dyn Store) {
    let spec = EventSpec {
        event_id: "ev-1".into(),
        stock: 10,
        amount: 9_007_199_254_740_993,
    };
    store.upsert_event(&spec, 1).await.unwrap();
    let with_event = NewPayment {
        event_id: Some("ev-1".into()),
        amount: 9_007_199_254_740_993,
        ..new_payment("o-1")
    };
    let failed = store.insert_pending(with_event).await.unwrap();
    assert_eq!(failed.event_id.as_deref(), Some("ev-1"));
    assert_eq!(failed.amount, 9_007_199_254_740_993);
    let failed = store
        .record_outcome(
            failed.payment_id,
            Outcome::Failed {
                reason: "CARD_DECLINED".into(),
            },
            2_000,
        )
        .await
        .unwrap();
    assert_eq!(failed.status, PaymentStatus::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some("CARD_DECLINED"));
    assert_eq!(failed.approved_at, None);

    let unknown = store.insert_pending(new_payment("o-2")).await.unwrap();
    let unknown = store
        .record_outcome(unknown.payment_id, Outcome::Unknown, 2_000)
        .await
        .unwrap();
    assert_eq!(unknown.status, PaymentStatus::Unknown);
    assert_eq!((unknown.failure_reason, unknown.approved_at), (None, None));
    assert_eq!(
        store.payment_by_order("user-1", "o-1").await.unwrap(),
        Some(failed)
    );
}

async fn an_outcome_for_no_payment_is_no_such_payment(store: &dyn Store) {
    let missing = store.record_outcome(42, Outcome::Unknown, 1).await;
    assert!(
        matches!(missing, Err(StoreError::NoSuchPayment(42))),
        "{missing:?}"
    );
}

async fn recent_payments_are_the_users_own_newest_first(store: &dyn Store) {
    for order in ["o-1", "o-2", "o-3"] {
        store.insert_pending(new_payment(order)).await.unwrap();
    }
    let other = NewPayment {
        user_id: "user-2".into(),
        ..new_payment("o-4")
    };
    store.insert_pending(other).await.unwrap();
    let recent = store.recent_payments("user-1", 2).await.unwrap();
    let orders: Vec<_> = recent.iter().map(|p| p.order_id.as_str()).collect();
    assert_eq!(orders, ["o-3", "o-2"]);
    assert!(store
        .recent_payments("user-3", 10)
        .await
        .unwrap()
        .is_empty());
}

async fn a_user_name_is_taken_once_and_its_password_can_change(store: &dyn Store) {
    let user = User {
        id: "usr-1".into(),
        username: "demo".into(),
        password_hash: "h1".into(),
    };
    store.insert_user(&user, 1).await.unwrap();
    let again = User {
        id: "usr-2".into(),
        ..user.clone()
    };
    assert!(matches!(
        store.insert_user(&again, 2).await,
        Err(StoreError::DuplicateUser)
    ));
    assert!(store.set_password_hash("demo", "h2", 3).await.unwrap());
    assert!(!store.set_password_hash("nobody", "h2", 3).await.unwrap());
    let read = store.user_by_name("demo").await.unwrap().unwrap();
    assert_eq!(
        (read.id.as_str(), read.password_hash.as_str()),
        ("usr-1", "h2")
    );
    assert_eq!(store.user_by_name("nobody").await.unwrap(), None);
}

async fn an_idempotency_key_is_claimed_once_then_replayed(store: &dyn Store) {
    assert_eq!(
        store.claim_idempotency_key(&claim("h1"), 0).await.unwrap(),
        Claimed::Started
    );
    assert_eq!(
        store.claim_idempotency_key(&claim("h1"), 10).await.unwrap(),
        Claimed::InFlight { until_ms: 1_000 }
    );
    assert_eq!(
        store.claim_idempotency_key(&claim("h2"), 10).await.unwrap(),
        Claimed::Mismatch
    );
    let other_user = IdempotencyClaim {
        user_id: "user-2".into(),
        ..claim("h2")
    };
    assert_eq!(
        store.claim_idempotency_key(&other_user, 10).await.unwrap(),
        Claimed::Started,
        "keys belong to their user"
    );
    let response = StoredResponse {
        status: 201,
        body: r#"{"status":"APPROVED"}"#.into(),
    };
    store
        .finish_idempotency_key("user-1", "key-1", &response)
        .await
        .unwrap();
    assert_eq!(
        store
            .claim_idempotency_key(&claim("h1"), 5_000)
            .await
            .unwrap(),
        Claimed::Done(response)
    );
    assert_eq!(
        store
            .claim_idempotency_key(&claim("h2"), 5_000)
            .await
            .unwrap(),
        Claimed::Mismatch
    );
}

async fn a_claim_past_its_lease_is_taken_over_once(store: &dyn Store) {
    store.claim_idempotency_key(&claim("h1"), 0).await.unwrap();
    assert_eq!(
        store
            .claim_idempotency_key(&claim("h1"), 1_000)
            .await
            .unwrap(),
        Claimed::Resumed
    );
    assert_eq!(
        store
            .claim_idempotency_key(&claim("h1"), 1_001)
            .await
            .unwrap(),
        Claimed::InFlight { until_ms: 2_000 }
    );
}

async fn a_released_or_expired_key_starts_afresh(store: &dyn Store) {
    store.claim_idempotency_key(&claim("h1"), 0).await.unwrap();
    store
        .release_idempotency_key("user-1", "key-1")
        .await
        .unwrap();
    assert_eq!(
        store.claim_idempotency_key(&claim("h2"), 1).await.unwrap(),
        Claimed::Started
    );
    let response = StoredResponse {
        status: 202,
        body: "{}".into(),
    };
    store
        .finish_idempotency_key("user-1", "key-1", &response)
        .await
        .unwrap();
    store
        .release_idempotency_key("user-1", "key-1")
        .await
        .unwrap();
    assert_eq!(
        store.claim_idempotency_key(&claim("h2"), 2).await.unwrap(),
        Claimed::Done(response),
        "a finished key is not released"
    );
    assert_eq!(
        store
            .claim_idempotency_key(&claim("h3"), 10_001)
            .await
            .unwrap(),
        Claimed::Started,
        "kept for retain_ms only"
    );
    assert_eq!(store.purge_idempotency_keys(10_001).await.unwrap(), 0);
    assert_eq!(store.purge_idempotency_keys(10_002).await.unwrap(), 1);
}

async fn an_idempotency_record_is_read_without_claiming_the_key(store: &dyn Store) {
    assert_eq!(
        store.idempotency_record(&claim("h1"), 0).await.unwrap(),
        None
    );
    assert_eq!(
        store.claim_idempotency_key(&claim("h1"), 0).await.unwrap(),
        Claimed::Started,
        "reading made no record"
    );
    assert_eq!(
        store.idempotency_record(&claim("h1"), 10).await.unwrap(),
        Some(IdempotencyRecord::InFlight { until_ms: 1_000 })
    );
    assert_eq!(
        store.idempotency_record(&claim("h1"), 1_000).await.unwrap(),
        None,
        "a lease that ran out answers nothing"
    );
    assert_eq!(
        store.idempotency_record(&claim("h2"), 10).await.unwrap(),
        Some(IdempotencyRecord::Mismatch)
    );
    let response = StoredResponse {
        status: 201,
        body: "{}".into(),
    };
    store
        .finish_idempotency_key("user-1", "key-1", &response)
        .await
        .unwrap();
    assert_eq!(
        store.idempotency_record(&claim("h1"), 5_000).await.unwrap(),
        Some(IdempotencyRecord::Done(response))
    );
    assert_eq!(
        store
            .idempotency_record(&claim("h1"), 10_000)
            .await
            .unwrap(),
        None,
        "kept for retain_ms only"
    );
}

async fn a_payment_is_found_by_id_and_by_order_id_whoever_owns_it(store: &dyn Store) {
    let other_user = NewPayment {
        user_id: "user-2".into(),
        ..new_payment("o-1")
    };
    let inserted = store.insert_pending(other_user).await.unwrap();
    assert_eq!(inserted.recovery, RecoveryState::default());
    assert_eq!(
        store.payment_by_id(inserted.payment_id).await.unwrap(),
        inserted
    );
    assert_eq!(
        store.payment_by_order_id("o-1").await.unwrap(),
        Some(inserted)
    );
    assert_eq!(store.payment_by_order_id("o-2").await.unwrap(), None);
    let missing = store.payment_by_id(42).await;
    assert!(
        matches!(missing, Err(StoreError::NoSuchPayment(42))),
        "{missing:?}"
    );
}

async fn payments_with_a_status_are_listed_oldest_first(store: &dyn Store) {
    for order in ["o-1", "o-2", "o-3"] {
        let id = store
            .insert_pending(new_payment(order))
            .await
            .unwrap()
            .payment_id;
        if order != "o-1" {
            store
                .record_outcome(id, Outcome::Unknown, 2_000)
                .await
                .unwrap();
        }
    }
    let orders = |payments: Vec<origin::store::Payment>| {
        payments.into_iter().map(|p| p.order_id).collect::<Vec<_>>()
    };
    let unknown = store
        .payments_with_status(PaymentStatus::Unknown, 10)
        .await
        .unwrap();
    assert_eq!(orders(unknown), ["o-2", "o-3"]);
    let first = store
        .payments_with_status(PaymentStatus::Unknown, 1)
        .await
        .unwrap();
    assert_eq!(orders(first), ["o-2"]);
    let pending = store
        .payments_with_status(PaymentStatus::Pending, 10)
        .await
        .unwrap();
    assert_eq!(orders(pending), ["o-1"]);
    let approved = store
        .payments_with_status(PaymentStatus::Approved, 10)
        .await
        .unwrap();
    assert!(approved.is_empty());
}

/// Inserts a payment created at `created_at` and gives it `outcome`; returns its id.
async fn payment_at(
    store: &dyn Store,
    order_id: &str,
    created_at: i64,
    outcome: Option<Outcome>,
) -> i64 {
    let new = NewPayment {
        now_ms: created_at,
        ..new_payment(order_id)
    };
    let id = store.insert_pending(new).await.unwrap().payment_id;
    if let Some(outcome) = outcome {
        store.record_outcome(id, outcome, created_at).await.unwrap();
    }
    id
}

async fn approved_payments_of_a_period_are_read_by_approval_time(store: &dyn Store) {
    let approved = |approved_at| Some(Outcome::Approved { approved_at });
    payment_at(store, "before", 1_000, approved(9_999)).await;
    payment_at(store, "first", 1_000, approved(10_000)).await;
    payment_at(store, "last", 1_000, approved(19_999)).await;
    payment_at(store, "after", 1_000, approved(20_000)).await;
    payment_at(
        store,
        "failed",
        15_000,
        Some(Outcome::Failed {
            reason: "DECLINED".into(),
        }),
    )
    .await;
    payment_at(store, "unknown", 15_000, Some(Outcome::Unknown)).await;
    payment_at(store, "pending", 15_000, None).await;
    let mut found = store.approved_between(10_000, 20_000).await.unwrap();
    found.sort();
    assert_eq!(
        found,
        [("first".to_owned(), 1000), ("last".to_owned(), 1000)]
    );
}

fn finding(
    order_id: &str,
    category: Category,
    internal: Option<i64>,
    external: Option<i64>,
) -> Finding {
    Finding {
        order_id: order_id.into(),
        category,
        internal_amount: internal,
        external_amount: external,
        line: external.map(|_| 7),
    }
}

fn period() -> Period {
    let day = "2026-11-30".parse().unwrap();
    Period::new(day, day).unwrap()
}

async fn a_finding_is_queued_once_and_resolved_once(store: &dyn Store) {
    let findings = [
        finding("o-1", Category::AmountMismatch, Some(1_000), Some(1_500)),
        finding("o-2", Category::InternalOnly, Some(2_000), None),
        finding("ghost", Category::ExternalOnly, None, Some(700)),
        finding("ghost", Category::ExternalOnly, None, Some(700)),
    ];
    assert_eq!(
        store
            .queue_exceptions(&findings, &period(), 5_000)
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        store
            .queue_exceptions(&findings, &period(), 6_000)
            .await
            .unwrap(),
        0,
        "known findings are not queued again"
    );
    assert_eq!(store.pending_reconciliation_items().await.unwrap(), 3);
    let pending = store
        .reconciliation_items(Some(ItemStatus::Pending), 0, 10)
        .await
        .unwrap();
    let seen: Vec<_> = pending
        .iter()
        .map(|item| {
            (
                item.order_id.as_str(),
                item.category,
                item.internal_amount,
                item.external_amount,
                item.line,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "o-1",
                Category::AmountMismatch,
                Some(1_000),
                Some(1_500),
                Some(7)
            ),
            ("o-2", Category::InternalOnly, Some(2_000), None, None),
            ("ghost", Category::ExternalOnly, None, Some(700), Some(7)),
        ]
    );
    let first = &pending[0];
    assert_eq!(
        (
            first.status,
            first.created_at,
            first.period,
            first.note.as_deref()
        ),
        (ItemStatus::Pending, 5_000, period(), None)
    );

    let Resolution::Resolved(resolved) = store
        .resolve_reconciliation_item(first.id, "PG corrected it", 7_000)
        .await
        .unwrap()
    else {
        panic!("a pending item is resolved");
    };
    assert_eq!(
        (
            resolved.status,
            resolved.note.as_deref(),
            resolved.resolved_at
        ),
        (ItemStatus::Resolved, Some("PG corrected it"), Some(7_000))
    );
    let again = store
        .resolve_reconciliation_item(first.id, "again", 8_000)
        .await
        .unwrap();
    assert_eq!(
        again,
        Resolution::AlreadyResolved(resolved.clone()),
        "the first note stays"
    );
    assert_eq!(
        store
            .resolve_reconciliation_item(9_999, "none", 8_000)
            .await
            .unwrap(),
        Resolution::NotFound
    );

    assert_eq!(store.pending_reconciliation_items().await.unwrap(), 2);
    assert_eq!(
        store
            .queue_exceptions(&findings, &period(), 9_000)
            .await
            .unwrap(),
        0,
        "a resolved finding does not come back"
    );
    let changed = [finding(
        "o-1",
        Category::AmountMismatch,
        Some(1_000),
        Some(1_600),
    )];
    assert_eq!(
        store
            .queue_exceptions(&changed, &period(), 9_000)
            .await
            .unwrap(),
        1,
        "a changed finding is new"
    );
    let resolved_items = store
        .reconciliation_items(Some(ItemStatus::Resolved), 0, 10)
        .await
        .unwrap();
    assert_eq!(resolved_items, [resolved]);
    assert_eq!(
        store.reconciliation_items(None, 0, 10).await.unwrap().len(),
        4
    );
}

async fn a_match_closes_pending_mismatches_and_internal_onlies(store: &dyn Store) {
    let findings = [
        finding("o-1", Category::AmountMismatch, Some(1_000), Some(1_500)),
        finding("o-2", Category::InternalOnly, Some(2_000), None),
        finding("o-3", Category::ExternalOnly, None, Some(3_000)),
        finding("o-4", Category::InternalOnly, Some(4_000), None),
    ];
    store
        .queue_exceptions(&findings, &period(), 5_000)
        .await
        .unwrap();
    let matched = ["o-1", "o-2", "o-3", "o-9"].map(String::from);
    assert_eq!(store.close_matched(&matched, 6_000).await.unwrap(), 2);
    assert_eq!(store.close_matched(&matched, 7_000).await.unwrap(), 0);
    let items = store.reconciliation_items(None, 0, 10).await.unwrap();
    let states: Vec<_> = items
        .iter()
        .map(|item| (item.order_id.as_str(), item.status, item.note.as_deref()))
        .collect();
    assert_eq!(
        states,
        [
            ("o-1", ItemStatus::Resolved, Some(CLOSED_BY_A_MATCH)),
            ("o-2", ItemStatus::Resolved, Some(CLOSED_BY_A_MATCH)),
            ("o-3", ItemStatus::Pending, None),
            ("o-4", ItemStatus::Pending, None),
        ]
    );
}

async fn the_queue_takes_findings_by_the_thousand_and_lists_them_in_pages(store: &dyn Store) {
    let findings: Vec<_> = (0..1_234)
        .map(|n| {
            finding(
                &format!("ghost-{n:04}"),
                Category::ExternalOnly,
                None,
                Some(n),
            )
        })
        .collect();
    assert_eq!(
        store
            .queue_exceptions(&findings, &period(), 5_000)
            .await
            .unwrap(),
        1_234
    );
    let orders: Vec<_> = findings
        .iter()
        .map(|finding| finding.order_id.clone())
        .collect();
    assert_eq!(
        store.close_matched(&orders, 6_000).await.unwrap(),
        0,
        "EXTERNAL_ONLY is not closed by a match"
    );
    let mut after = 0;
    let mut listed = Vec::new();
    loop {
        let page = store
            .reconciliation_items(Some(ItemStatus::Pending), after, 500)
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        after = last.id;
        listed.extend(page.into_iter().map(|item| item.order_id));
    }
    assert_eq!(listed, orders);
}

/// A recovery lease of the test's one holder, until `until_ms`.
fn lease(until_ms: i64) -> Lease<'static> {
    Lease {
        holder: "holder-a",
        until_ms,
    }
}

fn ids(payments: &[origin::store::Payment]) -> Vec<i64> {
    payments.iter().map(|p| p.payment_id).collect()
}

async fn recovery_claims_due_unsettled_payments_once_per_lease(store: &dyn Store) {
    let unknown = payment_at(store, "o-1", 1_000, Some(Outcome::Unknown)).await;
    let stale = payment_at(store, "o-2", 1_000, None).await;
    payment_at(
        store,
        "o-3",
        1_000,
        Some(Outcome::Approved { approved_at: 1_000 }),
    )
    .await;
    let young = payment_at(store, "o-4", 5_000, None).await;

    // PENDING counts only when created before `pending_before_ms`: younger, its
    // confirm may still be running.
    let claimed = store
        .claim_for_recovery(10_000, 2_000, lease(20_000), 10)
        .await
        .unwrap();
    assert_eq!(ids(&claimed), [unknown, stale]);
    let again = store
        .claim_for_recovery(10_001, 9_000, lease(20_000), 10)
        .await
        .unwrap();
    assert_eq!(
        ids(&again),
        [young],
        "leased payments are not claimed again; the young one, older now, is"
    );
    let after_lease = store
        .claim_for_recovery(20_000, 2_000, lease(30_000), 1)
        .await
        .unwrap();
    assert_eq!(ids(&after_lease), [unknown], "a page holds at most `limit`");
    assert_eq!(
        ids(&store
            .claim_for_recovery(20_000, 2_000, lease(30_000), 10)
            .await
            .unwrap()),
        [stale]
    );
}

async fn a_recovery_lease_is_renewed_only_by_its_holder_before_it_runs_out(store: &dyn Store) {
    let [a, b, c] = [
        payment_at(store, "o-1", 1_000, Some(Outcome::Unknown)).await,
        payment_at(store, "o-2", 1_000, Some(Outcome::Unknown)).await,
        payment_at(store, "o-3", 1_000, Some(Outcome::Unknown)).await,
    ];
    let claimed = store
        .claim_for_recovery(10_000, 2_000, lease(13_000), 2)
        .await
        .unwrap();
    assert_eq!(ids(&claimed), [a, b]);
    // Renewed in time: still held past the first lease's end.
    let renewed = store
        .renew_recovery_leases(&[a, b, c], lease(16_000), 12_000)
        .await
        .unwrap();
    assert_eq!(sorted(renewed), [a, b], "c was never held");
    assert!(store
        .claim_for_recovery(14_000, 2_000, lease(20_000), 1)
        .await
        .unwrap()
        .iter()
        .all(|payment| payment.payment_id == c));
    // Another holder renews nothing of ours; a lease that ran out is not renewed.
    let other = Lease {
        holder: "holder-b",
        until_ms: 30_000,
    };
    assert!(store
        .renew_recovery_leases(&[a, b], other, 15_000)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .renew_recovery_leases(&[a, b], lease(30_000), 16_000)
        .await
        .unwrap()
        .is_empty());
    // Run out, they are anyone's: another holder claims them and keeps them.
    let taken = store
        .claim_for_recovery(16_000, 2_000, other, 10)
        .await
        .unwrap();
    assert_eq!(ids(&taken), [a, b]);
    assert!(store
        .renew_recovery_leases(&[a, b], lease(30_000), 17_000)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        sorted(
            store
                .renew_recovery_leases(&[a, b], other, 17_000)
                .await
                .unwrap()
        ),
        [a, b]
    );
    // The first holder, its lease lost, records what it learned: the decision stands,
    // but the lease stays the other's, so no third recovery takes the payment.
    let later = Decision::Later {
        state: RecoveryState {
            next_attempt_at: 17_500,
            ..RecoveryState::default()
        },
    };
    let recorded = store.record_recovery(a, &later, "holder-a", 17_100).await;
    assert!(recorded.unwrap().is_some());
    let third = Lease {
        holder: "holder-c",
        until_ms: 40_000,
    };
    assert!(store
        .claim_for_recovery(18_000, 2_000, third, 10)
        .await
        .unwrap()
        .is_empty());
    // Recorded by its holder, the lease ends, and the payment is due again.
    let recorded = store.record_recovery(a, &later, "holder-b", 18_100).await;
    assert!(recorded.unwrap().is_some());
    let claimed = store.claim_for_recovery(18_200, 2_000, third, 10).await;
    assert_eq!(ids(&claimed.unwrap()), [a]);
}

fn sorted(mut ids: Vec<i64>) -> Vec<i64> {
    ids.sort_unstable();
    ids
}

async fn recovery_records_its_decision_on_unsettled_payments_only(store: &dyn Store) {
    let first = payment_at(store, "o-1", 1_000, None).await;
    let second = payment_at(store, "o-2", 1_000, Some(Outcome::Unknown)).await;
    let claimed = store
        .claim_for_recovery(10_000, 2_000, lease(100_000), 10)
        .await
        .unwrap();
    assert_eq!(ids(&claimed), [first, second]);

    let later = RecoveryState {
        attempts: 1,
        not_found_count: 1,
        last_not_found_at: Some(10_000),
        next_attempt_at: 50_000,
        flag: Some("PG_UNREACHABLE".into()),
        refund_due: false,
    };
    let asked_later = store
        .record_recovery(
            first,
            &Decision::Later {
                state: later.clone(),
            },
            "holder-a",
            10_001,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        asked_later.status,
        PaymentStatus::Unknown,
        "PENDING no more"
    );
    assert_eq!(asked_later.recovery, later);
    assert_eq!(asked_later.updated_at, 10_001);
    // Its lease ended with the record; it is due again at its next attempt only.
    assert!(store
        .claim_for_recovery(49_999, 2_000, lease(100_000), 10)
        .await
        .unwrap()
        .is_empty());
    let due = store
        .claim_for_recovery(50_000, 2_000, lease(100_000), 10)
        .await
        .unwrap();
    assert_eq!(ids(&due), [first]);

    let approved = store
        .record_recovery(
            first,
            &Decision::Approve {
                approved_at: 60_000,
            },
            "holder-a",
            60_001,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approved.status, PaymentStatus::Approved);
    assert_eq!(approved.approved_at, Some(60_000));
    assert_eq!(
        approved.recovery.flag.as_deref(),
        Some("PG_UNREACHABLE"),
        "a flag, once set, stays"
    );
    let settled = store
        .record_recovery(
            first,
            &Decision::Fail { reason: "DECLINED" },
            "holder-a",
            60_002,
        )
        .await
        .unwrap();
    assert_eq!(settled, None, "a settled payment is left as it is");
    assert_eq!(store.payment_by_id(first).await.unwrap(), approved);

    let third = payment_at(store, "o-3", 1_000, Some(Outcome::Unknown)).await;
    let failed = store
        .record_recovery(
            third,
            &Decision::Fail {
                reason: "NOT_FOUND_AT_PG",
            },
            "holder-a",
            70_000,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, PaymentStatus::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some("NOT_FOUND_AT_PG"));
    assert_eq!(failed.updated_at, 70_000);
}

/// Two origin instances on one database, opened (and migrated) at the same time.
async fn two_instances(server: &TestPostgres) -> [Arc<dyn Store>; 2] {
    let (first, second) = tokio::join!(
        store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1")),
        store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1"))
    );
    [first.unwrap(), second.unwrap()]
}

fn for_event(order_id: &str, event_id: &str, amount: i64) -> NewPayment {
    NewPayment {
        event_id: Some(event_id.into()),
        amount,
        ..new_payment(order_id)
    }
}

async fn an_event_sells_its_stock_and_a_failure_gives_a_unit_back(store: &dyn Store) {
    let spec = EventSpec {
        event_id: "e-1".into(),
        stock: 2,
        amount: 700,
    };
    store.upsert_event(&spec, 1).await.unwrap();
    assert!(matches!(
        store.insert_pending(for_event("o-0", "e-1", 701)).await,
        Err(StoreError::WrongAmount { price: 700 })
    ));
    let first = store
        .insert_pending(for_event("o-1", "e-1", 700))
        .await
        .unwrap();
    let second = store
        .insert_pending(for_event("o-2", "e-1", 700))
        .await
        .unwrap();
    assert!(matches!(
        store.insert_pending(for_event("o-3", "e-1", 700)).await,
        Err(StoreError::SoldOut)
    ));
    store
        .record_outcome(first.payment_id, Outcome::Approved { approved_at: 5 }, 5)
        .await
        .unwrap();
    let view = store.event("e-1").await.unwrap().unwrap();
    assert_eq!((view.stock, view.reserved, view.sold), (2, 1, 1));
    assert!(matches!(
        store
            .upsert_event(
                &EventSpec {
                    stock: 1,
                    ..spec.clone()
                },
                6
            )
            .await,
        Err(StoreError::StockBelowCommitted { committed: 2 })
    ));
    let failed = Outcome::Failed {
        reason: "DECLINED".into(),
    };
    store
        .record_outcome(second.payment_id, failed, 7)
        .await
        .unwrap();
    assert_eq!(store.event("e-1").await.unwrap().unwrap().reserved, 0);
    store
        .insert_pending(for_event("o-3", "e-1", 700))
        .await
        .unwrap();
    assert!(matches!(
        store.insert_pending(for_event("o-4", "e-1", 700)).await,
        Err(StoreError::SoldOut)
    ));
    assert_eq!(store.event("nope").await.unwrap(), None);
    let unknown = store.insert_pending(for_event("o-5", "nope", 1)).await;
    assert!(
        matches!(unknown, Err(StoreError::UnknownEvent)),
        "an event nobody created has no stock to sell: {unknown:?}"
    );
    assert_eq!(store.payment_by_order("user-1", "o-5").await.unwrap(), None);
}

async fn a_late_approval_is_refund_due_until_refunded(store: &dyn Store) {
    let id = store
        .insert_pending(new_payment("o-1"))
        .await
        .unwrap()
        .payment_id;
    assert!(
        !store.mark_refund_due(id, 10, 1).await.unwrap(),
        "not FAILED"
    );
    assert_eq!(store.record_refunded(id, "note", 1).await.unwrap(), None);
    let failed = Outcome::Failed {
        reason: "NOT_FOUND_AT_PG".into(),
    };
    store.record_outcome(id, failed, 2).await.unwrap();
    assert!(store.mark_refund_due(id, 10, 3).await.unwrap());
    let due = store
        .claim_for_recovery(10, 0, lease(100), 10)
        .await
        .unwrap();
    assert_eq!(ids(&due), [id]);
    assert!(due[0].recovery.refund_due);
    let refunded = store
        .record_refunded(id, "cancelled", 11)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(refunded.status, PaymentStatus::Refunded);
    assert_eq!(refunded.recovery.flag.as_deref(), Some("cancelled"));
    assert!(store
        .claim_for_recovery(1_000, 0, lease(2_000), 10)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn two_instances_never_sell_an_event_unit_twice() {
    let server = TestPostgres::start();
    let instances = two_instances(&server).await;
    let spec = EventSpec {
        event_id: "drop".into(),
        stock: 5,
        amount: 700,
    };
    instances[0].upsert_event(&spec, 1).await.unwrap();
    let next = std::sync::atomic::AtomicU32::new(0);
    let inserts = race(&instances, 20, |store| {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            store
                .insert_pending(for_event(&format!("o-{n}"), "drop", 700))
                .await
        }
    })
    .await;
    let sold = inserts.iter().filter(|insert| insert.is_ok()).count();
    let sold_out = inserts
        .iter()
        .filter(|insert| matches!(insert, Err(StoreError::SoldOut)))
        .count();
    assert_eq!((sold, sold_out), (5, 35));
    let view = instances[1].event("drop").await.unwrap().unwrap();
    assert_eq!((view.reserved, view.sold), (5, 0));
}

/// `per_instance` calls of `call` on each instance, all in flight at once.
async fn race<T, F, Fut>(instances: &[Arc<dyn Store>; 2], per_instance: usize, call: F) -> Vec<T>
where
    F: Fn(Arc<dyn Store>) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let calls = instances
        .iter()
        .flat_map(|store| std::iter::repeat_n(store, per_instance))
        .map(|store| call(store.clone()));
    join_all(calls).await
}

#[tokio::test]
async fn two_instances_claim_one_key_exactly_once() {
    let server = TestPostgres::start();
    let instances = two_instances(&server).await;
    for round in 0..5 {
        let key = IdempotencyClaim {
            key: format!("key-{round}"),
            ..claim("h1")
        };
        let claims = race(&instances, 4, |store| {
            let key = key.clone();
            async move { store.claim_idempotency_key(&key, 0).await.unwrap() }
        })
        .await;
        let started = claims.iter().filter(|c| **c == Claimed::Started).count();
        let in_flight = claims
            .iter()
            .filter(|c| **c == Claimed::InFlight { until_ms: 1_000 })
            .count();
        assert_eq!((started, in_flight), (1, 7), "round {round}: {claims:?}");
    }
}

#[tokio::test]
async fn two_instances_take_over_an_expired_claim_exactly_once() {
    let server = TestPostgres::start();
    let instances = two_instances(&server).await;
    for round in 0..5 {
        let key = IdempotencyClaim {
            key: format!("key-{round}"),
            ..claim("h1")
        };
        let first = instances[0].claim_idempotency_key(&key, 0).await.unwrap();
        assert_eq!(first, Claimed::Started);
        let claims = race(&instances, 4, |store| {
            let key = key.clone();
            async move { store.claim_idempotency_key(&key, 5_000).await.unwrap() }
        })
        .await;
        let resumed = claims.iter().filter(|c| **c == Claimed::Resumed).count();
        let in_flight = claims
            .iter()
            .filter(|c| **c == Claimed::InFlight { until_ms: 6_000 })
            .count();
        assert_eq!((resumed, in_flight), (1, 7), "round {round}: {claims:?}");
    }
}

#[tokio::test]
async fn two_instances_insert_one_order_exactly_once() {
    let server = TestPostgres::start();
    let instances = two_instances(&server).await;
    for round in 0..5 {
        let order = format!("o-{round}");
        let inserts = race(&instances, 4, |store| {
            let payment = new_payment(&order);
            async move { store.insert_pending(payment).await }
        })
        .await;
        let inserted: Vec<_> = inserts.iter().filter_map(|i| i.as_ref().ok()).collect();
        let duplicates = inserts
            .iter()
            .filter(|i| matches!(i, Err(StoreError::DuplicateOrder)))
            .count();
        assert_eq!((inserted.len(), duplicates), (1, 7), "round {round}");
        let read = instances[1]
            .payment_by_order("user-1", &order)
            .await
            .unwrap();
        assert_eq!(read.as_ref(), inserted.first().copied());
    }
}

#[tokio::test]
async fn two_instances_never_claim_one_payment_for_recovery_at_once() {
    let server = TestPostgres::start();
    let instances = two_instances(&server).await;
    for round in 0..5 {
        // Earlier rounds' payments stay leased: each round races for its own 24.
        let mut all = Vec::new();
        for n in 0..24 {
            let order = format!("o-{round}-{n}");
            all.push(payment_at(instances[0].as_ref(), &order, 1_000, None).await);
        }
        let pages = race(&instances, 4, |store| async move {
            store
                .claim_for_recovery(10_000, 2_000, lease(100_000), 3)
                .await
                .unwrap()
        })
        .await;
        let mut claimed: Vec<i64> = pages.iter().flat_map(|page| ids(page)).collect();
        let rest = instances[1]
            .claim_for_recovery(10_000, 2_000, lease(100_000), 100)
            .await
            .unwrap();
        claimed.extend(ids(&rest));
        claimed.sort_unstable();
        assert_eq!(
            claimed, all,
            "round {round}: each payment claimed exactly once"
        );
    }
}

/// Two raw sessions on the server's database, outside any store's pool.
async fn two_sessions(server: &TestPostgres) -> (PgConnection, PgConnection) {
    let first = PgConnection::connect(server.url()).await.unwrap();
    let second = PgConnection::connect(server.url()).await.unwrap();
    (first, second)
}

async fn execute(session: &mut PgConnection, sql: &str) -> Result<(), StoreError> {
    sqlx::raw_sql(sql)
        .execute(session)
        .await
        .map(drop)
        .map_err(StoreError::from)
}

#[tokio::test]
async fn a_serialization_failure_is_transient() {
    let server = TestPostgres::start();
    let (mut first, mut second) = two_sessions(&server).await;
    execute(
        &mut first,
        "CREATE TABLE t (id INT PRIMARY KEY, n INT); INSERT INTO t VALUES (1, 0)",
    )
    .await
    .unwrap();
    execute(
        &mut first,
        "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT n FROM t WHERE id = 1",
    )
    .await
    .unwrap();
    execute(&mut second, "UPDATE t SET n = n + 1 WHERE id = 1")
        .await
        .unwrap();
    let err = execute(&mut first, "UPDATE t SET n = n + 1 WHERE id = 1")
        .await
        .unwrap_err();
    assert!(err.is_transient(), "{err}");
    assert!(err.to_string().contains("could not serialize"), "{err}");
}

#[tokio::test]
async fn a_deadlock_is_transient() {
    let server = TestPostgres::start();
    let (mut first, mut second) = two_sessions(&server).await;
    execute(
        &mut first,
        "CREATE TABLE t (id INT PRIMARY KEY, n INT); INSERT INTO t VALUES (1, 0), (2, 0)",
    )
    .await
    .unwrap();
    for session in [&mut first, &mut second] {
        // A superuser setting: the test server's user is one.
        execute(session, "SET deadlock_timeout = '50ms'")
            .await
            .unwrap();
    }
    execute(&mut first, "BEGIN; UPDATE t SET n = 1 WHERE id = 1")
        .await
        .unwrap();
    execute(&mut second, "BEGIN; UPDATE t SET n = 2 WHERE id = 2")
        .await
        .unwrap();
    let (one, two) = tokio::join!(
        execute(&mut first, "UPDATE t SET n = 1 WHERE id = 2"),
        execute(&mut second, "UPDATE t SET n = 2 WHERE id = 1"),
    );
    let err = match (one, two) {
        (Err(err), Ok(())) | (Ok(()), Err(err)) => err,
        other => panic!("one of the two is the deadlock's victim: {other:?}"),
    };
    assert!(err.is_transient(), "{err}");
    assert!(err.to_string().contains("deadlock detected"), "{err}");
}

/// Inserts a payment and locks its row in a transaction of a raw session.
async fn locked_payment(server: &TestPostgres, store: &dyn Store) -> (i64, PgConnection) {
    let id = store
        .insert_pending(new_payment("o-1"))
        .await
        .unwrap()
        .payment_id;
    let mut holder = PgConnection::connect(server.url()).await.unwrap();
    execute(
        &mut holder,
        &format!("BEGIN; SELECT id FROM payments WHERE id = {id} FOR UPDATE"),
    )
    .await
    .unwrap();
    (id, holder)
}

#[tokio::test]
async fn a_lock_wait_ends_at_the_lock_timeout_as_a_transient_error() {
    let server = TestPostgres::start();
    let store = store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1"))
        .await
        .unwrap();
    let (id, _holder) = locked_payment(&server, store.as_ref()).await;
    let started = Instant::now();
    let err = store
        .record_outcome(id, Outcome::Unknown, 2_000)
        .await
        .unwrap_err();
    let waited = started.elapsed();
    assert!(err.is_transient(), "{err}");
    assert!(err.to_string().contains("lock timeout"), "{err}");
    assert!(
        waited >= Duration::from_millis(2_900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[tokio::test]
async fn a_request_waits_for_a_connection_no_longer_than_the_acquire_timeout() {
    let server = TestPostgres::start();
    let store = store::open(server.url(), Duration::from_millis(100), keys::cipher("v1"))
        .await
        .unwrap();
    let (id, mut holder) = locked_payment(&server, store.as_ref()).await;
    // Every pooled connection waits on the locked row.
    let waiting = (0..MAX_CONNECTIONS).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.record_outcome(id, Outcome::Unknown, 2_000).await })
    });
    let waiting: Vec<_> = waiting.collect();
    let monitor = PgConnection::connect(server.url()).await.unwrap();
    let count_waiting = "SELECT count(*) FROM pg_stat_activity \
         WHERE application_name = 'origin' AND wait_event_type = 'Lock'";
    let monitor = tokio::sync::Mutex::new(monitor);
    eventually(
        "every connection waits on the lock",
        Duration::from_secs(2),
        Duration::from_millis(10),
        || async {
            let count: i64 = sqlx::query_scalar(count_waiting)
                .fetch_one(&mut *monitor.lock().await)
                .await
                .unwrap();
            if count == i64::from(MAX_CONNECTIONS) {
                Ok(())
            } else {
                Err(format!("{count} connections wait"))
            }
        },
    )
    .await;
    let started = Instant::now();
    let refused = store.recent_payments("user-1", 1).await;
    assert!(matches!(refused, Err(StoreError::Busy)), "{refused:?}");
    assert!(started.elapsed() < Duration::from_secs(1));

    execute(&mut holder, "ROLLBACK").await.unwrap();
    for call in waiting {
        match call.await.unwrap() {
            Ok(payment) => assert_eq!(payment.status, PaymentStatus::Unknown),
            // Only on a machine so slow that the lock outlasted the lock timeout.
            Err(err) => assert!(err.is_transient(), "{err}"),
        }
    }
    assert!(store.recent_payments("user-1", 1).await.is_ok());
}

/// A payment key is a credential at the PG: no payment's `Debug` shows it, so no log
/// line or panic message can.
#[tokio::test]
async fn debug_output_never_shows_a_payment_key() {
    let (store, _dir) = sqlite().await;
    let new = NewPayment {
        payment_key: "pk_live_secret".into(),
        ..new_payment("o-debug")
    };
    let stored = store.insert_pending(new.clone()).await.unwrap();
    assert_eq!(stored.payment_key, "pk_live_secret");
    for shown in [format!("{new:?}"), format!("{stored:?}")] {
        assert!(!shown.contains("pk_live_secret"), "{shown}");
        assert!(shown.contains("payment_key: <redacted>"), "{shown}");
        assert!(shown.contains("o-debug"), "{shown}");
    }
}
