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
//! batch has committed, and with the commit's error if it did not. One dropped while
//! it waits in line never began; one dropped half-way is rolled back (to its
//! savepoint, or with the batch it was alone in); one dropped while it waits for the
//! commit is committed with its batch,
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

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use sqlx::{Connection as _, Database, Transaction, TransactionManager as _};
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
    /// How many wait for the turn (the committer too).
    in_line: Arc<AtomicUsize>,
    /// What a background writer holds before it waits for the turn.
    background: Mutex<()>,
    /// Wakes the committer: a batch was left open for it.
    left_open: Arc<Notify>,
    committer: JoinHandle<()>,
}

/// The writer's connection, and the batch open on it, if any. The batch's transaction
/// is begun and ended through sqlx's transaction manager, the one its `Transaction`
/// uses, so that a write's savepoints nest inside it: a `Transaction` of sqlx can own
/// only a pooled connection, which it would hand back to its pool after each commit (a
/// task and a ping) for the next batch to take again.
pub(super) struct Batch<DB: Database> {
    connection: DB::Connection,
    open: Option<Open>,
}

/// A batch's commit under way. As with sqlx's `Transaction`, one that failed, or was
/// dropped before it was known, is followed by a rollback — which the connection skips
/// if the commit did go through.
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

/// A batch: how many writes it holds, and where its writers learn how its commit
/// ended.
struct Open {
    writes: usize,
    committed: watch::Sender<Option<Result<(), String>>>,
}

impl<DB: Database> Batch<DB> {
    /// Whether a batch is open.
    #[cfg(test)]
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Commits the open batch, if any, and tells its writers how that went.
    async fn commit(&mut self) -> Result<(), StoreError> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let mut ending = Ending::<DB> {
            connection: &mut self.connection,
            known: false,
        };
        let outcome = DB::TransactionManager::commit(ending.connection).await;
        ending.known = outcome.is_ok();
        drop(ending);
        let outcome = outcome.map_err(|err| err.to_string());
        if let Err(err) = &outcome {
            tracing::error!(error = %err, "SQLite: a batch of writes did not commit; its writers are answered with the error");
        }
        open.committed.send_replace(Some(outcome.clone()));
        outcome.map_err(StoreError::NotCommitted)
    }

    /// Rolls the open batch back, if any: what a crash does to a batch not committed.
    pub(super) fn roll_back(&mut self) {
        if self.open.take().is_some() {
            DB::TransactionManager::start_rollback(&mut self.connection);
        }
    }
}

impl<DB: Database> GroupCommit<DB> {
    /// The writer on `connection`, which nothing else writes through; its committer
    /// runs until this is dropped.
    pub fn start(connection: DB::Connection) -> Self {
        let turn = Arc::new(Mutex::new(Batch {
            connection,
            open: None,
        }));
        let in_line = Arc::new(AtomicUsize::new(0));
        let left_open = Arc::new(Notify::new());
        let committer = tokio::spawn(commit_batches(
            Arc::downgrade(&turn),
            in_line.clone(),
            left_open.clone(),
        ));
        Self {
            turn,
            in_line,
            background: Mutex::new(()),
            left_open,
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
            batch: in_line(&self.turn, &self.in_line).await,
            in_line: &self.in_line,
            left_open: &self.left_open,
            alone: None,
            _lane: lane,
        }
    }

    /// The turn itself, for the tests: held, it keeps writers in line and the batch
    /// from its commit.
    #[cfg(test)]
    pub(super) async fn hold(&self) -> MutexGuard<'_, Batch<DB>> {
        in_line(&self.turn, &self.in_line).await
    }
}

impl<DB: Database> Drop for GroupCommit<DB> {
    fn drop(&mut self) {
        self.committer.abort();
    }
}

/// Waits for `turn`, counted `in_line` meanwhile.
async fn in_line<'a, DB: Database>(
    turn: &'a Mutex<Batch<DB>>,
    in_line: &AtomicUsize,
) -> MutexGuard<'a, Batch<DB>> {
    struct Waiting<'a>(&'a AtomicUsize);
    impl Drop for Waiting<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    in_line.fetch_add(1, Ordering::AcqRel);
    let _waiting = Waiting(in_line);
    turn.lock().await
}

