//! Settlement on both stores: the approved payments of a period, and the findings queue
//! (queued once, resolved once, closed by a match, taken by the thousand and paged).

use origin::policy::settlement::period::Period;
use origin::policy::settlement::queue::{ItemStatus, Resolution, CLOSED_BY_A_MATCH};
use origin::policy::settlement::reconcile::{Category, Finding};
use origin::store::{Outcome, Store};

use crate::store::payments::payment_at;

on_both_stores!(
    approved_payments_of_a_period_are_read_by_approval_time,
    a_finding_is_queued_once_and_resolved_once,
    a_match_closes_pending_mismatches_and_internal_onlies,
    the_queue_takes_findings_by_the_thousand_and_lists_them_in_pages,
);

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

pub(crate) fn finding(
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

pub(crate) fn period() -> Period {
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
