//! Recovery on both stores: due unsettled payments claimed once per lease, a lease
//! renewed only by its holder in time, and the decision recorded on unsettled payments only.

use origin::policy::recovery::{Decision, RecoveryState};
use origin::store::{Lease, Outcome, PaymentStatus, Store};

use crate::store::payments::payment_at;

on_both_stores!(
    recovery_claims_due_unsettled_payments_once_per_lease,
    a_recovery_lease_is_renewed_only_by_its_holder_before_it_runs_out,
    recovery_records_its_decision_on_unsettled_payments_only,
);

/// A recovery lease of the test's one holder, until `until_ms`.
pub(crate) fn lease(until_ms: i64) -> Lease<'static> {
    Lease {
        holder: "holder-a",
        until_ms,
    }
}

pub(crate) fn ids(payments: &[origin::store::Payment]) -> Vec<i64> {
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
