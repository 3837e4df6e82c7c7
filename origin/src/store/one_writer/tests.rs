//! The queue's promises on a real SQLite store: writers commit in the order they asked,
//! a request's write waits behind at most one of the background's, and a writer is
//! answered only once its own write has committed — one dropped while it waits never
//! writes.

use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::ConnectOptions as _;

use super::OneWriter;
use crate::store::sqlite::{in_folder, SqliteStore};
use crate::store::{Store as _, User};

const WRITERS: i64 = 40;

async fn store(dir: &tempfile::TempDir) -> (Arc<OneWriter<SqliteStore>>, String) {
    let (inner, file) = in_folder(dir, "one-writer.sqlite3", Duration::from_secs(5)).await;
    (Arc::new(OneWriter::new(inner)), file.display().to_string())
}

fn user(n: i64) -> User {
    User {
        id: format!("id-{n}"),
        username: format!("user-{n}"),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
    }
}

/// The `created_at` of every user, in the order the rows were written.
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

#[tokio::test(flavor = "current_thread")]
async fn writers_commit_one_at_a_time_in_the_order_they_asked() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    // Spawned in order on one thread, each reaches its turn in that order; the pool's
    // eight connections would otherwise race for SQLite's lock.
    let writers: Vec<_> = (0..WRITERS)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move { store.insert_user(&user(n), n).await })
        })
        .collect();
    for writer in writers {
        writer.await.expect("the task").expect("the write");
    }
    assert_eq!(written_order(&file).await, (0..WRITERS).collect::<Vec<_>>());
}

#[tokio::test(flavor = "current_thread")]
async fn a_writer_is_answered_only_after_its_commit_and_one_dropped_in_line_never_writes() {
    let dir = tempfile::tempdir().expect("a folder");
    let (store, file) = store(&dir).await;
    let ahead = store.turn.lock().await;
    let waiting = tokio::spawn({
        let store = store.clone();
        async move { store.insert_user(&user(1), 1).await }
    });
    let dropped = tokio::spawn({
        let store = store.clone();
        async move { store.insert_user(&user(2), 2).await }
    });
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
    let (store, file) = store(&dir).await;
    let done = Arc::new(std::sync::Mutex::new(Vec::new()));
    let finished = |name: String| {
        let done = done.clone();
        move || done.lock().expect("the list").push(name)
    };
    let ahead = store.turn.lock().await;
    let mut writers = Vec::new();
    for n in 0..3 {
        let (store, finished) = (store.clone(), finished(format!("background {n}")));
        writers.push(tokio::spawn(async move {
            store.purge_edge_nonces(n).await.map(|_| finished())
        }));
        tokio::task::yield_now().await;
    }
    let (request, finished_request) = (store.clone(), finished("request".into()));
    writers.push(tokio::spawn(async move {
        request
            .insert_user(&user(1), 1)
            .await
            .map(|()| finished_request())
    }));
    tokio::task::yield_now().await;
    drop(ahead);
    for writer in writers {
        writer.await.expect("the task").expect("the write");
    }
    assert_eq!(
        *done.lock().expect("the list"),
        ["background 0", "request", "background 1", "background 2"],
        "the request went behind the one background write in line, not all three"
    );
    assert_eq!(written_order(&file).await, vec![1]);
}
