//! Idempotency keys on both stores: claimed once then replayed, taken over past their
//! lease, released or expired, and read without being claimed.

use origin::store::{Claimed, IdempotencyClaim, IdempotencyRecord, Store, StoredResponse};

on_both_stores!(
    an_idempotency_key_is_claimed_once_then_replayed,
    a_claim_past_its_lease_is_taken_over_once,
    a_released_or_expired_key_starts_afresh,
    an_idempotency_record_is_read_without_claiming_the_key,
);

pub(crate) fn claim(hash: &str) -> IdempotencyClaim {
    IdempotencyClaim {
        user_id: "user-1".into(),
        key: "key-1".into(),
        request_hash: hash.into(),
        lease_ms: 1_000,
        retain_ms: 10_000,
    }
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
