//! A recovery page that takes longer than one lease: its holder renews the lease while
//! it works, so a second recovery on the same database, cycling all the while, never
//! asks the PG about a payment the first still holds.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use origin::clock::now_ms;

use origin::guard::{GatewayGuard, GuardConfig};
use origin::metrics::Metrics;
use origin::policy::recovery::RecoveryConfig;
use origin::recovery::Recovery;
use origin::store::{NewPayment, Outcome, Store};
use serde_json::{json, Value};
use support::{simulator, Origin};

/// The PG times out after 500 ms, so a lease is 1.5 s.
const PG_TIMEOUT: Duration = Duration::from_millis(500);

/// The PG takes 300 ms to answer a status query: a page of 100 at 16 in flight takes
/// seven rounds, about 2.1 s — longer than a lease.
const STATUS_DELAY_MS: u64 = 300;

const PAYMENTS: usize = 100;

fn recovery(store: Arc<dyn Store>, gateway: &str) -> Recovery {
    let metrics = Arc::new(Metrics::default());
    let guard = GuardConfig {
        timeout: PG_TIMEOUT,
        ..GuardConfig::default()
    };
    Recovery::new(
        store,
        support::toss::adapter(gateway),
        GatewayGuard::new("recover", guard, metrics.clone()),
        metrics,
        RecoveryConfig {
            min_age_ms: 0,
            // Asked once, a payment is not due again during the test.
            not_found_spacing_ms: 60_000,
            backoff_base_ms: 60_000,
            ..RecoveryConfig::for_gateway_timeout(PG_TIMEOUT)
        },
    )
}

async fn ledger(gateway: &str) -> Value {
    reqwest::get(format!("{gateway}/admin/ledger"))
        .await
        .expect("the simulator answers")
        .json()
        .await
        .expect("JSON")
}

#[tokio::test]
async fn a_page_longer_than_a_lease_is_renewed_and_never_asked_about_twice() {
    let gateway = simulator().await;
    let origin = Origin::with_gateway(&gateway, PG_TIMEOUT).await;
    let store: Arc<dyn Store> = origin.store.clone();
    let created = now_ms() - 60_000;
    for n in 0..PAYMENTS {
        let payment = store
            .insert_pending(NewPayment {
                order_id: format!("order-{n}"),
                user_id: "user-1".into(),
                payment_key: format!("pk-{n}"),
                amount: 1_000,
                event_id: None,
                confirm_key: "ck-test".into(),
                now_ms: created,
            })
            .await
            .expect("a payment");
        store
            .record_outcome(payment.payment_id, Outcome::Unknown, created)
            .await
            .expect("UNKNOWN");
    }
    reqwest::Client::new()
        .put(format!("{gateway}/admin/faults"))
        .json(&json!({"mode": "NORMAL", "statusDelayMs": STATUS_DELAY_MS}))
        .send()
        .await
        .expect("faults set");

    let first = recovery(store.clone(), &gateway);
    let second = recovery(store.clone(), &gateway);
    let started = std::time::Instant::now();
    let (done, mut finished) = tokio::sync::watch::channel(false);
    let first_cycle = async {
        let report = first.run_cycle().await;
        let _ = done.send(true);
        report
    };
    // Once the first has claimed its page, the second cycles every 100 ms for as long
    // as the first works on it.
    let second_cycles = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut examined = 0;
        while !*finished.borrow_and_update() {
            examined += second.run_cycle().await.examined;
            tokio::select! {
                _ = finished.changed() => {}
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        examined
    };
    let (report, second_examined) = tokio::join!(first_cycle, second_cycles);
    let took = started.elapsed();
    let asked = ledger(&gateway).await["statusQueryCount"].clone();
    assert!(
        took > Duration::from_millis(1_500),
        "the page outlived a lease: {took:?}"
    );
    assert_eq!(report.examined as usize, PAYMENTS, "{report:?}");
    assert_eq!(second_examined, 0, "the second found nothing to claim");
    assert_eq!(asked, json!(PAYMENTS), "each payment asked about once");
}
