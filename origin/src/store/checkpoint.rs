//! SQLite's checkpoints off the writers' path. In WAL mode a commit appends to the WAL,
//! and the commit that takes it past `wal_autocheckpoint` pages (1,000 by default) also
//! copies the WAL back into the database file and syncs it before it returns: the
//! writer that happens to cross the mark — a confirm, most often — waits milliseconds
//! for every writer's pages, and each background write of the outbox brings the next
//! such confirm nearer. The store's connections checkpoint by themselves only past
//! 10,000 pages, a backstop should this task stall (`sqlite.rs`); the task checkpoints
//! instead, every [`EVERY`], in PASSIVE mode: it
//! copies what no reader still needs, without the write lock and without waiting for
//! anyone, so a writer's commit is its own pages and their sync, nothing more. A reader
//! holding an old snapshot only defers the copy to the next pass (as it does SQLite's
//! own checkpoints); once all is copied, the next commit starts the WAL over.
//!
//! The task ends when the last clone of the store is dropped (`Checkpoints` aborts it).
//! A failed checkpoint is logged and tried again at the next pass; the WAL grows
//! meanwhile, and nothing committed is at risk.

use std::time::Duration;

use sqlx::{Row as _, SqlitePool};

use super::StoreError;
use crate::owned_task::OwnedTask;

/// How often the WAL is copied back: at 100 confirms a second, a few hundred pages.
pub const EVERY: Duration = Duration::from_millis(250);

/// The checkpointing task of one store, aborted on drop.
#[derive(Debug)]
pub struct Checkpoints {
    _task: OwnedTask,
}

impl Checkpoints {
    /// Checkpoints `pool`'s database every [`EVERY`] until dropped.
    pub fn start(pool: SqlitePool) -> Self {
        let task = async move {
            let mut failing = false;
            loop {
                tokio::time::sleep(EVERY).await;
                match checkpoint(&pool).await {
                    Ok(_) => failing = false,
                    Err(err) if !failing => {
                        failing = true;
                        tracing::warn!(error = %err, "SQLite: the WAL could not be checkpointed; tried again every {EVERY:?}, the WAL grows meanwhile");
                    }
                    Err(_) => {}
                }
            }
        };
        Self {
            _task: OwnedTask::spawn(task),
        }
    }
}

/// What one checkpoint found and did, in WAL frames (pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// Frames in the WAL.
    pub in_wal: i64,
    /// Frames copied into the database file, this pass or before.
    pub copied: i64,
}

/// One PASSIVE checkpoint of `pool`'s database.
pub async fn checkpoint(pool: &SqlitePool) -> Result<Copied, StoreError> {
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(pool)
        .await?;
    Ok(Copied {
        in_wal: row.try_get(1)?,
        copied: row.try_get(2)?,
    })
}

#[cfg(test)]
mod tests;
