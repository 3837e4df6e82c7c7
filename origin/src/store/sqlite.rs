//! The SQLite store: one file, WAL journal checkpointed off the writers' path, bounded
//! waits.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::{ConnectOptions as _, Sqlite};

use super::checkpoint::Checkpoints;
use super::group_commit::GroupCommit;
use super::payments::{HOLDS_A_UNIT, PAYMENT_COLUMNS};
use super::sql::{unique_violation_as, Sql};
use super::sql_store::{Dialect, SqlStore};
use super::{EventSpec, EventView, NewPayment, Payment, SharedBudget, StoreError};
use crate::crypto::{FieldCipher, PAYMENT_KEY};

/// Nothing waits on the database without a bound (`docs/design/guard.md`): a connection comes
/// within the acquire timeout given to [`SqliteStore::open`], and so does the writer's
/// turn (`group_commit.rs`); a lock within this.
const BUSY_TIMEOUT: Duration = Duration::from_secs(3);
/// The readers' connections; the writer has one more of its own.
const MAX_CONNECTIONS: u32 = 8;
/// WAL pages past which a commit checkpoints by itself (SQLite's default is 1,000).
const AUTOCHECKPOINT_BACKSTOP: &str = "10000";

/// The store on SQLite.
pub type SqliteStore = SqlStore<Sqlite>;

impl SqliteStore {
    /// Opens (creating it and its folder when absent) and migrates the database at
    /// `url`. A request waits at most `acquire_timeout` for a connection.
    pub async fn open(
        url: &str,
        acquire_timeout: Duration,
        cipher: FieldCipher,
    ) -> anyhow::Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // Commits do not checkpoint: `Checkpoints` does, off their path. A commit
            // still would past a WAL ten times SQLite's usual mark, should the task stall.
            .pragma("wal_autocheckpoint", AUTOCHECKPOINT_BACKSTOP)
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
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("migrations/sqlite").run(&pool).await?;
        // Every write runs on this one connection, in turn (`group_commit.rs`).
        let writer = GroupCommit::start(options.connect().await?, options, acquire_timeout);
        let checkpoints = Some(Arc::new(Checkpoints::start(pool.clone())));
        Ok(Self {
            pool,
            cipher,
            writer: Some(Arc::new(writer)),
            checkpoints,
        })
    }
}

#[async_trait]
impl Dialect for Sqlite {
    // SQLite runs a claim under the database's single write lock: two claims cannot
    // take the same payment.
    const CLAIM_LOCK: &'static str = "";

    // And publishes the outbox under it too.
    const PUBLISH_LOCK: &'static str = "";

    // One instance per SQLite file: its limiter counts in memory.
    fn shared_budget(_: &sqlx::Pool<Self>) -> Option<std::sync::Arc<dyn SharedBudget>> {
        None
    }

    async fn insert_pending(
        store: &mut Sql<'_, Self>,
        new: NewPayment,
    ) -> Result<Payment, StoreError> {
        if let Some(event_id) = &new.event_id {
            let price: Option<i64> =
                sqlx::query_scalar("SELECT amount FROM events WHERE event_id = ?")
                    .bind(event_id)
                    .fetch_optional(&mut *store.conn)
                    .await?;
            match price {
                None => return Err(StoreError::UnknownEvent),
                Some(price) if price != new.amount => {
                    return Err(StoreError::WrongAmount { price })
                }
                Some(_) => {}
            }
        }
        // One statement, under SQLite's single write lock: the unit is counted and
        // taken at once, so no two confirms can take the last one. (Events are never
        // deleted: one seen above is there still.)
        let sql = format!(
            "INSERT INTO payments (order_id, user_id, payment_key, amount, event_id, status, \
             created_at, updated_at, pg_confirm_key) SELECT ?, ?, ?, ?, ?, 'PENDING', ?, ?, ? \
             WHERE ? IS NULL \
             OR (SELECT COUNT(*) FROM payments WHERE event_id = ? AND {HOLDS_A_UNIT}) \
                < (SELECT stock FROM events WHERE event_id = ?) \
             RETURNING {PAYMENT_COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(&new.order_id)
            .bind(&new.user_id)
            .bind(
                store
                    .cipher
                    .seal(PAYMENT_KEY, &new.order_id, &new.payment_key)?,
            )
            .bind(new.amount)
            .bind(&new.event_id)
            .bind(new.now_ms)
            .bind(new.now_ms)
            .bind(&new.confirm_key)
            .bind(&new.event_id)
            .bind(&new.event_id)
            .bind(&new.event_id)
            .fetch_all(&mut *store.conn)
            .await
            .map_err(|err| unique_violation_as(err, StoreError::DuplicateOrder))?;
        store.payment_from_row(row.first().ok_or(StoreError::SoldOut)?)
    }

    async fn upsert_event(
        store: &mut Sql<'_, Self>,
        event: &EventSpec,
        now_ms: i64,
    ) -> Result<EventView, StoreError> {
        let sql = format!(
            "INSERT INTO events (event_id, stock, amount, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (event_id) DO UPDATE SET \
             stock = excluded.stock, amount = excluded.amount, updated_at = excluded.updated_at \
             WHERE excluded.stock >= \
               (SELECT COUNT(*) FROM payments WHERE event_id = ?1 AND {HOLDS_A_UNIT})"
        );
        let done = sqlx::query(&sql)
            .bind(&event.event_id)
            .bind(event.stock)
            .bind(event.amount)
            .bind(now_ms)
            .execute(&mut *store.conn)
            .await?;
        let view = store
            .event(&event.event_id)
            .await?
            .ok_or(StoreError::Database(sqlx::Error::RowNotFound))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::StockBelowCommitted {
                committed: view.reserved + view.sold,
            });
        }
        Ok(view)
    }
}

/// A store on a new file `name` in the test's folder `dir`, and the file's path.
#[cfg(test)]
pub(crate) async fn in_folder(
    dir: &tempfile::TempDir,
    name: &str,
    acquire_timeout: Duration,
) -> (SqliteStore, std::path::PathBuf) {
    let file = dir.path().join(name);
    let url = format!("sqlite://{}", file.display());
    let cipher = crate::crypto::test_cipher("v1");
    let store = SqliteStore::open(&url, acquire_timeout, cipher).await;
    (store.expect("a store"), file)
}

/// The store's behaviour is tested on both stores in `tests/store/`; here only what
/// is SQLite's own.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store as _;

    #[tokio::test]
    async fn a_request_waits_for_a_connection_no_longer_than_the_acquire_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = in_folder(&dir, "busy.sqlite3", Duration::from_millis(100)).await;
        let mut held = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            held.push(store.pool.acquire().await.unwrap());
        }
        let waited = store.recent_payments("user-1", 1).await;
        assert!(matches!(waited, Err(StoreError::Busy)), "{waited:?}");
        drop(held);
        assert!(store.recent_payments("user-1", 1).await.is_ok());
    }
}
