//! Events on both stores: an event's stock sold and given back, a late approval refund
//! due until refunded, and a room change over a stale version refused.

use origin::store::{EventSpec, NewPayment, Outcome, PaymentStatus, Store, StoreError};

use crate::store::payments::new_payment;
use crate::store::recovery::{ids, lease};

on_both_stores!(
    an_event_sells_its_stock_and_a_failure_gives_a_unit_back,
    a_late_approval_is_refund_due_until_refunded,
    a_room_change_over_a_stale_version_is_refused,
);

pub(crate) fn for_event(order_id: &str, event_id: &str, amount: i64) -> NewPayment {
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
