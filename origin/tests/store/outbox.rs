//! The outbox on both stores: every change writes its event, published in order, and
//! each order's events delivered one at a time, dead letters redelivered, endpoints disabled.

use origin::policy::settlement::reconcile::Category;
use origin::store::{Ack, Attempt, Claim, Failure, Lease, OutboxEvent, Outcome, Store};

use crate::store::payments::new_payment;
use crate::store::settlement::{finding, period};

on_both_stores!(
    every_change_writes_its_event_and_each_order_is_delivered_in_order,
    a_delivery_pass_publishes_what_was_committed_and_claims_it_in_one_write,
);

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
    let heads = claim(store, 10_000, lease(20_000)).await;
    let kinds: Vec<&str> = heads.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["payment.created", "payment.created"]);
    assert!(
        claim(store, 10_000, lease(20_000)).await.is_empty(),
        "leased"
    );
    let ack = Ack {
        id: heads[0].id,
        status: 204,
        at_ms: 10_001,
    };
    let failed = Failure {
        id: heads[1].id,
        status: Some(500),
        error: "answered 500".into(),
        next_attempt_at: None,
    };
    // One pass records both and claims: o-a's next event is claimed in the write that
    // acknowledged its head.
    let next = store
        .delivery_pass(
            &[Attempt::Delivered(ack), Attempt::Failed(failed)],
            Some(Claim {
                now_ms: 10_002,
                lease: lease(20_000),
                limit: 10,
            }),
        )
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
    let again = claim(store, 10_004, lease(20_000)).await;
    assert_eq!(
        again.iter().map(|e| e.id).collect::<Vec<_>>(),
        [heads[1].id]
    );
    assert_eq!(again[0].attempts, 1, "counted afresh");

    // A lease that ran out is claimed again, as it was.
    let retaken = claim(store, 30_000, lease(40_000)).await;
    assert_eq!(
        retaken.iter().map(|e| e.id).collect::<Vec<_>>(),
        [heads[1].id, next[0].id]
    );

    const URL: &str = "https://shop.example/h";
    let disabled = || async { store.endpoint_disabled(URL).await.unwrap() };
    let gone = "answered 410 Gone";
    store
        .set_endpoint_disabled(URL, Some((5, gone)))
        .await
        .unwrap();
    assert_eq!(disabled().await, Some((5, gone.to_owned())));
    store.set_endpoint_disabled(URL, None).await.unwrap();
    assert_eq!(disabled().await, None);
    store
        .set_endpoint_disabled(URL, Some((9, "by hand")))
        .await
        .unwrap();
    assert_eq!(disabled().await, Some((9, "by hand".to_owned())));
}

async fn a_delivery_pass_publishes_what_was_committed_and_claims_it_in_one_write(
    store: &dyn Store,
) {
    let lease = Lease {
        holder: "test",
        until_ms: 20_000,
    };
    assert!(!store.outbox_work(Some(10_000)).await.unwrap(), "no work");
    assert!(claim(store, 10_000, lease).await.is_empty(), "nothing yet");
    store.insert_pending(new_payment("o-c")).await.unwrap();
    assert!(store.outbox_work(None).await.unwrap(), "to publish");
    let claimed = claim(store, 10_000, lease).await;
    let seen: Vec<(Option<i64>, &str)> = claimed
        .iter()
        .map(|event| (event.position, event.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        [(Some(1), "payment.created")],
        "published, then claimed"
    );
    assert_eq!(
        store.publish_events().await.unwrap(),
        0,
        "nothing left unplaced"
    );
    assert!(!store.outbox_work(Some(10_001)).await.unwrap(), "leased");
    assert!(
        store.outbox_work(Some(20_000)).await.unwrap(),
        "its lease ran out"
    );
    assert!(claim(store, 10_001, lease).await.is_empty(), "leased");
}

/// What one pass with nothing to record claims at `now_ms`, ten at most.
async fn claim(store: &dyn Store, now_ms: i64, lease: Lease<'_>) -> Vec<OutboxEvent> {
    let claim = Claim {
        now_ms,
        lease,
        limit: 10,
    };
    store.delivery_pass(&[], Some(claim)).await.unwrap()
}
