//! The writer's connection and the batch open on it. The batch's transaction is begun
//! and ended through sqlx's transaction manager — the one its `Transaction` uses, so
//! that a write's savepoints nest inside it — because a `Transaction` of sqlx can own
//! only a pooled connection, which it would hand back to its pool after each commit (a
//! task and a ping) for the next batch to take again.
//!
//! sqlx counts the connection's depth of transactions itself, and moves the count only
//! when a statement succeeds. Should SQLite end a transaction on its own (a full disk,
//! an I/O error) and a rollback then fail, the count and SQLite would part: a `BEGIN`
//! would become a savepoint and a commit a release, answering writes as committed that
//! never were. So the depth is checked after every `BEGIN` and every commit, and a
//! connection out of step is closed — closing rolls back what it held — and opened
//! again for the next batch.

use sqlx::{ConnectOptions as _, Connection, Database, Transaction, TransactionManager as _};
use tokio::sync::watch;

use crate::store::StoreError;

/// How a batch's commit ended: `None` until it has.
pub type Outcome = Option<Result<(), String>>;

/// The writer's connection, and the batch open on it, if any.
pub struct Batch<DB: Database> {
    options: <DB::Connection as Connection>::Options,
    /// None once closed out of step, until the next batch opens it again.
    connection: Option<DB::Connection>,
    /// The open batch: where its writers learn how its commit ended.
    open: Option<watch::Sender<Outcome>>,
}

/// A batch's commit or rollback under way. As with sqlx's `Transaction`, one that
/// failed, or was dropped before it was known, is followed by a rollback — which
/// SQLite's connection skips if the first went through unheard (sqlx-sqlite's worker
/// does; this writer is SQLite's). Without it, the connection would skip the next
/// rollback asked for, whoever's it was.
struct Ending<'c, DB: Database> {
    connection: &'c mut DB::Connection,
    known: bool,
}

impl<DB: Database> Drop for Ending<'_, DB> {
    fn drop(&mut self) {
        if !self.known {
            DB::TransactionManager::start_rollback(self.connection);
        }
    }
}

impl<DB: Database> Batch<DB> {
    /// The batch of writes on `connection`, opened again with `options` when closed.
    pub fn new(
        connection: DB::Connection,
        options: <DB::Connection as Connection>::Options,
    ) -> Self {
        Self {
            options,
            connection: Some(connection),
            open: None,
        }
    }

    /// Whether a batch is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Opens a batch (and the connection, if closed): its connection, to write in it
    /// alone, and where its commit will be told.
    pub async fn open(
        &mut self,
    ) -> Result<(&mut DB::Connection, watch::Receiver<Outcome>), StoreError> {
        // A connection found out of step is closed and opened once more.
        for last in [false, true] {
            let connection = match &mut self.connection {
                Some(connection) => connection,
                closed @ None => closed.insert(self.options.connect().await?),
            };
            if let Err(err) = DB::TransactionManager::begin(connection, None).await {
                self.connection = None;
                return Err(err.into());
            }
            if DB::TransactionManager::get_transaction_depth(connection) == 1 {
                break;
            }
            self.close_out_of_step();
            if last {
                return Err(out_of_step());
            }
        }
        let (sender, receiver) = watch::channel(None);
        self.open = Some(sender);
        match &mut self.connection {
            Some(connection) => Ok((connection, receiver)),
            None => Err(out_of_step()),
        }
    }

    /// A savepoint in the open batch, to write in beside the others' writes, and where
    /// the batch's commit will be told.
    pub async fn join(
        &mut self,
    ) -> Result<(Transaction<'_, DB>, watch::Receiver<Outcome>), StoreError> {
        match (&self.open, &mut self.connection) {
            (Some(open), Some(connection)) => {
                let committed = open.subscribe();
                Ok((connection.begin().await?, committed))
            }
            // None open: `Turn::place` opens one instead.
            _ => Err(out_of_step()),
        }
    }

    /// Commits the open batch, if any, and tells its writers how that went.
    pub async fn commit(&mut self) -> Result<(), StoreError> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let outcome = match &mut self.connection {
            Some(connection) => match end::<DB>(connection, End::Commit).await {
                (Ok(()), 0) => Ok(()),
                (Ok(()), _) => Err(out_of_step().to_string()),
                (Err(err), _) => Err(err.to_string()),
            },
            None => Err(out_of_step().to_string()),
        };
        if let Err(err) = &outcome {
            // Closing rolls back whatever the connection still holds.
            self.connection = None;
            tracing::error!(error = %err, "SQLite: a batch of writes did not commit; its writers are answered with the error");
        }
        open.send_replace(Some(outcome.clone()));
        outcome.map_err(StoreError::NotCommitted)
    }

    /// Rolls back the open batch, which holds only a write that failed.
    pub async fn roll_back(&mut self) {
        self.open = None;
        if let Some(connection) = &mut self.connection {
            if !matches!(end::<DB>(connection, End::Rollback).await, (Ok(()), 0)) {
                self.close_out_of_step();
            }
        }
    }

    /// Starts rolling back the open batch, for a writer alone in it dropped half-way
    /// (or what a crash does to a batch not committed); the next batch's `BEGIN` checks
    /// that it did.
    pub fn start_roll_back(&mut self) {
        self.open = None;
        if let Some(connection) = &mut self.connection {
            DB::TransactionManager::start_rollback(connection);
        }
    }

    fn close_out_of_step(&mut self) {
        self.open = None;
        self.connection = None;
        tracing::error!("SQLite: the writer's connection fell out of step with its transaction; closed, and opened again for the next write");
    }
}

#[cfg(test)]
impl Batch<sqlx::Sqlite> {
    /// Ends the open batch's transaction behind sqlx's back, as SQLite does by itself
    /// after some errors.
    pub async fn end_unseen(&mut self) {
        if let Some(connection) = &mut self.connection {
            let ended = sqlx::query("ROLLBACK").execute(connection).await;
            assert!(ended.is_ok(), "{ended:?}");
        }
    }
}

/// How a batch ends.
enum End {
    Commit,
    Rollback,
}

/// Ends the transaction on `connection` as `how` says: how that went, and the depth
/// sqlx counts after it (0 when all is well).
async fn end<DB: Database>(
    connection: &mut DB::Connection,
    how: End,
) -> (Result<(), sqlx::Error>, usize) {
    let mut ending = Ending::<DB> {
        connection,
        known: false,
    };
    let ended = match how {
        End::Commit => DB::TransactionManager::commit(ending.connection).await,
        End::Rollback => DB::TransactionManager::rollback(ending.connection).await,
    };
    ending.known = ended.is_ok();
    let depth = DB::TransactionManager::get_transaction_depth(ending.connection);
    (ended, depth)
}

fn out_of_step() -> StoreError {
    StoreError::NotCommitted("the writer's connection fell out of step with its transaction".into())
}
