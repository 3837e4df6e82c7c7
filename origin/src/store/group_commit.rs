//! One writer for a SQLite store, committing in groups. SQLite has one write lock per
//! database and one origin process per file, so every write of the process runs on
//! one connection of its own, one at a time, first come first served; reads go to the
//! pool's other connections. A writer that used to find the lock taken slept in
//! SQLite's busy handler (1, 2, 5, 10, 15 ms …) however soon it came free; here it is
//! woken the moment the writer ahead is done (`docs/design/webhooks.md`).
//!
//! **The batch.** The writes share transactions: the first writer to take the turn
//! opens one on the writer's connection; each write runs inside it under a savepoint
//! of its own (released when it succeeds, rolled back to when it fails or is dropped
//! half-way, so a write is all or nothing and a failed one spoils no other); then it
//! gives up the turn and waits for the commit. The commit is a writer too: a task that,
//! woken by the first write of a batch, waits its turn behind the writers already in
//! line — they join the batch — and commits it, one sync for all of them. A confirm
//! that arrives while the outbox's pass is writing no longer waits for the pass's
//! commit and then its own: it joins the pass's batch.
//!
//! **Nothing acknowledged that was not committed.** A writer is answered once its
//! batch has committed, and with the commit's error if it did not. One dropped while
//! it waits in line never began; one dropped half-way is rolled back to its
//! savepoint; one dropped while it waits for the commit is committed with its batch,
//! unanswered, as if its answer were lost on the way. A batch whose commit never comes
//! (the process killed, the store dropped) is rolled back whole, and none of its
//! writers was answered.
//!
//! **Two lanes.** The process's own loops — the outbox's passes, recovery, settlement,
//! the purges, the key rotation — write in the background lane: they first take turns
//! among themselves, so at most one of them is ever in line. A request's write (a
//! confirm's, a login's, an operator's) waits behind at most one background write,
//! however many the loops have to make.
//!
//! PostgreSQL locks rows, not the database, and keeps its pool: a store there has no
//! writer (`sql_store.rs`).

use std::sync::{Arc, Weak};

use sqlx::{Connection as _, Database, Pool, Transaction};
use tokio::sync::{watch, Mutex, MutexGuard, Notify};
use tokio::task::JoinHandle;

use super::StoreError;

/// Whose write it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// A request's: someone is waiting for the answer.
    Request,
    /// One of the process's own loops.
    Background,
}

/// The writer of one database: its turn, its lanes, and the task that commits.
pub struct GroupCommit<DB: Database> {
    /// The turn to write, held by one writer at a time, waited for in line; it guards
    /// the writer's connection and the batch open on it.
    turn: Arc<Mutex<Batch<DB>>>,
    /// What a background writer holds before it waits for the turn.
    background: Mutex<()>,
    /// Wakes the committer: a batch has writes waiting for their commit.
    written: Arc<Notify>,
    committer: JoinHandle<()>,
}

/// The writer's connection (a pool of one) and the transaction open on it, if any.
pub(super) struct Batch<DB: Database> {
    connection: Pool<DB>,
    pub(super) open: Option<Open<DB>>,
}

/// A batch: its transaction, and where its writers learn how its commit ended.
pub(super) struct Open<DB: Database> {
    transaction: Transaction<'static, DB>,
    committed: watch::Sender<Option<Result<(), String>>>,
}

impl<DB: Database> GroupCommit<DB> {
    /// The writer on `connection`, a pool of at most one connection that nothing else
    /// writes through; its committer runs until this is dropped.
    pub fn start(connection: Pool<DB>) -> Self {
        let turn = Arc::new(Mutex::new(Batch {
            connection,
            open: None,
        }));
        let written = Arc::new(Notify::new());
        let committer = tokio::spawn(commit_batches(Arc::downgrade(&turn), written.clone()));
        Self {
            turn,
            background: Mutex::new(()),
            written,
            committer,
        }
    }

