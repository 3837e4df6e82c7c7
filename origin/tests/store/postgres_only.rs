//! What only PostgreSQL has: two instances racing on one database (an event's units, an
//! idempotency key, an order, recovery claims), its transient errors (serialization
//! failure, deadlock, lock timeout), and the pool's acquire timeout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use harness::eventually::eventually;
use harness::postgres::TestPostgres;
use origin::store::postgres::MAX_CONNECTIONS;
use origin::store::{
    self, Claimed, EventSpec, IdempotencyClaim, Outcome, PaymentStatus, Store, StoreError,
};
use sqlx::{Connection as _, PgConnection};

use crate::store::events::for_event;
use crate::store::idempotency::claim;
use crate::store::payments::{new_payment, payment_at};
use crate::store::recovery::{ids, lease};
use crate::store::{keys, ACQUIRE_TIMEOUT};

/// Two origin instances on one database, opened (and migrated) at the same time.
async fn two_instances(server: &TestPostgres) -> [Arc<dyn Store>; 2] {
    let (first, second) = tokio::join!(
        store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1")),
        store::open(server.url(), ACQUIRE_TIMEOUT, keys::cipher("v1"))
    );
    [first.unwrap(), second.unwrap()]
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
