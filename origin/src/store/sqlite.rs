//! The SQLite store: one file, WAL journal, bounded waits.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow};
use sqlx::{Row, SqlitePool};

use super::{NewPayment, Outcome, Payment, PaymentStatus, Store, StoreError, User};

/// Nothing waits on the database without a bound (SPEC §3.7).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
const BUSY_TIMEOUT: Duration = Duration::from_secs(3);
const MAX_CONNECTIONS: u32 = 8;

const PAYMENT_COLUMNS: &str = "id, order_id, user_id, payment_key, amount, event_id, status, \
     failure_reason, approved_at, created_at, updated_at";

#[derive(Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating it and its folder when absent) and migrates the database at `url`.
    pub async fn open(url: &str) -> anyhow::Result<Self> {
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
            .acquire_timeout(ACQUIRE_TIMEOUT)
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
        SqliteStore::open(&url).await.unwrap()
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