    /// Waits in `lane` for the turn to write.
    pub async fn turn(&self, lane: Lane) -> Turn<'_, DB> {
        let lane = match lane {
            Lane::Request => None,
            Lane::Background => Some(self.background.lock().await),
        };
        Turn {
            batch: self.turn.lock().await,
            written: &self.written,
            _lane: lane,
        }
    }

    /// The turn itself, for the tests: held, it keeps writers in line and the batch
    /// from its commit.
    #[cfg(test)]
    pub(super) async fn hold(&self) -> MutexGuard<'_, Batch<DB>> {
        self.turn.lock().await
    }
}

impl<DB: Database> Drop for GroupCommit<DB> {
    fn drop(&mut self) {
        self.committer.abort();
    }
}

/// A writer's turn. It is given up before the background lane, so the next background
/// writer queues only once it is over; given up with a batch open, the committer is
/// woken.
pub struct Turn<'a, DB: Database> {
    batch: MutexGuard<'a, Batch<DB>>,
    written: &'a Notify,
    _lane: Option<MutexGuard<'a, ()>>,
}

impl<DB: Database> Turn<'_, DB> {
    /// A savepoint in the batch (opened first if none is) for one write to run in.
    pub async fn savepoint(&mut self) -> Result<Transaction<'_, DB>, StoreError> {
        let batch = &mut *self.batch;
        let open = match &mut batch.open {
            Some(open) => open,
            open @ None => open.insert(Open {
                transaction: batch.connection.begin().await?,
                committed: watch::Sender::new(None),
            }),
        };
        Ok(open.transaction.begin().await?)
    }

    /// Gives up the turn, and answers with `written` once its batch has committed —
    /// at once for a write that failed, which left nothing in the batch.
    pub async fn committed<T>(self, written: Result<T, StoreError>) -> Result<T, StoreError> {
        let value = written?;
        let mut committed = match &self.batch.open {
            Some(open) => open.committed.subscribe(),
            None => return Err(StoreError::NotCommitted("no batch was open".into())),
        };
        drop(self);
        let closed = || StoreError::NotCommitted("the store closed before the commit".into());
        let outcome = committed
            .wait_for(Option::is_some)
            .await
            .map_err(|_| closed())?;
        match &*outcome {
            Some(Ok(())) => Ok(value),
            Some(Err(err)) => Err(StoreError::NotCommitted(err.clone())),
            None => Err(closed()),
        }
    }
}

impl<DB: Database> Drop for Turn<'_, DB> {
    fn drop(&mut self) {
        if self.batch.open.is_some() {
            self.written.notify_one();
        }
    }
}

/// A write that ran in `savepoint`: kept in the batch if it succeeded, undone if not.
pub async fn settle<T, DB: Database>(
    savepoint: Transaction<'_, DB>,
    written: Result<T, StoreError>,
) -> Result<T, StoreError> {
    match written {
        Ok(value) => {
            savepoint.commit().await?;
            Ok(value)
        }
        Err(err) => {
            savepoint.rollback().await?;
            Err(err)
        }
    }
}

/// The committer: woken by a batch's writes, it takes its turn behind the writers
/// already in line, commits the batch and tells its writers how that went.
async fn commit_batches<DB: Database>(turn: Weak<Mutex<Batch<DB>>>, written: Arc<Notify>) {
    loop {
        written.notified().await;
        let Some(turn) = turn.upgrade() else {
            return;
        };
        let mut batch = turn.lock().await;
        if let Some(open) = batch.open.take() {
            let outcome = open.transaction.commit().await;
            if let Err(err) = &outcome {
                tracing::error!(error = %err, "SQLite: a batch of writes did not commit; its writers are answered with the error");
            }
            open.committed
                .send_replace(Some(outcome.map_err(|err| err.to_string())));
        }
    }
}

#[cfg(test)]
mod tests;
