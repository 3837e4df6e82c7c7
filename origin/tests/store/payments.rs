//! Payments on both stores: inserted and read back by their owner, paid at most once
//! per order, settled by an outcome once, found by id and by order id, listed by status;
//! edge nonces and users; and no payment's `Debug` showing its key.

use origin::policy::recovery::RecoveryState;
use origin::store::{EventSpec, NewPayment, Outcome, PaymentStatus, Store, StoreError, User};

on_both_stores!(
    a_nonce_is_used_once_until_it_is_purged_as_stale,
    a_pending_payment_is_inserted_and_read_back_by_its_owner_only,
    an_order_id_is_paid_at_most_once,
    an_outcome_settles_a_pending_payment_once,
    each_outcome_is_recorded_as_it_is,
    an_outcome_for_no_payment_is_no_such_payment,
    recent_payments_are_the_users_own_newest_first,
    a_user_name_is_taken_once_and_its_password_can_change,
    a_payment_is_found_by_id_and_by_order_id_whoever_owns_it,
    payments_with_a_status_are_listed_oldest_first,
);

pub(crate) fn new_payment(order_id: &str) -> NewPayment {
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

/// Inserts a payment created at `created_at` and gives it `outcome`; returns its id.
pub(crate) async fn payment_at(
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

/// A payment key is a credential at the PG: no payment's `Debug` shows it, so no log
/// line or panic message can.
#[tokio::test]
async fn debug_output_never_shows_a_payment_key() {
    let (store, _dir) = crate::store::sqlite().await;
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
