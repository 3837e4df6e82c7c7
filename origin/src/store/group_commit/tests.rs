//! The writer's promises on a real SQLite store: writes run in the order they asked, a
//! request's waits behind at most one of the background's, the writes in line together
//! share one commit and a failed one spoils none, and a writer is answered only once
//! its batch has committed — one dropped in line never writes, one whose batch never
//! commits is never answered with success.

use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::ConnectOptions as _;
use sqlx::Sqlite;
use tokio::sync::MutexGuard;
use tokio::task::JoinHandle;

use super::batch::Batch;

use crate::store::sqlite::{in_folder, SqliteStore};
use crate::store::{Store as _, StoreError, User};

const WRITERS: i64 = 40;

async fn store(dir: &tempfile::TempDir) -> (Arc<SqliteStore>, String) {
    let (store, file) = in_folder(dir, "group-commit.sqlite3", Duration::from_secs(5)).await;
    (Arc::new(store), file.display().to_string())
}

fn user(n: i64) -> User {
    User {
        id: format!("id-{n}"),
        username: format!("user-{n}"),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
    }
}

/// Inserts user `n` at time `n`, on a task of its own.
fn insert(store: &Arc<SqliteStore>, n: i64) -> JoinHandle<Result<(), StoreError>> {
    let store = store.clone();
    tokio::spawn(async move { store.insert_user(&user(n), n).await })
}

/// The `created_at` of every user committed, in the order the rows were written, read
/// on a connection of its own.
async fn written_order(file: &str) -> Vec<i64> {
    let mut db = SqliteConnectOptions::new()
        .filename(file)
        .connect()
        .await
        .expect("the database");
    sqlx::query_scalar("SELECT created_at FROM users ORDER BY rowid")
        .fetch_all(&mut db)
        .await
        .expect("the users")
}

/// Lets the spawned tasks run until each waits for something.
async fn settle_tasks() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

/// The turn, held with the batch that the writers `queue` spawns left open, before
/// its commit: held while they queue, given up, and taken again behind them — before
/// the committer, which is woken only once the first of them is done.
async fn behind<T>(
    store: &SqliteStore,
    queue: impl FnOnce() -> T,
) -> (MutexGuard<'_, Batch<Sqlite>>, T) {
    let ahead = writer(store).hold().await;
    let queued = queue();
    settle_tasks().await;
    drop(ahead);
    (writer(store).hold().await, queued)
}

fn writer(store: &SqliteStore) -> &super::GroupCommit<Sqlite> {
    store.writer.as_deref().expect("SQLite has a writer")
}

#[tokio::test(flavor = "current_thread")]
async fn writers_commit_one_at_a_time_in_the_order_they_asked() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    // Spawned in order on one thread, each reaches its turn in that order.
    let writers: Vec<_> = (0..WRITERS).map(|n| insert(&store, n)).collect();
    for writer in writers {
        writer.await.expect("the task").expect("the write");
    }
    assert_eq!(written_order(&file).await, (0..WRITERS).collect::<Vec<_>>());
}

