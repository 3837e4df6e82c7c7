//! One writer for a SQLite store, committing in groups. SQLite has one write lock per
//! database and one origin process per file, so every write of the process runs on
//! one connection of its own, one at a time, first come first served; reads go to the
//! pool's other connections. A writer that used to find the lock taken slept in
//! SQLite's busy handler (1, 2, 5, 10, 15 ms …) however soon it came free; here it is
//! woken the moment the writer ahead is done (`docs/design/webhooks.md`).
//!
//! **The batch.** Writes that meet share a transaction, and its sync. A writer that
//! takes the turn with no batch open opens one on the writer's connection and writes
//! in it; done, it commits at once if no one is in line — a write alone pays one
//! transaction, as it would on its own. If others wait, it leaves the batch open for
//! them: each writes in a savepoint of its own (released when it succeeds, rolled back
//! to when it fails or is dropped half-way, so a write is all or nothing and a failed
//! one spoils no other), gives up the turn and waits. The commit is then a writer's
//! too: a task that, woken by a batch left open, takes its turn behind the writers
//! already in line — they join the batch — and commits it, one sync for all of them.
//! A confirm that arrives while the outbox's pass writes no longer waits for the
//! pass's commit and then its own: it joins the pass's batch.
//!
//! **Nothing acknowledged that was not committed.** A writer is answered once its
//! batch has committed — a write that failed beside others too, since what it found
//! may be theirs —, and with the commit's error if it did not. One dropped while it
//! waits in line never began; one dropped half-way is rolled back (to its savepoint,
//! or with the batch it was alone in); one dropped once its savepoint is released is
//! committed with its batch, unanswered, as if its answer were lost on the way. A
//! batch whose commit never comes (the process killed, the store dropped) is rolled
//! back whole, and none of its writers was answered. The writer's connection is
//! watched for falling out of step with its transaction (`group_commit/batch.rs`).
//!
//! A writer waits for its turn no longer than the store's acquire timeout (then it is
//! `Busy`, as a read that finds no connection free).
//!
//! **Two lanes.** The process's own loops — the outbox's passes, recovery, settlement,
//! the purges, the key rotation — write in the background lane: they first take turns
//! among themselves, so at most one of them is ever in line. A request's write (a
//! confirm's, a login's, an operator's) waits behind at most one background write,
//! however many the loops have to make.
//!
//! PostgreSQL locks rows, not the database, and keeps its pool: a store there has no
//! writer (`sql_store.rs`).

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use sqlx::{Connection, Database, Transaction};
use tokio::sync::{watch, Mutex, MutexGuard, Notify};

use super::StoreError;
use crate::owned_task::OwnedTask;
use batch::{Batch, Outcome};

mod batch;

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
    /// How many writers wait for the turn.
    writers_in_line: AtomicUsize,
    /// What a background writer holds before it waits for the turn.
    background: Mutex<()>,
    /// The longest a writer waits for its turn.
    wait: Duration,
    /// Wakes the committer: a batch was left open for it.
    left_open: Arc<Notify>,
    /// The task that commits the batches left open, aborted with this.
    _committer: OwnedTask,
}

impl<DB: Database> GroupCommit<DB> {
    /// The writer on `connection` (opened again with `options` should it be closed),
    /// which nothing else writes through; a writer waits at most `wait` for its turn.
    /// Its committer runs until this is dropped.
    pub fn start(
        connection: DB::Connection,
        options: <DB::Connection as Connection>::Options,
        wait: Duration,
    ) -> Self {
        let turn = Arc::new(Mutex::new(Batch::new(connection, options)));
        let left_open = Arc::new(Notify::new());
        let committer = commit_batches(Arc::downgrade(&turn), left_open.clone());
        Self {
            turn,
            writers_in_line: AtomicUsize::new(0),
            background: Mutex::new(()),
            wait,
            left_open,
            _committer: OwnedTask::spawn(committer),
        }
    }

    /// Waits in `lane` for the turn to write; `Busy` past the wait.
    pub async fn turn(&self, lane: Lane) -> Result<Turn<'_, DB>, StoreError> {
        let in_turn = async {
            let lane = match lane {
                Lane::Request => None,
                Lane::Background => Some(self.background.lock().await),
            };
            (self.wait_in_line().await, lane)
        };
        let (batch, lane) = tokio::time::timeout(self.wait, in_turn)
            .await
            .map_err(|_| StoreError::Busy)?;
        Ok(Turn {
            batch,
            writers_in_line: &self.writers_in_line,
            left_open: &self.left_open,
            written: None,
            _lane: lane,
        })
    }

    /// Waits for the turn, counted in line meanwhile.
    async fn wait_in_line(&self) -> MutexGuard<'_, Batch<DB>> {
        struct InLine<'a>(&'a AtomicUsize);
        impl Drop for InLine<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        self.writers_in_line.fetch_add(1, Ordering::AcqRel);
        let _in_line = InLine(&self.writers_in_line);
        self.turn.lock().await
    }

    /// The turn itself, for the tests: held, it keeps writers in line (as a writer
    /// would) and the batch from its commit.
    #[cfg(test)]
    pub(super) async fn hold(&self) -> MutexGuard<'_, Batch<DB>> {
        self.wait_in_line().await
    }
}