/// A writer's turn. It is given up before the background lane, so the next background
/// writer queues only once it is over.
pub struct Turn<'a, DB: Database> {
    batch: MutexGuard<'a, Batch<DB>>,
    in_line: &'a AtomicUsize,
    left_open: &'a Notify,
    /// Whether this write opened the batch and runs in it without a savepoint: until it
    /// has succeeded, the batch holds nothing else and is rolled back with it.
    alone: Option<bool>,
    _lane: Option<MutexGuard<'a, ()>>,
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
    /// write alone is undone with its batch, by [`Turn::committed`]).
    pub async fn settle<T>(self, written: Result<T, StoreError>) -> Result<T, StoreError> {
        match (self, written) {
            (Place::Alone(_), written) => written,
            (Place::Joined(savepoint), Ok(value)) => {
                savepoint.commit().await?;
                Ok(value)
            }
            (Place::Joined(savepoint), Err(err)) => {
                savepoint.rollback().await?;
                Err(err)
            }
        }
    }
}

impl<DB: Database> Turn<'_, DB> {
    /// Where this turn's write runs: a new batch, opened here, or a savepoint in the
    /// batch left open by the writers before.
    pub async fn place(&mut self) -> Result<Place<'_, DB>, StoreError> {
        let batch = &mut *self.batch;
        match &mut batch.open {
            Some(open) => {
                self.alone = Some(false);
                open.writes += 1;
                Ok(Place::Joined(batch.connection.begin().await?))
            }
            None => {
                self.alone = Some(true);
                DB::TransactionManager::begin(&mut batch.connection, None).await?;
                batch.open = Some(Open {
                    writes: 1,
                    committed: watch::Sender::new(None),
                });
                Ok(Place::Alone(&mut batch.connection))
            }
        }
    }

    /// Gives up the turn, and answers with `written` once it is committed: at once for
    /// a write that failed (it left nothing); here, for a write alone in its batch with
    /// no one in line; else by the committer, with the writers in line behind.
    pub async fn committed<T>(mut self, written: Result<T, StoreError>) -> Result<T, StoreError> {
        let alone = self.alone.take();
        let value = match written {
            Ok(value) => value,
            Err(err) => {
                if alone == Some(true) {
                    self.batch.roll_back();
                } else if let Some(open) = &mut self.batch.open {
                    open.writes -= 1;
                }
                return Err(err);
            }
        };
        let Some(open) = &self.batch.open else {
            return Err(StoreError::NotCommitted("no batch was open".into()));
        };
        if open.writes == 1 && self.in_line.load(Ordering::Acquire) == 0 {
            self.batch.commit().await?;
            return Ok(value);
        }
        let mut committed = open.committed.subscribe();
        self.left_open.notify_one();
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
    /// A writer dropped half-way: alone, its batch goes with it (rolled back); in a
    /// savepoint, the savepoint already has been, and the batch waits for its commit.
    fn drop(&mut self) {
        match self.alone {
            Some(true) => self.batch.roll_back(),
            Some(false) => {
                if let Some(open) = &mut self.batch.open {
                    open.writes -= 1;
                }
                self.left_open.notify_one();
            }
            None => {}
        }
    }
}

/// The committer: woken by a batch left open, it takes its turn behind the writers
/// already in line, and commits the batch.
async fn commit_batches<DB: Database>(
    turn: Weak<Mutex<Batch<DB>>>,
    waiting: Arc<AtomicUsize>,
    left_open: Arc<Notify>,
) {
    loop {
        left_open.notified().await;
        let Some(turn) = turn.upgrade() else {
            return;
        };
        // Its writers hear of a failure; the next batch begins afresh.
        let _ = in_line(&turn, &waiting).await.commit().await;
    }
}

#[cfg(test)]
mod tests;