#[tokio::test(flavor = "current_thread")]
async fn a_writer_is_answered_only_after_its_commit_and_one_dropped_in_line_never_writes() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    let ahead = writer(&store).hold().await;
    let waiting = insert(&store, 1);
    let dropped = insert(&store, 2);
    // Reads do not wait for the turn.
    let read = tokio::time::timeout(Duration::from_secs(5), store.user_by_name("user-1")).await;
    assert!(matches!(read, Ok(Ok(None))), "{read:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "answered before its turn came");
    assert!(
        written_order(&file).await.is_empty(),
        "written before its turn"
    );
    dropped.abort();
    assert!(dropped.await.is_err_and(|err| err.is_cancelled()));
    drop(ahead);
    waiting.await.expect("the task").expect("the write");
    assert_eq!(
        written_order(&file).await,
        vec![1],
        "the dropped writer wrote nothing"
    );
    assert!(store
        .user_by_name("user-2")
        .await
        .expect("a read")
        .is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn a_request_waits_behind_at_most_one_background_write() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, _) = store(&dir).await;
    let ahead = writer(&store).hold().await;
    // Three purges in the background lane, then a request's nonce, stale for each of
    // them: what each purge removes tells where the request's write went.
    let purges: Vec<_> = (0..3)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.purge_edge_nonces(10).await })
        })
        .collect();
    settle_tasks().await;
    let request = tokio::spawn({
        let store = store.clone();
        async move { store.first_use_of_nonce("request", 5).await }
    });
    settle_tasks().await;
    drop(ahead);
    assert!(matches!(request.await.expect("the task"), Ok(true)));
    let mut removed = Vec::new();
    for purge in purges {
        removed.push(purge.await.expect("the task").expect("the purge"));
    }
    assert_eq!(
        removed,
        [0, 1, 0],
        "the request went behind the one background write in line, not all three"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn writes_in_line_together_share_one_commit_and_a_failed_one_spoils_none() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    store.insert_user(&user(0), 0).await.expect("user 0");
    let (batch, ((first, duplicate, second), sees_first)) = behind(&store, || {
        // In this order: the password's change comes after user 1's insert.
        let inserts = (insert(&store, 1), insert(&store, 0), insert(&store, 2));
        let sees_first = tokio::spawn({
            let store = store.clone();
            async move { store.set_password_hash("user-1", "$argon2id$new", 3).await }
        });
        (inserts, sees_first)
    })
    .await;
    assert!(batch.is_open(), "the four writes left one batch open");
    settle_tasks().await;
    // The failed write waits too: what it found (user 0) might have been the batch's.
    for waiting in [&first, &duplicate, &second] {
        assert!(!waiting.is_finished(), "answered before the commit");
    }
    assert!(!sees_first.is_finished(), "answered before the commit");
    assert_eq!(
        written_order(&file).await,
        vec![0],
        "nothing of the batch is visible before its commit"
    );
    drop(batch);
    first.await.expect("the task").expect("the first write");
    second.await.expect("the task").expect("the second write");
    let failed = duplicate.await.expect("the task");
    assert!(
        matches!(failed, Err(StoreError::DuplicateUser)),
        "{failed:?}"
    );
    let updated = sees_first.await.expect("the task");
    assert!(
        matches!(updated, Ok(true)),
        "a write sees the batch's earlier writes: {updated:?}"
    );
    assert_eq!(written_order(&file).await, vec![0, 1, 2]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_batch_that_never_commits_answers_none_of_its_writers_with_success() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    let (mut batch, (lost, refused)) =
        behind(&store, || (insert(&store, 1), insert(&store, 1))).await;
    // What a crash does to a batch written but not committed: it is rolled back.
    assert!(batch.is_open(), "the writes wait in an open batch");
    batch.start_roll_back();
    drop(batch);
    for writer in [lost, refused] {
        let answer = writer.await.expect("the task");
        assert!(
            matches!(answer, Err(StoreError::NotCommitted(_))),
            "neither the write nor the refusal it caused stands: {answer:?}"
        );
    }
    assert!(written_order(&file).await.is_empty());
    insert(&store, 2)
        .await
        .expect("the task")
        .expect("the next write opens a batch of its own");
    assert_eq!(written_order(&file).await, vec![2]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_writer_dropped_while_it_waits_for_the_commit_is_committed_with_its_batch() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    let (batch, gone) = behind(&store, || insert(&store, 1)).await;
    gone.abort();
    assert!(gone.await.is_err_and(|err| err.is_cancelled()));
    drop(batch);
    insert(&store, 2).await.expect("the task").expect("a write");
    assert_eq!(
        written_order(&file).await,
        vec![1, 2],
        "its write was done: it commits, unanswered, like an answer lost on the way"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_connection_out_of_step_with_its_transaction_is_opened_again_not_trusted() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    let (mut batch, lost) = behind(&store, || insert(&store, 1)).await;
    // SQLite ends the transaction by itself, as on a full disk, unknown to sqlx's
    // count of the connection's depth: trusted, the next `BEGIN` would be a savepoint
    // and its commit a release, answered but never committed.
    batch.end_unseen().await;
    drop(batch);
    let answer = lost.await.expect("the task");
    assert!(
        matches!(answer, Err(StoreError::NotCommitted(_))),
        "{answer:?}"
    );
    for n in [2, 3] {
        insert(&store, n).await.expect("the task").expect("a write");
    }
    assert_eq!(
        written_order(&file).await,
        vec![2, 3],
        "the writes after it committed, on a connection opened again"
    );
}