/// A writer's turn. It is given up before the background lane, so the next background
/// writer queues only once it is over.
pub struct Turn<'a, DB: Database> {
    batch: MutexGuard<'a, Batch<DB>>,
    writers_in_line: &'a AtomicUsize,
    left_open: &'a Notify,
    /// The batch this turn's write went into, once it has.
    written: Option<Written>,
    _lane: Option<MutexGuard<'a, ()>>,
}

/// Where a write went.
struct Written {
    /// It opened the batch, and writes in it without a savepoint: until it has
    /// succeeded, the batch holds nothing else, and is rolled back with it.
    alone: bool,
    committed: watch::Receiver<Outcome>,
}

/// Where one write runs: in the transaction it opened, alone, or in a savepoint of a
/// batch that holds others' writes.
pub enum Place<'t, DB: Database> {
    Alone(&'t mut DB::Connection),
    Joined(Transaction<'t, DB>),
}

impl<DB: Database> Deref for Place<'_, DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &DB::Connection {
        match self {
            Place::Alone(conn) => conn,
            Place::Joined(savepoint) => savepoint,
        }
    }
}

impl<DB: Database> DerefMut for Place<'_, DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        match self {
            Place::Alone(conn) => conn,
            Place::Joined(savepoint) => savepoint,
        }
    }
}

impl<DB: Database> Place<'_, DB> {
    /// A write that ran here, kept if it succeeded; in a savepoint, undone if not (a
    /// write alone is undone with its batch, by [`Turn::committed`]). A savepoint
    /// that cannot be undone leaves the connection out of step: the batch's commit
    /// finds it so, and fails.
    pub async fn settle<T>(self, written: Result<T, StoreError>) -> Result<T, StoreError> {
        match (self, written) {
            (Place::Alone(_), written) => written,
            (Place::Joined(savepoint), Ok(value)) => {
                savepoint.commit().await?;
                Ok(value)
            }
            (Place::Joined(savepoint), Err(err)) => {
                if let Err(rollback) = savepoint.rollback().await {
                    tracing::error!(error = %rollback, "SQLite: a failed write's savepoint was not rolled back");
                }
                Err(err)
            }
        }
    }
}

impl<DB: Database> Turn<'_, DB> {
    /// Where this turn's write runs: a savepoint in the batch left open by the writers
    /// before, or else a new batch, opened here.
    pub async fn place(&mut self) -> Result<Place<'_, DB>, StoreError> {
        let Self { batch, written, .. } = self;
        if batch.is_open() {
            let (savepoint, committed) = batch.join().await?;
            *written = Some(Written {
                alone: false,
                committed,
            });
            Ok(Place::Joined(savepoint))
        } else {
            let (connection, committed) = batch.open().await?;
            *written = Some(Written {
                alone: true,
                committed,
            });
            Ok(Place::Alone(connection))
        }
    }

    /// Gives up the turn, and answers with `written` once it is committed: at once for
    /// a write alone in its batch — committed here if it succeeded and no writer is in
    /// line, rolled back if it failed —, else once the committer has committed the
    /// batch with the writers in line behind.
    pub async fn committed<T>(mut self, written: Result<T, StoreError>) -> Result<T, StoreError> {
        let Some(Written { alone, committed }) = self.written.take() else {
            return written;
        };
        if alone {
            match written {
                Err(err) => {
                    self.batch.roll_back().await;
                    return Err(err);
                }
                Ok(value) if self.writers_in_line.load(Ordering::Acquire) == 0 => {
                    self.batch.commit().await?;
                    return Ok(value);
                }
                Ok(value) => return self.leave_open(Ok(value), committed).await,
            }
        }
        self.leave_open(written, committed).await
    }

    /// Gives up the turn with the batch open for the writers in line and the
    /// committer, and answers with `written` once the batch has committed.
    async fn leave_open<T>(
        self,
        written: Result<T, StoreError>,
        mut committed: watch::Receiver<Outcome>,
    ) -> Result<T, StoreError> {
        self.left_open.notify_one();
        drop(self);
        let closed =
            || StoreError::NotCommitted("the store closed before its commit was known".into());
        let outcome = committed
            .wait_for(Option::is_some)
            .await
            .map_err(|_| closed())?;
        match &*outcome {
            Some(Ok(())) => written,
            Some(Err(err)) => Err(StoreError::NotCommitted(err.clone())),
            None => Err(closed()),
        }
    }
}

impl<DB: Database> Drop for Turn<'_, DB> {
    /// A writer alone in its batch dropped half-way: the batch goes with it. (One in a
    /// savepoint has had it rolled back already, and the batch waits for its commit.)
    fn drop(&mut self) {
        if self.written.as_ref().is_some_and(|written| written.alone) {
            self.batch.start_roll_back();
        }
    }
}

/// The committer: woken by a batch left open, it takes its turn behind the writers
/// already in line, and commits the batch.
async fn commit_batches<DB: Database>(turn: Weak<Mutex<Batch<DB>>>, left_open: Arc<Notify>) {
    loop {
        left_open.notified().await;
        let Some(turn) = turn.upgrade() else {
            return;
        };
        // Its writers hear of a failure; the next batch begins afresh.
        let _ = turn.lock().await.commit().await;
    }
}

#[cfg(test)]
mod tests;
