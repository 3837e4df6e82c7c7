//! The SQLite store: one file, WAL journal, bounded waits.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow};
use sqlx::{Row, SqlitePool};

use super::{
    Claimed, IdempotencyClaim, NewPayment, Outcome, Payment, PaymentStatus, Store, StoreError,
    StoredResponse, User,
};

/// Nothing waits on the database without a bound (SPEC §3.7): a connection comes
/// within the acquire timeout given to [`SqliteStore::open`], a lock within this.
const BUSY_TIMEOUT: Duration = Duration::from_secs(3);
const MAX_CONNECTIONS: u32 = 8;

const PAYMENT_COLUMNS: &str = "id, order_id, user_id, payment_key, amount, event_id, status, \
     failure_reason, approved_at, created_at, updated_at";

#[derive(Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating it and its folder when absent) and migrates the database at
    /// `url`. A request waits at most `acquire_timeout` for a connection.
    pub async fn open(url: &str, acquire_timeout: Duration) -> anyhow::Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        if let Some(folder) = Path::new(options.get_filename()).parent() {
            if !folder.as_os_str().is_empty() {
                std::fs::create_dir_all(folder)?;
            }
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(acquire_timeout)
            .connect_with(options)
            .await?;
        sqlx::migrate!("migrations/sqlite").run(&pool).await?;
        Ok(Self { pool })
    }

    async fn payment_by_id(&self, payment_id: i64) -> Result<Payment, StoreError> {
        let sql = format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE id = ?");
        let row = sqlx::query(&sql)
            .bind(payment_id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| payment_from_row(&row))
            .transpose()?
            .ok_or(StoreError::NoSuchPayment(payment_id))
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn insert_pending(&self, new: NewPayment) -> Result<Payment, StoreError> {
        let sql = format!(
            "INSERT INTO payments (order_id, user_id, payment_key, amount, event_id, status, \
             created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?) \
             RETURNING {PAYMENT_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(&new.order_id)
            .bind(&new.user_id)
            .bind(&new.payment_key)
            .bind(new.amount)
            .bind(&new.event_id)
            .bind(new.now_ms)
            .bind(new.now_ms)
            .fetch_one(&self.pool)
            .await
            .map_err(|err| unique_violation_as(err, StoreError::DuplicateOrder))?;
        payment_from_row(&row)
    }

    async fn record_outcome(
        &self,
        payment_id: i64,
        outcome: Outcome,
        now_ms: i64,
    ) -> Result<Payment, StoreError> {
        let (status, reason, approved_at) = match outcome {
            Outcome::Approved { approved_at } => (PaymentStatus::Approved, None, Some(approved_at)),
            Outcome::Failed { reason } => (PaymentStatus::Failed, Some(reason), None),
            Outcome::Unknown => (PaymentStatus::Unknown, None, None),
        };
        sqlx::query(
            "UPDATE payments SET status = ?, failure_reason = ?, approved_at = ?, updated_at = ? \
             WHERE id = ? AND status = 'PENDING'",
        )
        .bind(status.as_str())
        .bind(reason)
        .bind(approved_at)
        .bind(now_ms)
        .bind(payment_id)
        .execute(&self.pool)
        .await?;
        self.payment_by_id(payment_id).await
    }

    async fn payment_by_order(
        &self,
        user_id: &str,
        order_id: &str,
    ) -> Result<Option<Payment>, StoreError> {
        let sql =
            format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE order_id = ? AND user_id = ?");
        let row = sqlx::query(&sql)
            .bind(order_id)
            .bind(user_id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| payment_from_row(&row)).transpose()
    }

    async fn recent_payments(&self, user_id: &str, limit: u32) -> Result<Vec<Payment>, StoreError> {
        let sql = format!(
            "SELECT {PAYMENT_COLUMNS} FROM payments WHERE user_id = ? ORDER BY id DESC LIMIT ?"
        );
        let rows = sqlx::query(&sql)
            .bind(user_id)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(payment_from_row).collect()
    }

    async fn claim_idempotency_key(
        &self,
        claim: &IdempotencyClaim,
        now_ms: i64,
    ) -> Result<Claimed, StoreError> {
        let key = (&claim.user_id, &claim.key);
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE user_id = ? AND idempotency_key = ? \
             AND created_at <= ?",
        )
        .bind(key.0)
        .bind(key.1)
        .bind(now_ms - claim.retain_ms)
        .execute(&self.pool)
        .await?;
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (user_id, idempotency_key, request_hash, state, \
             locked_until, created_at) VALUES (?, ?, ?, 'IN_FLIGHT', ?, ?) \
             ON CONFLICT DO NOTHING",
        )
        .bind(key.0)
        .bind(key.1)
        .bind(&claim.request_hash)
        .bind(now_ms + claim.lease_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(Claimed::Started);
        }
        let row = sqlx::query(
            "SELECT request_hash, state, response_status, response_body, locked_until \
             FROM idempotency_keys WHERE user_id = ? AND idempotency_key = ?",
        )
        .bind(key.0)
        .bind(key.1)
        .fetch_optional(&self.pool)
        .await?;
        // Purged between the insert and the read: as good as in flight for a moment.
        let Some(row) = row else {
            return Ok(Claimed::InFlight { until_ms: now_ms });
        };
        let request_hash: String = row.try_get("request_hash")?;
        if request_hash != claim.request_hash {
            return Ok(Claimed::Mismatch);
        }
        let locked_until: i64 = row.try_get("locked_until")?;
        if row.try_get::<String, _>("state")? == "DONE" {
            let status: i64 = row.try_get("response_status")?;
            return Ok(Claimed::Done(StoredResponse {
                status: u16::try_from(status).map_err(|_| {
                    StoreError::Database(sqlx::Error::Decode(
                        format!("response status {status}").into(),
                    ))
                })?,
                body: row.try_get("response_body")?,
            }));
        }
        if locked_until > now_ms {
            return Ok(Claimed::InFlight {
                until_ms: locked_until,
            });
        }
        let taken_over = sqlx::query(
            "UPDATE idempotency_keys SET locked_until = ? WHERE user_id = ? \
             AND idempotency_key = ? AND state = 'IN_FLIGHT' AND locked_until = ?",
        )
        .bind(now_ms + claim.lease_ms)
        .bind(key.0)
        .bind(key.1)
        .bind(locked_until)
        .execute(&self.pool)
        .await?;
        Ok(if taken_over.rows_affected() == 1 {
            Claimed::Resumed
        } else {
            Claimed::InFlight {
                until_ms: now_ms + claim.lease_ms,
            }
        })
    }

    async fn finish_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE idempotency_keys SET state = 'DONE', response_status = ?, \
             response_body = ? WHERE user_id = ? AND idempotency_key = ?",
        )
        .bind(i64::from(response.status))
        .bind(&response.body)
        .bind(user_id)
        .bind(key)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn release_idempotency_key(&self, user_id: &str, key: &str) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE user_id = ? AND idempotency_key = ? \
             AND state = 'IN_FLIGHT'",
        )
        .bind(user_id)
        .bind(key)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn purge_idempotency_keys(&self, before_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < ?")
            .bind(before_ms)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    async fn insert_user(&self, user: &User, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO users (id, username, password_hash, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&user.id)
        .bind(&user.username)
        .bind(&user.password_hash)
        .bind(now_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await
        .map_err(|err| unique_violation_as(err, StoreError::DuplicateUser))?;
        Ok(())
    }

    async fn set_password_hash(
        &self,
        username: &str,
        password_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let done =
            sqlx::query("UPDATE users SET password_hash = ?, updated_at = ? WHERE username = ?")
                .bind(password_hash)
                .bind(now_ms)
                .bind(username)
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn user_by_name(&self, username: &str) -> Result<Option<User>, StoreError> {
        let row = sqlx::query("SELECT id, username, password_hash FROM users WHERE username = ?")
            .bind(username)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| {
            Ok(User {
                id: row.try_get("id")?,
                username: row.try_get("username")?,
                password_hash: row.try_get("password_hash")?,
            })
        })
        .transpose()
    }
}

fn unique_violation_as(err: sqlx::Error, duplicate: StoreError) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => duplicate,
        _ => StoreError::Database(err),
    }
}

