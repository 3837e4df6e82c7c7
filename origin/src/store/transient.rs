//! Transient database errors — SQLITE_BUSY/LOCKED, PostgreSQL serialization failures,
//! deadlocks and lock waits past `lock_timeout` (PostgreSQL's SQLITE_BUSY) — roll the
//! whole transaction back, so running it again is starting over, not repeating a
//! half-done step. [`retry_transient`] does that up to [`MAX_RETRIES`] times with
//! jittered backoff, and counts each retry.

use std::future::Future;
use std::time::Duration;

use sqlx::postgres::PgDatabaseError;

use super::StoreError;
use crate::metrics::Metrics;

pub const MAX_RETRIES: u32 = 3;

/// The first backoff; each retry doubles it, and jitter spreads it over ±50 %.
const BASE_BACKOFF: Duration = Duration::from_millis(20);

impl StoreError {
    /// Whether the database rolled the transaction back for a reason that may be gone
    /// on a second try.
    pub fn is_transient(&self) -> bool {
        let Self::Database(sqlx::Error::Database(db)) = self else {
            return false;
        };
        // A SQLSTATE such as 40001 parses as a number too: tell the databases apart by
        // the error's type, not by the code's look.
        if let Some(postgres) = db.try_downcast_ref::<PgDatabaseError>() {
            return matches!(
                postgres.code(),
                SERIALIZATION_FAILURE | DEADLOCK_DETECTED | LOCK_NOT_AVAILABLE
            );
        }
        let Some(code) = db.code() else {
            return false;
        };
        // SQLite extended codes: the primary code is the low byte.
        code.parse::<i32>()
            .is_ok_and(|sqlite| matches!(sqlite & 0xff, SQLITE_BUSY | SQLITE_LOCKED))
    }
}

const SQLITE_BUSY: i32 = 5;
const SQLITE_LOCKED: i32 = 6;
const SERIALIZATION_FAILURE: &str = "40001";
const DEADLOCK_DETECTED: &str = "40P01";
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// Runs `transaction` (one whole transaction per call) and re-runs it after a
/// transient error, up to [`MAX_RETRIES`] times. `operation` labels the metric.
pub async fn retry_transient<T, F, Fut>(
    metrics: &Metrics,
    operation: &'static str,
    mut transaction: F,
) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let mut retries = 0;
    loop {
        match transaction().await {
            Err(err) if err.is_transient() && retries < MAX_RETRIES => {
                retries += 1;
                metrics.db_retried(operation);
                tracing::warn!(operation, retries, error = %err, "transient database error; running the transaction again");
                tokio::time::sleep(backoff(retries)).await;
            }
            done => return done,
        }
    }
}

/// The wait before retry `n` (1-based): `BASE × 2^(n-1)`, jittered to 50–150 %.
fn backoff(n: u32) -> Duration {
    let mut roll = [0u8; 2];
    // Without randomness the wait is simply not jittered.
    let _ = getrandom::fill(&mut roll);
    let per_mille = 500 + u64::from(u16::from_le_bytes(roll)) % 1_001;
    BASE_BACKOFF * 2u32.pow(n - 1) * per_mille as u32 / 1_000
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// A real SQLITE_BUSY, from a second connection's write while the first holds the
    /// write lock, with no busy timeout.
    async fn busy_error() -> StoreError {
        use sqlx::sqlite::SqliteConnectOptions;
        use sqlx::{ConnectOptions, Connection};
        let dir = tempfile::tempdir().unwrap();
        let options = SqliteConnectOptions::new()
            .filename(dir.path().join("busy.sqlite3"))
            .create_if_missing(true)
            .busy_timeout(Duration::ZERO);
        let mut holder = options.connect().await.unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER)")
            .execute(&mut holder)
            .await
            .unwrap();
        let mut other = options.connect().await.unwrap();
        let mut lock = holder.begin().await.unwrap();
        sqlx::query("INSERT INTO t VALUES (1)")
            .execute(&mut *lock)
            .await
            .unwrap();
        let err = sqlx::query("INSERT INTO t VALUES (2)")
            .execute(&mut other)
            .await
            .unwrap_err();
        StoreError::from(err)
    }

    #[tokio::test]
    async fn sqlite_busy_is_transient_and_other_errors_are_not() {
        assert!(busy_error().await.is_transient());
        assert!(!StoreError::DuplicateOrder.is_transient());
        assert!(!StoreError::Busy.is_transient());
        assert!(!StoreError::from(sqlx::Error::RowNotFound).is_transient());
    }

    #[tokio::test]
    async fn a_transient_error_is_retried_three_times_and_counted() {
        let metrics = Metrics::default();
        let runs = AtomicU32::new(0);
        let result: Result<(), _> = retry_transient(&metrics, "test", || {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Err(busy_error().await) }
        })
        .await;
        assert!(result.is_err_and(|err| err.is_transient()));
        assert_eq!(runs.load(Ordering::SeqCst), 1 + MAX_RETRIES);
        assert!(metrics
            .render()
            .contains(r#"origin_db_retries_total{operation="test"} 3"#));
    }

    #[tokio::test]
    async fn a_transaction_that_succeeds_on_a_retry_returns_its_value() {
        let metrics = Metrics::default();
        let runs = AtomicU32::new(0);
        let value = retry_transient(&metrics, "test", || {
            let run = runs.fetch_add(1, Ordering::SeqCst);
            async move {
                if run == 0 {
                    Err(busy_error().await)
                } else {
                    Ok(run)
                }
            }
        })
        .await;
        assert_eq!(value.unwrap(), 1);
    }

    #[tokio::test]
    async fn a_lasting_error_is_not_retried() {
        let metrics = Metrics::default();
        let runs = AtomicU32::new(0);
        let result: Result<(), _> = retry_transient(&metrics, "test", || {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Err(StoreError::DuplicateOrder) }
        })
        .await;
        assert!(matches!(result, Err(StoreError::DuplicateOrder)));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn backoff_doubles_with_jitter_within_half_and_one_and_a_half() {
        for n in 1..=3 {
            let base = BASE_BACKOFF * 2u32.pow(n - 1);
            let wait = backoff(n);
            assert!(wait >= base / 2 && wait <= base * 3 / 2, "{n}: {wait:?}");
        }
    }
}