fn payment_from_row(row: &SqliteRow) -> Result<Payment, StoreError> {
    let status: String = row.try_get("status")?;
    let status = PaymentStatus::parse(&status).ok_or_else(|| {
        StoreError::Database(sqlx::Error::Decode(
            format!("unknown status {status}").into(),
        ))
    })?;
    Ok(Payment {
        payment_id: row.try_get("id")?,
        order_id: row.try_get("order_id")?,
        user_id: row.try_get("user_id")?,
        payment_key: row.try_get("payment_key")?,
        amount: row.try_get("amount")?,
        event_id: row.try_get("event_id")?,
        status,
        failure_reason: row.try_get("failure_reason")?,
        approved_at: row.try_get("approved_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A private in-memory database, shared by the pool's connections.
    async fn store() -> SqliteStore {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = NEXT.fetch_add(1, Ordering::Relaxed);
        let url = format!("sqlite:file:store-test-{name}?mode=memory&cache=shared");
        SqliteStore::open(&url, Duration::from_secs(3))
            .await
            .unwrap()
    }

    fn new_payment(order_id: &str) -> NewPayment {
        NewPayment {
            order_id: order_id.into(),
            user_id: "user-1".into(),
            payment_key: "pk".into(),
            amount: 1000,
            event_id: None,
            now_ms: 1_000,
        }
    }

    #[tokio::test]
    async fn a_pending_payment_is_inserted_and_read_back_by_its_owner_only() {
        let store = store().await;
        let inserted = store.insert_pending(new_payment("o-1")).await.unwrap();
        assert_eq!(inserted.status, PaymentStatus::Pending);
        let read = store.payment_by_order("user-1", "o-1").await.unwrap();
        assert_eq!(read, Some(inserted));
        assert_eq!(store.payment_by_order("user-2", "o-1").await.unwrap(), None);
    }

    #[tokio::test]
    async fn an_order_id_is_paid_at_most_once() {
        let store = store().await;
        store.insert_pending(new_payment("o-1")).await.unwrap();
        let again = store.insert_pending(new_payment("o-1")).await;
        assert!(matches!(again, Err(StoreError::DuplicateOrder)));
    }

    #[tokio::test]
    async fn an_outcome_settles_a_pending_payment_once() {
        let store = store().await;
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

    #[tokio::test]
    async fn a_user_name_is_taken_once_and_its_password_can_change() {
        let store = store().await;
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

    fn claim(hash: &str) -> IdempotencyClaim {
        IdempotencyClaim {
            user_id: "user-1".into(),
            key: "key-1".into(),
            request_hash: hash.into(),
            lease_ms: 1_000,
            retain_ms: 10_000,
        }
    }

    #[tokio::test]
    async fn an_idempotency_key_is_claimed_once_then_replayed() {
        let store = store().await;
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

    #[tokio::test]
    async fn a_claim_past_its_lease_is_taken_over_once() {
        let store = store().await;
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

    #[tokio::test]
    async fn a_released_or_expired_key_starts_afresh() {
        let store = store().await;
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

    #[tokio::test]
    async fn a_request_waits_for_a_connection_no_longer_than_the_acquire_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("busy.sqlite3").display());
        let store = SqliteStore::open(&url, Duration::from_millis(100))
            .await
            .unwrap();
        let mut held = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            held.push(store.pool.acquire().await.unwrap());
        }
        let waited = store.recent_payments("user-1", 1).await;
        assert!(matches!(waited, Err(StoreError::Busy)), "{waited:?}");
        drop(held);
        assert!(store.recent_payments("user-1", 1).await.is_ok());
    }

    #[tokio::test]
    async fn recent_payments_are_the_users_own_newest_first() {
        let store = store().await;
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
    }
}
